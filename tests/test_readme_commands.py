"""Every command in the READMEs is run by the tests, or says why not.

Each fenced shell block (```bash, ```sh, ```shell, ```console) of README.md,
config/README.md, the documentation (docs/*.md), the tools' READMEs and the evidence
READMEs (evidence/README.md, evidence/*/README.md) has a mark on the line before it:

- ``<!-- test: run ... -->``: run here, in a fresh clone of the working tree, in the
  order of the files (README.md first, then config/README.md, docs/, tools/, evidence/),
  from the clone's root, with this test's
  interpreter's venv as the clone's ``.venv`` (nothing is installed) and
  ``GPUBENCH_CONFIGFILE=".test/config/config.yaml tests/readme_config.yaml"`` (the
  tiny sizes, no MPI steps, for `make run`);
- ``<!-- test: covered by tests/FILE.py::TEST — why -->``: that test runs the same
  thing (it is checked to exist);
- ``<!-- test: skip — why -->``: needs a GPU, SLURM, the network, or is this suite.

A block without a mark fails :func:`test_every_shell_block_is_marked`. Every ``gpubench``
command in any block, run or not, is parsed with that command's own options
(:func:`test_gpubench_commands_in_the_readmes_parse`), so a renamed flag or command fails
in seconds; the run blocks then fail for real in the clone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHELLS = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^\s*```(\S*)\s*$")
MARK = re.compile(r"^<!-- test: (run|skip|covered by)\b(.*?)-->\s*$")
COVERED = re.compile(r"^\s*(tests/[\w/]+\.py)::(\w+)")
#: the configuration the run blocks get through GPUBENCH_CONFIGFILE (gpubench run): the
#: tiny sizes, with the README's results/ and logs/ folders
TINY = ".test/config/config.yaml tests/readme_config.yaml"


@dataclass
class Block:
    file: str  # relative to the root
    line: int  # of the opening fence, 1-based
    lang: str
    mark: str | None  # run, skip, covered by
    why: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def commands(self) -> str:
        """The shell text: a console block's ``$ `` lines, else the whole block."""
        if self.lang != "console":
            return self.text
        return "\n".join(line[2:] for line in self.text.splitlines() if line.startswith("$ "))


def readmes(root: Path = ROOT) -> list[Path]:
    """The files whose shell blocks are marked, in the order their run blocks run: the
    README first (its `make run` makes the results the others read)."""
    files = [root / "README.md", root / "config" / "README.md",
             *sorted((root / "docs").glob("*.md")),
             *sorted((root / "tools").glob("**/README.md")),
             root / "evidence" / "README.md",
             *sorted((root / "evidence").glob("*/README.md"))]
    return [f for f in files if f.exists()]


def shell_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1).lower()
        i += 1
        body = []
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        if lang not in SHELLS:
            continue
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(prev.strip())
        blocks.append(Block(str(path.relative_to(root)), start + 1, lang,
                            mark.group(1) if mark else None,
                            mark.group(2).strip(" —-:") if mark else "", "\n".join(body)))
    return blocks


def all_blocks(root: Path = ROOT) -> list[Block]:
    return [b for f in readmes(root) for b in shell_blocks(f, root)]


def test_the_readmes_have_shell_blocks():
    blocks = all_blocks()
    assert len(blocks) >= 10 and any(b.mark == "run" for b in blocks)


def test_every_shell_block_is_marked():
    problems = []
    for b in all_blocks():
        if b.mark is None:
            problems.append(f"{b.where}: no <!-- test: run | skip — why | covered by "
                            "tests/FILE.py::TEST — why --> on the line before the block")
        elif b.mark == "skip" and len(b.why) < 10:
            problems.append(f"{b.where}: a skipped block says why")
        elif b.mark == "covered by":
            m = COVERED.match(b.why)
            if not m:
                problems.append(f"{b.where}: 'covered by' names tests/FILE.py::TEST")
                continue
            test_file = ROOT / m.group(1)
            if not test_file.exists() or not re.search(
                    rf"^def {m.group(2)}\(", test_file.read_text(), re.M):
                problems.append(f"{b.where}: {m.group(1)}::{m.group(2)} does not exist")
    assert not problems, "\n".join(problems)


def test_the_mark_check_fails_an_unmarked_block(tmp_path):
    """The check above can fail: a block without a mark, one with a bare skip."""
    (tmp_path / "README.md").write_text(
        "# x\n\n```bash\nmake run\n```\n\n<!-- test: skip -->\n```sh\nls\n```\n\n"
        "<!-- test: run -->\n```console\n$ echo hi\nhi\n```\n")
    blocks = all_blocks(tmp_path)
    assert [b.mark for b in blocks] == [None, "skip", "run"]
    assert blocks[1].why == "" and blocks[2].commands() == "echo hi"


# -- every gpubench command parses with its command's options ---------------------------


def command_lines(text: str) -> list[list[str]]:
    """Each command of a block as argv words: continuation lines joined, comments, `cd`
    lines and variable assignments dropped, `&&` and `;` splitting commands."""
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        for part in re.split(r"&&|;|\|", line):
            words = shlex.split(part, comments=True)
            while words and re.match(r"^[A-Z_]+=", words[0]):
                words = words[1:]
            if words:
                out.append(words)
    return out


