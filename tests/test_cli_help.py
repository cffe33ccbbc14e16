"""The ``--help`` of every command: quick (no data stack imported), complete (a whole
description and an example), one program name in every usage line, and a command list
that shows only what a user types."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from test_readme_commands import Block, all_blocks, command_lines, gpubench_argv

from gpubench import cli, cli_parsers

#: what the report and compare import; ``--help`` needs none of it
HEAVY = ("pandas", "numpy", "matplotlib", "plotly", "scipy")
#: the commands the workflow's scripts call, not a user
INTERNAL = ("step", "collect", "build-env", "mpi-step", "mpi-collect")

PROBE = """
import json, sys
from gpubench.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def heavy_imports(argv: list[str]) -> list[str]:
    """The heavy modules that ``gpubench ARGV`` has imported by the time it exits, in a
    fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: gpubench"), out.stdout[:200]
    return json.loads(out.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], *([c, "--help"] for c in cli.USER_COMMANDS)],
                         ids=lambda argv: " ".join(argv))
def test_help_imports_no_data_stack(argv):
    assert heavy_imports(argv) == [], f"gpubench {' '.join(argv)} imports them"


def test_the_import_check_can_fail():
    """A command that does its work imports the stack, and the check sees it."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), "schema"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pandas" in json.loads(out.stderr.strip().splitlines()[-1])


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code in (0, None)
    return capsys.readouterr().out


def test_the_command_list_shows_the_user_commands_only(capsys):
    text = help_text(["--help"], capsys)
    assert text.startswith("usage: gpubench ")
    usage, section = text.splitlines()[0], text.split("\ncommands:\n", 1)[1].split("\n\n")[0]
    listed = {line.split()[0] for line in section.splitlines() if line.startswith("    ")
              and not line.startswith("     ")}
    assert listed == set(cli.USER_COMMANDS), text
    for name in INTERNAL:
        assert not re.search(rf"(?<![\w-]){name}(?![\w-])", usage + section), (name, text)
    assert set(INTERNAL) <= set(cli.COMMANDS) - set(cli.USER_COMMANDS)


@pytest.mark.parametrize("command", INTERNAL)
def test_internal_commands_stay_callable(command, capsys):
    assert help_text([command, "--help"], capsys).startswith(f"usage: gpubench {command} ")


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_usage_line_names_gpubench_and_the_command(command, capsys):
    text = help_text([command, "--help"], capsys)
    assert text.startswith(f"usage: gpubench {command} "), text.splitlines()[0]


@pytest.mark.parametrize("command", cli.USER_COMMANDS)
def test_user_help_is_whole_and_ends_with_an_example(command, capsys):
    text = help_text([command, "--help"], capsys)
    description = text.split("\n\n")[1]
    assert description.rstrip().endswith("."), f"cut short: {description!r}"
    epilog = text.rsplit("\noptions:\n", 1)[1].split("\n\n", 1)[1]
    assert "example" in epilog.splitlines()[0], epilog
    assert f"  gpubench {command}" in epilog, epilog


def test_unknown_or_missing_commands_exit_2(capsys):
    assert cli.main(["reprot"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'reprot'" in err and "step" not in err.split("usage:", 1)[-1]
    assert cli.main([]) == 2
    assert "usage: gpubench" in capsys.readouterr().err


# -- the documented commands write under results/ (or another ignored folder) -------------


def written_files(argv: list[str]) -> list[str]:
    """The files ``gpubench ARGV`` writes, defaults included (report, compare, probe)."""
    command, rest = argv[0], argv[1:]
    if command == "report":
        args = cli_parsers.report_parser().parse_args(rest)
        return [p for p in (args.html, args.md, args.figures) if p]
    if command == "compare":
        args = cli_parsers.compare_parser().parse_args(rest)
        return [p for p in (args.html, args.md) if p]
    if command == "probe" and "--out" in rest:
        return [rest[rest.index("--out") + 1]]
    return []


def stray_outputs(blocks: list) -> list[str]:
    """Files the blocks' gpubench commands write in the clone that git neither ignores
    nor tracks (they would show up as untracked beside the sources); a path with a shell
    variable or a wildcard is not judged."""
    problems = []
    for b in blocks:
        cwd = ROOT
        for line in b.commands().splitlines():
            if line.strip().startswith("cd "):
                cwd = ROOT / line.split()[1]
        for words in command_lines(b.commands()):
            argv = gpubench_argv(words)
            if not argv:
                continue
            for out in written_files(argv):
                if "$" in out or "*" in out:
                    continue
                path = (cwd / out).resolve()
                if not path.is_relative_to(ROOT.resolve()):
                    continue  # outside the clone
                rel = str(path.relative_to(ROOT.resolve()))
                ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", rel],
                                         cwd=ROOT).returncode == 0
                tracked = subprocess.run(["git", "ls-files", "--error-unmatch", rel],
                                         cwd=ROOT, capture_output=True).returncode == 0
                if not (ignored or tracked):
                    problems.append(f"{b.where}: {' '.join(words[:2])} writes {rel}")
    return problems


def test_documented_commands_write_under_ignored_folders():
    problems = stray_outputs(all_blocks())
    assert not problems, "\n".join(problems)


def test_the_output_check_fails_a_file_in_the_root():
    block = Block("docs/x.md", 1, "bash", "run", "", "gpubench compare --base a --new b "
                  "--html compare.html\ngpubench compare --base a --new b")
    assert stray_outputs([block]) == ["docs/x.md:1: gpubench compare writes compare.html"]


def test_compare_writes_under_results_by_default(tmp_path, monkeypatch):
    """Without --html the page goes to results/compare/, and the results folder it
    creates is marked, so that a later `gpubench run` into it is not refused."""
    from report_data import write_set

    from gpubench import safety

    write_set(tmp_path / "base")
    write_set(tmp_path / "new")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["compare", "--base", "base", "--new", "new", "--jobs", "1"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "new", "results"]
    assert (tmp_path / cli_parsers.COMPARE_HTML).is_file()
    safety.check_results_folder(tmp_path / "results")  # raises for an unmarked folder
