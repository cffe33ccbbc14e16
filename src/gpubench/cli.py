"""The ``gpubench`` command (``python -m gpubench`` too).

User commands: ``run`` (the Snakemake workflow, with a profile), ``report``, ``compare``,
``probe``, ``validate-config``, ``schema``. The workflow's steps call the others through
the thin scripts under workflow/scripts: ``step`` (one framework's benchmark step),
``collect``, ``build-env``, ``mpi-step``, ``mpi-collect``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpubench.cli_examples import EXAMPLES
from gpubench.suites import SUITES

if TYPE_CHECKING:
    import pandas as pd


def step_main(argv: list[str] | None = None) -> int:
    """Benchmark one backend (one Snakemake step) in its framework's environment.

    With ``--env-lock`` (venv mode) the step first reads the lock of the environment the
    workflow built: a failed or skipped build gives one ``unavailable`` row per planned
    measurement, with the lock's reason and the tail of pip's errors, and no worker is
    started; an ok one re-executes this command with the environment's interpreter
    (``--env-python``). Every row carries the env_lock of the interpreter it ran in,
    whose lock is written to ``--lock-out``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="gpubench step", description="Run one framework-device step (the workflow's "
        "run_backend rule calls it; to run the benchmark, use `gpubench run`).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=STEP_EXAMPLE)
    p.add_argument("--backend", required=True)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--config-json", required=True, help="the step's configuration as JSON")
    p.add_argument("--csv", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--env-name", default="system", help="the environment's name")
    p.add_argument("--env-mode", default="system", choices=("venv", "system", "conda"))
    p.add_argument("--env-lock", help="lock written by the build (venv mode)")
    p.add_argument("--env-python", help="interpreter of the environment (venv mode)")
    p.add_argument("--lock-out", help="write the lock of the environment the step ran in")
    p.add_argument("--compile-cache", metavar="DIR|off",
                   help="folder of the frameworks' persistent compilation caches; the "
                   "step uses its subfolder named after --env-name (default: "
                   "<results>/cache/compile, <results> being the folder above the CSV's; "
                   "off: the frameworks' own defaults)")
    p.add_argument("--attempt", type=int, help="run the step as a watched child: this "
                   "attempt (1, 2, ...) of --attempts; see guard_step")
    p.add_argument("--attempts", type=int, default=1)
    p.add_argument("--time-limit-min", type=float, default=0,
                   help="the job's runtime in minutes (0: none): the child is stopped "
                   "before the scheduler would kill the step")
    args = p.parse_args(argv)
    if args.attempt is not None:
        return guard_step(args, argv)
    from gpubench import environments

    config = json.loads(args.config_json)
    built = environments.read_lock(args.env_lock) if args.env_lock else None
    if built is not None and not built.ok:
        return _run_unavailable(args, config, built, built.problem())
    if args.env_python and os.path.abspath(args.env_python) != os.path.abspath(
            sys.executable):
        if not os.access(args.env_python, os.X_OK):
            return _run_unavailable(args, config, built, (
                f"environment {args.env_name}: interpreter {args.env_python} is missing; "
                f"rebuild it (snakemake --forcerun {args.env_lock or 'build_env'})"))
        # Run the whole step (planning, workers, CSVs) in the environment's interpreter.
        rest = _drop_option(argv, "--env-python")
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(args.env_python, [args.env_python, "-m", "gpubench", "step", *rest],
                  environments.env_with_src())
    from gpubench.runner import run_backend

    extra = {"backend": args.backend}
    if built is not None:
        extra["spec"] = built.header.get("spec", "")
    lock = environments.current_lock(args.env_name, args.env_mode, extra)
    if built is not None and built.hash != lock.hash:
        lock.notes.append(f"differs from the build lock ({built.hash}): the environment "
                          "changed after it was built")
    print(f"[{args.backend}] environment {args.env_name} ({args.env_mode}): "
          f"{lock.header['interpreter']}, env_lock {lock.hash}"
          + (f"; {lock.notes[-1]}" if lock.notes else ""), file=sys.stderr, flush=True)
    if args.lock_out:
        environments.atomic_write_text(args.lock_out, lock.text())
    run_backend(args.backend, config, args.threads, args.csv, args.samples,
                env_lock=lock.hash, compile_cache=step_compile_cache(args))
    return 0


def step_compile_cache(args: argparse.Namespace) -> Path | None:
    """The step's compilation cache folder: ``--compile-cache`` (default
    ``<results>/cache/compile``) / the environment's name, so that environments with
    different builds (CUDA 12 and 13) never share one; None for ``off``."""
    from gpubench.runner import results_folder

    base = args.compile_cache
    if base is not None and base.strip().lower() in ("off", "false"):
        return None
    root = Path(base) if base else results_folder(args.csv) / "cache" / "compile"
    return root / args.env_name


def guard_step(args: argparse.Namespace, argv: list[str]) -> int:
    """Run the step in a child process and make sure it ends as rows.

    The child (this command without the guard options) is stopped before the job's time
    limit (``--time-limit-min``, the scheduler's ``runtime``), so a step never vanishes
    with its job. When it fails or runs out of time on an attempt before the last, the
    exit status is returned and Snakemake retries it (with the memory and runtime the
    profile gives that attempt); on the last attempt the rows the step had finished are
    kept, every measurement not yet made is written as an ``error`` row with the
    reason, the step succeeds, and the report shows the failure.
    """
    import signal
    import subprocess
    import time

    from gpubench import environments
    from gpubench.procs import cgroup_memory, preexec

    rest = argv
    for name in ("--attempt", "--attempts", "--time-limit-min"):
        rest = _drop_option(rest, name)
    from gpubench.runner import time_limit_margin_s

    limit = args.time_limit_min * 60
    limit -= time_limit_margin_s(limit)
    cmd = [sys.executable, "-m", "gpubench", "step", *rest]
    sys.stdout.flush()
    sys.stderr.flush()
    # Its own session, so that a time-out kills it and its workers together; and it ends
    # when the guard does, even when the guard is killed without a chance to stop it.
    child = subprocess.Popen(cmd, env=environments.env_with_src(), start_new_session=True,
                             preexec_fn=preexec())

    def stop(signum: int = signal.SIGTERM, *_: Any) -> None:
        for sig in (signum, signal.SIGKILL):
            try:
                os.killpg(child.pid, sig)
            except ProcessLookupError:
                return
            try:
                child.wait(timeout=10)
                return
            except subprocess.TimeoutExpired:
                continue

    # The scheduler's SIGTERM (time limit, scancel) reaches the step's whole group.
    signal.signal(signal.SIGTERM, lambda signum, frame: stop(signum))
    start = time.monotonic()
    memory = cgroup_memory()
    try:
        rc = child.wait(timeout=limit or None)
        timed_out = False
    except subprocess.TimeoutExpired:
        stop()
        rc, timed_out = child.wait(), True
    if rc == 0:
        return 0
    where = f"attempt {args.attempt} of {args.attempts}"
    if timed_out:
        what = (f"the step ran out of time: stopped after {time.monotonic() - start:.0f} s "
                f"of its {args.time_limit_min:g} min runtime")
    elif rc < 0:
        what = f"the step was killed by signal {-rc}" + oom_note(memory, cgroup_memory())
    else:
        what = f"the step failed with exit status {rc}"
    if args.attempt < args.attempts:
        print(f"[{args.backend}] {what} ({where}); the workflow retries it",
              file=sys.stderr, flush=True)
        return rc if rc > 0 else 1
    reason = f"{what} ({where}, no retry left); see the step's log"
    from gpubench.runner import write_unavailable

    if args.lock_out and not os.path.exists(args.lock_out):
        lock = environments.Lock({"env": args.env_name, "mode": args.env_mode,
                                  "backend": args.backend, "status": "failed",
                                  "reason": reason})
        environments.atomic_write_text(args.lock_out, lock.text())
    write_unavailable(args.backend, json.loads(args.config_json), args.threads, args.csv,
                      args.samples, reason, env_lock="failed", status="error", keep=True)
    return 0


def oom_note(before: dict[str, int], after: dict[str, int]) -> str:
    """``: out of memory (...)`` when the kernel's OOM killer ended a process of this
    job's cgroup while the step ran, with its limit and peak; else ''."""
    if after.get("oom_kill", 0) <= before.get("oom_kill", 0):
        return ""
    sizes = [f"{what} {after[key] / 2**20:.0f} MiB" for key, what in
             (("max", "limit"), ("peak", "peak")) if key in after]
    return ": out of memory (the kernel's OOM killer, in the job's cgroup" + \
        "".join(f", {s}" for s in sizes) + ")"


def _drop_option(argv: list[str], name: str) -> list[str]:
    """``argv`` without ``name VALUE`` / ``name=VALUE``."""
    out: list[str] = []
    skip = False
    for item in argv:
        if skip:
            skip = False
        elif item == name:
            skip = True
        elif not item.startswith(name + "="):
            out.append(item)
    return out


def _run_unavailable(args: argparse.Namespace, config: dict, built: Any,
                     reason: str) -> int:
    """The step's environment cannot run: unavailable rows, and a lock saying why.

    The rows' env_lock is the status of the build (``failed``, ``skipped``), or the
    hash of an environment that was built but whose interpreter has gone.
    """
    from gpubench import environments
    from gpubench.runner import write_unavailable

    print(f"[{args.backend}] {reason}", file=sys.stderr, flush=True)
    env_lock = "failed"
    lock = environments.Lock({"env": args.env_name, "status": "failed",
                              "mode": args.env_mode})
    if built is not None:
        env_lock = built.hash or built.status
        lock = environments.Lock(dict(built.header), [], list(built.errors),
                                 list(built.notes))
        if built.ok:
            lock.header.update(status="failed", reason=reason)
    lock.header["backend"] = args.backend
    lock.header.setdefault("reason", reason)
    if args.lock_out:
        environments.atomic_write_text(args.lock_out, lock.text())
    write_unavailable(args.backend, config, args.threads, args.csv, args.samples, reason,
                      env_lock=env_lock)
    return 0


def collect_main(argv: list[str] | None = None) -> int:
    """Concatenate and validate the per-step CSVs into timings.csv and samples.csv."""
    import pandas as pd

    from gpubench import results
    from gpubench.files import WriteError

    p = results.collect_parser(collect_main.__doc__, "timings", "out-timings",
                               "gpubench collect")
    p.add_argument("--env", help="probe JSON with the measured ceilings")
    args = p.parse_args(argv)
    try:
        merged = results.merge_files(args.timings, results.read_timings, results.validate,
                                     "merged timings")
        parts = [results.read_samples(f) for f in args.samples]
        check_sample_files(args.samples, parts, merged)
        samples = pd.concat(parts, ignore_index=True)
    except results.SchemaError as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 1
    if args.env:
        add_ceilings(merged, args.env)
    try:
        results.atomic_write_csv(args.out_samples, samples)
        results.atomic_write_csv(args.out_timings, merged)
    except WriteError as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 1
    print(results.collected("collect", merged, len(args.timings)))
    return 0


def check_sample_files(paths: list[str], parts: list[pd.DataFrame],
                       timings: pd.DataFrame) -> None:
    """Refuse samples that would be merged twice: a key whose samples are in two files
    (each step writes its own keys: a file given twice, or two copies of a step's file),
    or samples doubled within a file (:func:`results.check_samples`), judged against the
    merged timings. Raises :class:`results.SchemaError` naming the files."""
    from gpubench import results

    owner: dict[tuple[str, ...], str] = {}
    for path, part in zip(paths, parts, strict=True):
        keys = results.key_frame(part, results.KEY_NAMES).drop_duplicates()
        for key in keys.itertuples(index=False, name=None):
            if key in owner:
                where = dict(zip(results.KEY_NAMES, key, strict=True))
                raise results.SchemaError(
                    f"{path}: has samples of {where['backend']} {where['kernel']}/"
                    f"{where['variant']} {where['dtype']} size={where['size']:.0f} "
                    f"{where['implementation']} threads={where['threads']:.0f}, which "
                    f"{owner[key]} has too: a file given twice, or two copies of a step's "
                    "samples? Each step's samples are collected once")
            owner[key] = path
        results.check_samples(part, path, timings, path)


def add_ceilings(frame: pd.DataFrame, env_json: str) -> None:
    """Fill ``ceiling`` and ``pct_of_ceiling`` from the probe's measured ceilings, and
    turn rows faster than those ceilings allow into ``implausible`` (gpubench.plausibility)."""
    from gpubench import ceilings as ceiling_record
    from gpubench import inputs, plausibility

    try:
        record = inputs.load_json(env_json, "probe record")
    except inputs.InputError as exc:
        print(f"collect: no ceilings from {env_json}: {exc}", file=sys.stderr)
        return
    if not isinstance(record, dict):
        print(f"collect: no ceilings from {env_json}: not a JSON object", file=sys.stderr)
        return
    ceilings = ceiling_record.from_record(record)
    before = int((frame["status"] == "implausible").sum())
    plausibility.judge(frame, ceilings)
    refused = frame[frame["status"] == "implausible"]
    if len(refused) or before:  # say so too when a re-judgement cleared them all
        print(f"collect: {len(refused)} implausible row(s), never ranked", file=sys.stderr)
    for _, row in refused.iterrows():
        print(f"collect: implausible {row['backend']} {row['implementation']} "
              f"{row['kernel']}/{row['variant']} {row['dtype']} size={row['size']} "
              f"{row['mode']}: {row['reason']}", file=sys.stderr)


def validate_main(argv: list[str] | None = None) -> int:
    """Check a config file; exit 1 with a message naming the key if it is wrong."""
    from gpubench.config import ConfigError, load_config

    p = argparse.ArgumentParser(prog="gpubench validate-config",
                                description=validate_main.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=EXAMPLES["validate-config"])
    p.add_argument("config", type=Path)
    args = p.parse_args(argv)
    try:
        load_config(args.config)
    except ConfigError as exc:
        print(f"{args.config}: {str(exc).removeprefix('config: ')}", file=sys.stderr)
        return 1
    print(f"{args.config}: ok")
    return 0


def probe_main(argv: list[str]) -> int:
    from gpubench import probe

    return probe.main(argv)


def report_main(argv: list[str]) -> int:
    """Build the report; the options are parsed before the report's stack is imported."""
    from gpubench.cli_parsers import report_parser

    parser = report_parser()
    args = parser.parse_args(argv)
    from gpubench import report

    return report.run(args, parser)


def compare_main(argv: list[str]) -> int:
    """Run-vs-run comparison of two result sets (SAME / FASTER / SLOWER per measurement);
    the options are parsed before the report's stack is imported."""
    from gpubench.cli_parsers import compare_parser

    parser = compare_parser()
    args = parser.parse_args(argv)
    from gpubench.report import compare

    return compare.run(args, parser)


def build_env_main(argv: list[str]) -> int:
    from gpubench import environments

    return environments.main(argv)


def schema_main(argv: list[str]) -> int:
    """Print the results schema as a Markdown table (docs/measurement.md's columns)."""
    argparse.ArgumentParser(prog="gpubench schema", description=schema_main.__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=EXAMPLES["schema"]).parse_args(argv)
    from gpubench import results

    print(results.schema_markdown(), end="")
    return 0


def catalog_main(argv: list[str]) -> int:
    """Print what is compared, from the kernel registry (README, docs/kernels.md)."""
    from gpubench.cli_parsers import catalog_parser

    args = catalog_parser().parse_args(argv)
    from gpubench import catalog

    return catalog.run(args)


def mpi_step_main(argv: list[str]) -> int:
    from gpubench.mpi.step import step_main

    return step_main(argv)


def mpi_collect_main(argv: list[str]) -> int:
    from gpubench.mpi.step import collect_main

    return collect_main(argv)



STEP_EXAMPLE = EXAMPLES["step"]

#: config file(s) that ``gpubench run`` (and so ``make run``) layers over
#: config/config.yaml when no --configfile is given: a site's settings, or the tiny
#: configuration the README's commands run with in tests/test_readme_commands.py
CONFIG_VAR = "GPUBENCH_CONFIGFILE"
#: the --profile names of ``gpubench run`` (profiles/<name>; a path works too)
PROFILES = ("local", "slurm")


def snakemake_command(argv: list[str], cwd: Path | None = None) -> list[str]:
    """The Snakemake command line of ``gpubench run ARGS`` (:func:`run_main`); raises
    SystemExit(2) with a message for a wrong argument or a folder without the workflow."""
    p = argparse.ArgumentParser(
        prog="gpubench run", allow_abbrev=False,
        description="Run the benchmark workflow (Snakemake) with a profile: probe, every "
        "configured framework's step, collect and the report under results_dir.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES["run"])
    p.add_argument("--profile", default="local",
                   help="profiles/<name> (local: this machine, all cores; slurm: a SLURM "
                   "cluster, site settings in profiles/slurm/config.yaml) or a profile "
                   "folder (default: local)")
    p.add_argument("--backends", nargs="+", metavar="BACKEND",
                   help="run these backends only (config key backends; e.g. numpy-cpu "
                   "torch-gpu; commas work too)")
    p.add_argument("--configfile", nargs="+", metavar="FILE",
                   help="config file(s) over config/config.yaml (config/README.md); "
                   f"default: those in ${CONFIG_VAR} (separated by spaces), if set")
    p.add_argument("--suite", choices=SUITES,
                   help="quick: a first answer in minutes (fewer sizes, dtypes, variants "
                   "and implementations, each row measured as in full); full: every "
                   "measurement of config/config.yaml (config key suite; default: the "
                   "profile's, else quick)")
    p.add_argument("--dry-run", "-n", action="store_true", help="show the plan only")
    args, extra = p.parse_known_args(argv)
    cwd = Path.cwd() if cwd is None else cwd
    if not (cwd / "workflow" / "Snakefile").is_file():
        here = Path(__file__).resolve().parents[2]
        hint = (f" ({here} for this installation)"
                if (here / "workflow" / "Snakefile").is_file() else "")
        p.exit(2, f"gpubench run: no workflow/Snakefile in {cwd}: run it from the root of "
               f"the gpubench clone{hint}\n")
    profile = Path("profiles") / args.profile
    if not (cwd / profile / "config.yaml").is_file():
        profile = Path(args.profile)
        if not (cwd / profile / "config.yaml").is_file():
            p.exit(2, f"gpubench run: --profile {args.profile}: no profiles/{args.profile}/"
                   f"config.yaml and no profile folder {args.profile} (profiles: "
                   f"{', '.join(PROFILES)})\n")
    if "--" in extra:  # `gpubench run -- ARGS`: ARGS are Snakemake's
        extra.remove("--")
    cmd = [sys.executable, "-m", "snakemake"]
    items = [f"suite={args.suite}"] if args.suite else []
    if args.backends:
        names = [b for item in args.backends for b in item.split(",") if b]
        items.append("backends=[" + ",".join(names) + "]")
    # A --config on the command line replaces the profile's `config:` list as a whole
    # (Snakemake reads a profile's keys as defaults of its options): the profile's items
    # go first, so its suite stays unless a flag or your own --config sets another.
    if "--config" in extra:  # one --config: Snakemake keeps the last one only
        at = extra.index("--config") + 1
        extra[at:at] = [*profile_config(cwd / profile), *items]
    elif items:  # before --profile, which ends --config's list of KEY=VALUE
        cmd += ["--config", *profile_config(cwd / profile), *items]
    cmd += ["--profile", str(profile)]
    configfiles = args.configfile or os.environ.get(CONFIG_VAR, "").split()
    if configfiles:
        cmd += ["--configfile", *configfiles]
    if args.dry_run:
        cmd.append("--dry-run")
    return cmd + extra


def profile_config(folder: Path) -> list[str]:
    """The ``config:`` items (KEY=VALUE) of a profile's config.yaml; none when it has
    none or cannot be read (Snakemake then says why)."""
    import yaml

    try:
        data = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return []
    items = data.get("config") if isinstance(data, dict) else None
    if isinstance(items, dict):
        return [f"{k}={v}" for k, v in items.items()]
    return [str(i) for i in items] if isinstance(items, list) else []


def live_snakemake(cwd: Path, proc: Path = Path("/proc")) -> bool | None:
    """Whether a Snakemake process runs in ``cwd`` (None: cannot tell, no /proc)."""
    if not proc.is_dir():
        return None
    here = cwd.resolve()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            where = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if where == here and any(b"snakemake" in word for word in argv):
            return True
    return False


def stale_lock(cwd: Path) -> bool:
    """Snakemake's lock is left in ``cwd`` (.snakemake/locks) by a run that was killed
    (a run that ends, even by Ctrl-C, removes it) and no Snakemake runs there now."""
    locks = cwd / ".snakemake" / "locks"
    if not locks.is_dir() or not any(locks.iterdir()):
        return False
    return live_snakemake(cwd) is False


def run_main(argv: list[str]) -> int:
    """``gpubench run``: Snakemake with a profile, in this process (Ctrl-C reaches it).
    An interrupted run resumes: the profiles re-run incomplete steps, and the lock a
    killed run left (Snakemake would refuse, asking for --unlock) is removed first when
    no Snakemake runs in this folder."""
    cmd = snakemake_command(argv)
    if stale_lock(Path.cwd()) and "--unlock" not in cmd:
        print("gpubench run: removing the lock that an interrupted run left (no Snakemake "
              "runs in this folder): snakemake --unlock", file=sys.stderr, flush=True)
        subprocess.run([*cmd, "--unlock"], check=False)
    print("gpubench run: " + " ".join(cmd[2:]).replace("-m snakemake", "snakemake", 1),
          file=sys.stderr, flush=True)
    os.execv(cmd[0], cmd)
    return 1  # pragma: no cover - execv does not return


COMMANDS = {
    "run": run_main,
    "report": report_main,
    "compare": compare_main,
    "probe": probe_main,
    "validate-config": validate_main,
    "schema": schema_main,
    "catalog": catalog_main,
    "step": step_main,
    "collect": collect_main,
    "build-env": build_env_main,
    "mpi-step": mpi_step_main,
    "mpi-collect": mpi_collect_main,
}
#: the commands a user types, with the line ``gpubench --help`` gives each; the others
#: are the workflow's steps, called by workflow/scripts and left out of that list
USER_HELP = {
    "run": "run the benchmark workflow (Snakemake) with a profile",
    "report": "render the report from a run's CSVs",
    "compare": "compare two result sets (SAME / FASTER / SLOWER per measurement)",
    "probe": "describe this machine and measure its ceilings (host.json)",
    "validate-config": "check a config file, naming a wrong key",
    "schema": "print the results' columns as a Markdown table",
    "catalog": "print what is compared: kernels and implementations (Markdown)",
}
USER_COMMANDS = tuple(USER_HELP)


def command_parser() -> argparse.ArgumentParser:
    """``gpubench`` itself: answers --help and a missing or unknown command; each
    command parses its own arguments. The workflow's steps stay callable but unlisted."""
    p = argparse.ArgumentParser(
        prog="gpubench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Benchmark Python's CPU and GPU frameworks: run the workflow, then "
        "read,\ncompare and check its results (python -m gpubench COMMAND works too).",
        epilog="`gpubench COMMAND --help` shows each command's options and examples.\n\n"
        + EXAMPLES["run"].split("\n\n")[0])
    sub = p.add_subparsers(title="commands", metavar="COMMAND")
    for name, text in USER_HELP.items():
        sub.add_parser(name, help=text, add_help=False)
    for name in COMMANDS:
        if name not in USER_HELP:  # no help: argparse lists it nowhere
            sub.add_parser(name, add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return int(COMMANDS[argv[0]](argv[1:]) or 0)
    parser = command_parser()
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    if argv[0].startswith("-"):
        parser.parse_args(argv)  # --help exits 0; a wrong option exits 2
    parser.print_usage(sys.stderr)
    print(f"gpubench: unknown command {argv[0]!r} (gpubench --help lists them)",
          file=sys.stderr)
    return 2