def gpubench_argv(words: list[str]) -> list[str] | None:
    """The arguments after ``gpubench`` (``.venv/bin/gpubench``, ``python -m
    gpubench``), or None for another command."""
    if Path(words[0]).name == "gpubench":
        return words[1:]
    if len(words) > 2 and Path(words[0]).name.startswith("python") and words[1:3] == [
            "-m", "gpubench"]:
        return words[3:]
    return None


def check_gpubench_args(argv: list[str]) -> None:
    """Parse ``gpubench ARGV`` with the command's own parser (SystemExit on a wrong
    flag or command); runs nothing."""
    from gpubench import cli
    from gpubench.report import compare, make_parser

    command, rest = argv[0], argv[1:]
    assert command in cli.USER_COMMANDS, f"gpubench {command}: not a user command"
    if command == "run":
        cli.snakemake_command(rest, cwd=ROOT)
    elif command == "report":
        make_parser().parse_args(rest)
    elif command == "compare":
        compare.make_parser().parse_args(rest)


def test_gpubench_commands_in_the_readmes_parse():
    checked, problems = 0, []
    for b in all_blocks():
        for words in command_lines(b.commands()):
            argv = gpubench_argv(words)
            if argv is None:
                continue
            checked += 1
            try:
                check_gpubench_args(argv)
            except (SystemExit, AssertionError) as exc:
                problems.append(f"{b.where}: {shlex.join(words)}: {exc}")
    assert not problems, "\n".join(problems)
    assert checked >= 8


def test_the_parse_check_fails_a_renamed_flag():
    with pytest.raises(SystemExit):
        check_gpubench_args(["report", "--timings", "t.csv", "--env", "h.json",
                             "--html", "i.html", "--markdown", "s.md"])
    with pytest.raises(SystemExit):
        check_gpubench_args(["run", "--profile", "nowhere"])
    with pytest.raises(AssertionError):
        check_gpubench_args(["reprot", "--timings", "t.csv"])


# -- the run blocks, in a fresh clone -----------------------------------------------------


def fresh_clone(dest: Path) -> Path:
    """A clone of this working tree: the committed tree, then the uncommitted changes
    (modified and new files that git does not ignore, deletions)."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(dest)],
                   check=True)

    def listed(*flags: str) -> list[str]:
        out = subprocess.run(["git", "ls-files", "-z", *flags], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        return [p for p in out.split("\0") if p]

    deleted = set(listed("--deleted"))
    for rel in listed("--modified", "--others", "--exclude-standard"):
        if rel in deleted or not (ROOT / rel).is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    for rel in deleted:
        (dest / rel).unlink(missing_ok=True)
    return dest


def borrowed_venv(clone: Path, venv: Path) -> Path:
    """``clone/.venv``: this interpreter's venv, entry by entry (symlinks), with fresh
    install markers so that make installs nothing."""
    target = clone / ".venv"
    target.mkdir()
    for entry in venv.iterdir():
        if not entry.name.startswith(".installed"):
            (target / entry.name).symlink_to(entry)
    for marker in (".installed-run", ".installed"):
        (target / marker).touch()
    return target


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    venv = Path(sys.prefix)
    if venv == Path(sys.base_prefix):
        pytest.fail("run the tests in the project's venv (make test)")
    dest = fresh_clone(tmp_path_factory.mktemp("readme") / "gpubench")
    borrowed_venv(dest, venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MAKEFLAGS",
                                                           "MAKELEVEL", "MFLAGS")}
    env.update(PATH=f"{dest / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               VIRTUAL_ENV=str(dest / ".venv"), GPUBENCH_CONFIGFILE=TINY,
               # the clone's code, not this tree's (the venv's editable install)
               PYTHONPATH=str(dest / "src"), PYTHONWARNINGS="")
    # what every tracked file holds before the blocks run (kept beside the clone's git
    # data, outside its tree): test_run_blocks_leave_the_tracked_files_as_they_were
    (dest / ".git" / "gpubench-tracked.json").write_text(json.dumps(tracked_digests(dest)))
    return dest, env


def tracked_digests(root: Path) -> dict[str, str]:
    """{path: sha256} of every file git tracks under ``root``."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return {p: hashlib.sha256((root / p).read_bytes()).hexdigest()
            for p in out.split("\0") if p and (root / p).is_file()}


RUN_BLOCKS = [b for b in all_blocks() if b.mark == "run"]


@pytest.mark.workflow
@pytest.mark.parametrize("block", RUN_BLOCKS, ids=[b.where for b in RUN_BLOCKS])
def test_readme_block_runs_in_a_fresh_clone(block, clone):
    """The run blocks in order, each from the clone's root: make run first, then what
    uses its results."""
    dest, env = clone
    out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.commands()],
                         cwd=dest, env=env, capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, (
        f"{block.where} failed (exit {out.returncode}):\n{block.commands()}\n"
        f"--- stdout\n{out.stdout[-3000:]}\n--- stderr\n{out.stderr[-3000:]}")


@pytest.mark.workflow
def test_run_blocks_leave_the_tracked_files_as_they_were(clone):
    """After every run block (the evidence READMEs' rebuilds among them), each tracked
    file holds what it held before: a committed summary, figure or table that its
    README's command no longer reproduces at this commit fails here."""
    dest, _ = clone
    before = json.loads((dest / ".git" / "gpubench-tracked.json").read_text())
    after = tracked_digests(dest)
    changed = sorted(p for p in before if after.get(p) != before[p])
    assert changed == [], f"the README commands rewrote tracked files: {changed}"
