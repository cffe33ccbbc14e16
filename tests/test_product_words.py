"""The product speaks of itself only: no words of how it was built.

Code, docs, config, tests, tools and evidence describe what the project does and what
its measurements show today. How it got there (development session numbers, issue
numbers, folders named after them) is the version history's to keep, not the tree's.
This test fails on, in any tracked text file:

- a development session by number: the word *session* or *sessions* followed by a number,
  with or without a space or ``#`` between them (the word alone stays free for its
  technical senses: a process session, ``setsid``, a SLURM or Python session);
- an issue by number: *issue* or *issues* followed by a number the same way;
- the former evidence folders named after development rounds (*perf*, *refactor* or
  *cpu* glued to two digits) and references to the development notes (``notes/…``);

and on any tracked path under ``evidence/`` that names a session, an issue, a
refactoring or a performance round.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUM = r"\s*#?\d"
#: what no tracked text may say (case-insensitive), each with the reason shown on failure
FORBIDDEN = {
    "a development session by number": re.compile(r"\bsessions?" + NUM, re.I),
    "an issue by number": re.compile(r"\bissues?" + NUM, re.I),
    "a folder named after a development round": re.compile(
        r"\b(?:perf|refactor|cpu)\d{2}\b", re.I),
    "the development notes": re.compile(r"(?<![\w.-])notes/\w"),
}
#: what no tracked path under evidence/ may name (the acceptance's grep)
EVIDENCE_NAME = re.compile(r"session|issue|refactor|perf[0-9]", re.I)
#: this file, the one place that spells out what is forbidden
SELF = "tests/test_product_words.py"
#: compressed or binary files, which hold no prose
BINARY_SUFFIXES = (".gz", ".xz", ".tgz", ".tar", ".png", ".jpg", ".pdf", ".whl")


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: no tracked files to read")
    return [p for p in out.stdout.split("\0") if p and (ROOT / p).is_file()]


def text_of(path: str) -> str | None:
    if path.endswith(BINARY_SUFFIXES):
        return None
    data = (ROOT / path).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def offences(path: str, text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for why, pattern in FORBIDDEN.items():
            m = pattern.search(line)
            if m:
                found.append(f"{path}:{number}: {why}: {m.group(0)!r} in {line.strip()[:120]!r}")
    return found


def test_no_tracked_text_speaks_of_how_the_project_was_built() -> None:
    problems = []
    for path in tracked():
        text = None if path == SELF else text_of(path)
        if text is not None:
            problems += offences(path, text)
    assert problems == [], "\n".join(problems[:40])


def test_no_evidence_path_is_named_after_a_session_or_an_issue() -> None:
    names = [p for p in tracked() if p.startswith("evidence/") and EVIDENCE_NAME.search(p)]
    assert names == [], names[:20]


#: the forbidden words, spelled apart so that this file does not hold what it forbids
SESSION, ISSUE = "sess" + "ion", "iss" + "ue"


@pytest.mark.parametrize("line", [
    f"measured in {SESSION} 41", f"{SESSION}41/README.md", f"{SESSION}s 33 to 36 showed",
    f"{SESSION.title()} 40's run", f"see {ISSUE} 27", f"{ISSUE} #8", f"{ISSUE}s 23 and 27",
    f"evidence/{ISSUE}28", "evidence/perf" + "27/best.yaml", "cpu" + "26's rows",
    "refactor" + "29", "notes" + "/mpi_contract.md",
])
def test_the_guard_catches_each_form(line: str) -> None:
    assert offences("x.md", line), line


@pytest.mark.parametrize("line", [
    "started in a session of its own (setsid)", "os.setsid()", "a SLURM session",
    "one Python session", "the pytest session's fixtures", "an issue-bound kernel",
    "known issues: none", "cpu_cores: 16", "a cpu-suite run", "performance 27 %",
    "its footnotes/ folder",
])
def test_the_guard_leaves_technical_words_alone(line: str) -> None:
    assert offences("x.md", line) == [], line
