"""The ``gpubench`` command: installed into the venv, its subcommands, ``gpubench run``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_readme_commands import (
    borrowed_venv,
    check_gpubench_args,
    command_lines,
    fresh_clone,
    gpubench_argv,
)

from gpubench import cli

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: an environment in which only an installed gpubench can be imported
NO_SRC = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def installed_command() -> str:
    exe = shutil.which("gpubench", path=str(BIN))
    assert exe, (f"no gpubench command in {BIN}: the project is not installed "
                 "(make .venv/.installed-run runs `pip install --no-deps -e .`)")
    return exe


def test_the_console_script_is_installed_and_imports_without_src(tmp_path):
    out = subprocess.run([installed_command(), "--help"], cwd=tmp_path, env=NO_SRC,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    listed = {line.split()[0] for line in out.stdout.splitlines() if line.startswith("    ")}
    assert set(cli.USER_COMMANDS) <= listed, out.stdout


def test_python_m_gpubench_works_too(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpubench", "schema"], cwd=tmp_path,
                         env=NO_SRC, capture_output=True, text=True)
    assert out.returncode == 0 and "| `backend` |" in out.stdout, out.stderr
    out = subprocess.run([sys.executable, "-m", "gpubench", "reprot"], cwd=tmp_path,
                         env=NO_SRC, capture_output=True, text=True)
    assert out.returncode == 2 and "unknown command 'reprot'" in out.stderr


def test_pyproject_declares_the_script():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["gpubench"] == "gpubench.cli:main"


def example_commands(text: str) -> str:
    """The command lines of an epilog (each starting with ``gpubench``, with its
    continuation lines), without the prose around them."""
    keep, going = [], False
    for line in text.splitlines():
        if line.strip().startswith("gpubench ") or going:
            keep.append(line)
            going = line.rstrip().endswith("\\")
    return "\n".join(keep)


@pytest.mark.parametrize("command", cli.USER_COMMANDS)
def test_each_commands_help_has_a_working_example(command):
    out = subprocess.run([installed_command(), command, "--help"], env=NO_SRC,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "example" in out.stdout and f"gpubench {command}" in out.stdout
    examples = [words for words in command_lines(example_commands(cli.EXAMPLES[command]))
                if gpubench_argv(words) is not None]
    assert examples
    for words in examples:
        check_gpubench_args(gpubench_argv(words))  # SystemExit on an unknown flag


def test_the_workflow_scripts_import_the_installed_package(tmp_path):
    scripts = sorted((ROOT / "workflow" / "scripts").glob("*.py"))
    assert scripts
    patched = [p.name for p in scripts if "sys.path" in p.read_text()]
    assert not patched, f"scripts that patch sys.path: {patched}"
    assert "sys.path" not in (ROOT / "workflow" / "rules" / "common.smk").read_text()
    out = subprocess.run([sys.executable, str(ROOT / "workflow" / "scripts" / "probe.py"),
                          "--help"], cwd=tmp_path, env=NO_SRC, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr


# -- gpubench run -------------------------------------------------------------------------


def snake(argv: list[str], monkeypatch=None) -> list[str]:
    cmd = cli.snakemake_command(argv, cwd=ROOT)
    assert cmd[:3] == [sys.executable, "-m", "snakemake"]
    return cmd[3:]


def test_run_builds_the_snakemake_command(monkeypatch):
    monkeypatch.delenv(cli.CONFIG_VAR, raising=False)
    assert snake([]) == ["--profile", "profiles/local"]
    assert snake(["--profile", "slurm"]) == ["--profile", "profiles/slurm"]
    assert snake(["--backends", "numpy-cpu", "torch-cpu", "--configfile", "a.yaml"]) == [
        "--config", "backends=[numpy-cpu,torch-cpu]", "--profile", "profiles/local",
        "--configfile", "a.yaml"]
    assert snake(["--backends", "numpy-cpu,jax-cpu", "-n", "--", "--forcerun", "x"]) == [
        "--config", "backends=[numpy-cpu,jax-cpu]", "--profile", "profiles/local",
        "--dry-run", "--forcerun", "x"]
    # one --config: Snakemake keeps only the last, so the backends join the user's
    assert snake(["--backends", "numpy-cpu", "--config", "results_dir=r"]) == [
        "--profile", "profiles/local", "--config", "backends=[numpy-cpu]", "results_dir=r"]
    assert snake(["--profile", "profiles/slurm-one-change"]) == [
        "--profile", "profiles/slurm-one-change"]
    monkeypatch.setenv(cli.CONFIG_VAR, "tiny.yaml site.yaml")
    assert snake([]) == ["--profile", "profiles/local", "--configfile", "tiny.yaml",
                         "site.yaml"]
    assert snake(["--configfile", "mine.yaml"])[-1] == "mine.yaml"


def test_run_refuses_an_unknown_profile_and_a_folder_without_the_workflow(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.snakemake_command(["--profile", "slrum"], cwd=ROOT)
    assert exc.value.code == 2 and "--profile slrum" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.snakemake_command([], cwd=tmp_path)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "no workflow/Snakefile" in err and str(ROOT) in err


@pytest.mark.workflow
def test_gpubench_run_dry_run_plans_the_chosen_backends(tmp_path):
    env = {**NO_SRC, "PYTHONWARNINGS": ""}
    env.pop(cli.CONFIG_VAR, None)
    out = subprocess.run(
        [installed_command(), "run", "--dry-run", "--backends", "numpy-cpu", "--configfile",
         ".test/config/config.yaml", "--", "--cores", "1", "--config",
         f"results_dir={tmp_path}/r", f"logs_dir={tmp_path}/l"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert ("gpubench run: snakemake --profile profiles/local --configfile "
            ".test/config/config.yaml --dry-run --cores 1 --config backends=[numpy-cpu] "
            "results_dir=") in out.stderr
    assert "backend=numpy-cpu" in text and "backend=torch-cpu" not in text


@pytest.mark.workflow
def test_a_killed_run_resumes_with_the_same_command(tmp_path):
    """`gpubench run` killed (SIGKILL, its jobs with it) while a step runs: a plain
    `snakemake` then stops naming the flag to add (--rerun-incomplete, or --unlock);
    the same `gpubench run` command removes the stale lock, keeps the finished steps,
    re-runs the incomplete one and completes the run."""
    if Path(sys.prefix) == Path(sys.base_prefix):
        pytest.fail("run the tests in the project's venv (make test)")
    clone = fresh_clone(tmp_path / "gpubench")
    borrowed_venv(clone, Path(sys.prefix))
    env = {**NO_SRC, "PYTHONPATH": str(clone / "src"), "PYTHONWARNINGS": ""}
    env.pop(cli.CONFIG_VAR, None)
    tiny = [".test/config/config.yaml", "tests/readme_config.yaml"]  # no MPI steps
    cmd = [installed_command(), "run", "--configfile", *tiny, "--backends", "numpy-cpu",
           "--", "--cores", "2"]
    first = subprocess.Popen(cmd, cwd=clone, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = clone / "logs" / "run_backend" / "numpy-cpu.log"
    deadline = time.monotonic() + 300
    while not (log.exists() and "samples" in log.read_text()):
        assert first.poll() is None, "the run ended before its step started"
        assert time.monotonic() < deadline, "the step did not start in 300 s"
        time.sleep(0.5)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    host = clone / "results" / "env" / "host.json"
    probe_done = host.exists()
    assert any((clone / ".snakemake" / "locks").iterdir())
    plain = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1",
                            "--configfile", *tiny], cwd=clone,
                           env=env, capture_output=True, text=True, timeout=300)
    said = plain.stdout + plain.stderr  # the step's early lock.txt counts as incomplete
    assert plain.returncode != 0 and ("--rerun-incomplete flag" in said
                                      or "--unlock argument" in said), said[-2000:]
    before = host.stat().st_mtime_ns if probe_done else None
    again = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True,
                           timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "removing the lock that an interrupted run left" in again.stderr
    assert (clone / "results" / "report" / "index.html").exists()
    if probe_done:  # a finished step is kept
        assert host.stat().st_mtime_ns == before
