"""Every relative link of the documentation resolves: to a file or folder of the
repository, and, with a ``#anchor``, to a heading of the Markdown page it names.

The documentation is every tracked ``README.md`` (the front page, config/, tools/,
evidence/) and ``docs/*.md``; the reports the evidence keeps (``summary.md`` and the
like) are output, rebuilt by their READMEs' commands, and not read here. Anchors are
named as GitHub names them: the heading's text, lower case, without punctuation, spaces
as hyphens, a repeated heading numbered ``-1``, ``-2``. There is no network here, so
links to other sites are not followed.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^\s*(```|~~~)")
#: an inline link or image: [text](target) or ![alt](target), target without spaces
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)


def documentation(root: Path = ROOT) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z", "--", "*README.md", "docs/*.md"],
                         cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"{root} is not a git checkout")
    return [root / p for p in out.stdout.split("\0") if p and (root / p).is_file()]


def prose(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with inline code spans blanked out."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, re.sub(r"`[^`]*`", "``", line)))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2).replace("``", ""))
            n = seen.get(base, 0)
            found.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        found.update(a.lower() for a in HTML_ANCHOR.findall(line))
    # headings hold code spans; read them from the raw text too
    for line in path.read_text(encoding="utf-8").splitlines():
        m = HEADING.match(line)
        if m and "`" in m.group(2):
            found.add(slug(m.group(2)))
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    text = path.read_text(encoding="utf-8")
    raw = text.splitlines()
    for number, _ in prose(text):
        line = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), raw[number - 1])
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto: ...
                continue
            file_part, _, anchor = target.partition("#")
            where = f"{path.relative_to(root)}:{number}: {target}"
            dest = (path.parent / unquote(file_part)).resolve() if file_part else path
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
            if root.resolve() not in (dest, *dest.parents):
                problems.append(f"{where}: outside the repository")
                continue
            if anchor and dest.suffix == ".md" and unquote(anchor).lower() not in anchors(dest):
                problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
    return problems


def test_the_documentation_is_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in documentation()}
    assert {"README.md", "docs/measurement.md", "docs/slurm.md", "config/README.md",
            "evidence/README.md", "tools/README.md"} <= names


def test_every_relative_link_and_anchor_resolves() -> None:
    problems = [p for path in documentation() for p in broken_links(path)]
    assert problems == [], "\n".join(problems)


def test_the_check_fails_a_broken_link_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# B page\n\n## Two words, `code` too\n")
    page = tmp_path / "README.md"
    page.write_text("# A\n\n[ok](docs/b.md#two-words-code-too) [ok](#a) [web](https://x.org)\n"
                    "[gone](docs/c.md) [bad](docs/b.md#nothing) [bad](#nowhere)\n"
                    "```\n[in code](nowhere.md)\n```\n`[in a span](nowhere.md)`\n")
    problems = broken_links(page, tmp_path)
    assert len(problems) == 3, problems
    assert any("docs/c.md: no such file" in p for p in problems)
    assert any("#nothing" in p for p in problems) and any("#nowhere" in p for p in problems)


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Quick start", "quick-start"), ("What the workflow does", "what-the-workflow-does"),
    ("Each framework's best, as % of the copy ceiling",
     "each-frameworks-best-as--of-the-copy-ceiling"),
    ("Rows not `ok`", "rows-not-ok"), ("MPI + GPU jobs (the workshop book, chapter 9)",
                                        "mpi--gpu-jobs-the-workshop-book-chapter-9"),
])
def test_anchors_are_named_as_github_names_them(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
