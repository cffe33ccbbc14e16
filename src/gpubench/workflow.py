"""What the Snakemake workflow decides, as plain functions of the config and settings.

``workflow/rules/common.smk`` is glue: it passes Snakemake's ``config`` and settings to
:func:`prepare` and hands the rules the methods of the :class:`Plan` it returns. The
logic lives here so that it is unit-tested like the rest of the package, without
Snakemake and without a cluster (SLURM's clients and the GPU count are injectable).

Two kinds of thing live here:

- checks before any job (:func:`prepare`): a bad config, an unwritable results folder
  or one that an earlier run did not make (``/`` and the home folder never), a
  profile's site placeholder or unknown partition, an environment mode that does not
  match ``--sdm``. Each raises :class:`SetupError` with a message that names the key.
- each step's inputs and parameters (:class:`Plan`): file lists, interpreters,
  environments, MPI steps, the arguments of the step guard.
"""

from __future__ import annotations

import functools
import getpass
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gpubench import environments as envs
from gpubench import runlock, safety
from gpubench.backends import split_backend_id
from gpubench.config import ConfigError, validate_config
from gpubench.mpi import launch as mpi_launch
from gpubench.mpi import planned_steps as mpi_planned_steps

#: how the scheduling Snakemake tells the jobs it starts how many attempts a step has
#: (set here, not by the user: no envvars directive)
ATTEMPTS_VAR = "GPUBENCH_STEP_ATTEMPTS"
#: a partition or account sbatch can be given through a shell without quoting
SLURM_NAME = re.compile(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*")
#: the profile settings checked against the cluster
SITE_KEYS = ("slurm_partition", "slurm_account")

#: runs a command: ``subprocess.run``'s signature (tests give a fake)
Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class SetupError(RuntimeError):
    """The run cannot start; the message names the setting and what to do about it."""


# -- checks before any job -----------------------------------------------------------------


def check_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The validated config (a copy), or SetupError naming the first bad key."""
    try:
        return validate_config(config)
    except ConfigError as exc:
        raise SetupError(f"invalid configuration: {exc}") from None


def check_writable(folder: str | os.PathLike[str]) -> None:
    """Fail before any job starts if results cannot be written."""
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        probe = Path(folder) / f".write-test-{os.getpid()}"  # one per run: no race
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise SetupError(
            f"config key results_dir/logs_dir: cannot write to {str(folder)!r}: {exc}"
        ) from None


def check_folders(results_dir: str, logs_dir: str, home: str | None = None) -> None:
    """results_dir and logs_dir are each new, empty or an earlier run's (its marker):
    a run writes collect.log, report.log and the steps' logs over whatever has those
    names in logs_dir, as it does its CSVs in results_dir; neither folder is ``/`` or
    the home folder (gpubench.safety)."""
    try:
        safety.check_results_folder(results_dir, "results_dir", home)
        safety.check_results_folder(logs_dir, "logs_dir", home)
    except safety.UnsafeFolder as exc:
        raise SetupError(str(exc)) from None


def site_settings(default_resources: Mapping[str, Any] | None,
                  overwrite_resources: Mapping[str, Mapping[str, Any]] | None,
                  ) -> list[tuple[str, str, str]]:
    """(where, name, value) of each slurm_partition/slurm_account a profile sets, from
    Snakemake's resource settings (``default-resources``, ``set-resources``); values are
    Snakemake ``Resource`` objects (their ``raw`` text) or plain strings."""
    found = []
    for rule, resources in [("default-resources", default_resources),
                            *(overwrite_resources or {}).items()]:
        where = rule if rule == "default-resources" else f"set-resources.{rule}"
        for name, value in dict(resources or {}).items():
            raw = getattr(value, "raw", value)
            if name in SITE_KEYS and isinstance(raw, str):
                found.append((where, name, raw.strip("'\"")))
    return found


def slurm_names(cmd: Sequence[str], run: Runner = subprocess.run) -> set[str] | None:
    """Names a SLURM client lists (lower case), or None where it cannot tell: the
    command is missing, fails, hangs or lists nothing (no SLURM controller here)."""
    try:
        out = run(list(cmd), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = {n.strip().rstrip("*").lower() for n in out.stdout.split()}
    return names if out.returncode == 0 and names else None


def cluster_names(name: str, run: Runner = subprocess.run, user: str | None = None
                  ) -> set[str] | None:
    """The cluster's partitions (``sinfo``) or the user's accounts (``sacctmgr``)."""
    if name == "slurm_partition":
        return slurm_names(["sinfo", "-h", "-o", "%P"], run)
    return slurm_names(["sacctmgr", "-n", "-P", "-s", "list", "user",
                        user or getpass.getuser(), "format=account"], run)


def check_site_settings(settings: Iterable[tuple[str, str, str]], *,
                        which: Callable[[str], str | None] = shutil.which,
                        run: Runner = subprocess.run, user: str | None = None) -> None:
    """Fail before any job on a profile's SITE_* placeholder, on a partition or account
    that is not a plain SLURM name, or (where sinfo/sacctmgr answer) on one this cluster
    does not have."""
    settings = list(settings)
    found = [(w, n, v) for w, n, v in settings if "SITE_" in v]
    if found:
        raise SetupError(
            "the profile still has site placeholders: "
            + "; ".join(f"{w}.{n}: {v}" for w, n, v in found)
            + ". Set them to your cluster's values in the profile (profiles/slurm/"
            "config.yaml; docs/slurm.md)"
        )
    # sbatch is started through a shell: a name that is not a plain SLURM name (one a
    # shell could read as a command, `a; rm -rf ~`) is refused whoever would quote it.
    for where, name, value in settings:
        if not SLURM_NAME.fullmatch(value):
            raise SetupError(
                f"profile setting {where}.{name}: {value!r} is not a SLURM name "
                "(letters, digits, '_', '.', '-'; several separated by commas)"
            )
    for where, name, value in settings:
        names = cluster_names(name, run, user) if which("sinfo") else None
        if names is not None and value.lower() not in names:
            raise SetupError(
                f"profile setting {where}.{name}: {value!r} is not "
                + ("a partition" if name == "slurm_partition" else "an account")
                + f" of this cluster (it has: {', '.join(sorted(names))})"
            )


def check_env_mode(mode: str, conda_sdm: bool) -> None:
    """Mode conda and ``--sdm conda`` go together: one without the other is refused."""
    if mode == "conda" and not conda_sdm:
        raise SetupError(
            "config key environments.mode: conda needs --sdm conda (or use mode venv or system)"
        )
    if conda_sdm and mode != "conda":
        raise SetupError(
            f"--sdm conda is given but config key environments.mode is {mode!r}; "
            "set environments.mode: conda for conda environments"
        )


def check_specs(backends: Sequence[str], env_cfg: Mapping[str, Any]) -> None:
    """In mode venv every configured backend needs its pip spec in spec_dir."""
    if env_cfg["mode"] != "venv":
        return
    for i, backend in enumerate(backends):
        spec = Path(env_cfg["spec_dir"]) / f"{envs.env_name(backend, env_cfg['cuda'])}.txt"
        if not spec.is_file():
            raise SetupError(
                f"config key backends[{i}]: {backend} has no pip spec {spec} "
                f"(environments.spec_dir); add it or use environments.mode: system"
            )


def check_suite_files(suite: str | None, configfiles: Iterable[str | os.PathLike[str]],
                      base: str | os.PathLike[str]) -> None:
    """The quick suite with the workflow's own config file given again (``--configfile
    config/config.yaml``) is refused: Snakemake layers a --configfile over the suite's
    overlay, so the full suite's sizes and modes would come back under the name quick."""
    if suite != "quick":
        return
    for path in configfiles:
        try:
            same = os.path.samefile(path, base)
        except OSError:
            continue
        if same:
            raise SetupError(
                f"--configfile {path}: the workflow reads it already (the full suite), and "
                "given again it goes over the quick suite's overlay "
                "(config/suites/quick.yaml), bringing the full suite's sizes back under "
                "config key suite: quick. Leave it out for the quick suite, or run the "
                "full one (gpubench run --suite full, or --config suite=full)")


def claim_results_dir(results: str | os.PathLike[str]) -> None:
    """A second run writing to the same results_dir from another working directory
    (Snakemake's own lock covers only its working directory) is refused before its
    first job: it would delete and rewrite the steps' files under the first run. So is
    a run while SLURM jobs of an earlier one, whose driver ended without cancelling
    them, still live (:func:`gpubench.slurm.earlier_jobs`)."""
    try:
        runlock.claim(results)
    except runlock.FolderBusy as exc:
        raise SetupError(str(exc)) from None
    from gpubench import slurm

    def query(cmd: list[str]) -> tuple[int, str, str]:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return 124, "", str(exc)
        return out.returncode, out.stdout, out.stderr

    if shutil.which("squeue") and (said := slurm.earlier_jobs(results, query)):
        if said.startswith("config key"):
            raise SetupError(said)
        print(f"gpubench: {said}", file=sys.stderr, flush=True)


def evaluate_resource(raw: Any, wildcards: Any) -> Any:
    """A profile's resource value for one job, as Snakemake reads it: a Python
    expression of ``wildcards`` and ``attempt`` (1 here), or else the text itself."""
    if not isinstance(raw, str):
        return raw
    try:
        return eval(raw, {"wildcards": wildcards, "attempt": 1})  # as Snakemake does
    except Exception:  # noqa: BLE001 - not an expression: a plain string, as in Snakemake
        return raw


def check_mpi_resources(overwrite_resources: Mapping[str, Mapping[str, Any]] | None,
                        steps: Iterable[tuple[str, str, int]]) -> None:
    """A profile whose ``set-resources.mpi_job.mpi`` names a launcher for every MPI step
    (a constant, as profiles/slurm had before the 1-rank fix) makes the SLURM executor
    plugin refuse each 1-rank step at submission ("For MPI jobs, 'tasks' must be greater
    than 1"), three times each: refused here, before any job, naming the key."""
    resources = (overwrite_resources or {}).get("mpi_job") or {}
    if "mpi" not in resources:
        return
    raw = getattr(resources["mpi"], "raw", resources["mpi"])
    for job, backend, ranks in steps:
        if ranks > 1:
            continue
        wildcards = SimpleNamespace(job=job, backend=backend, ranks=str(ranks))
        if evaluate_resource(raw, wildcards):
            raise SetupError(
                f"profile setting set-resources.mpi_job.mpi: {raw!r} makes the 1-rank MPI "
                f"step {job}.{backend}.n1 an MPI job of one task, which the SLURM "
                "executor plugin refuses ('tasks' must be greater than 1); give the "
                "launcher for 2 ranks or more only, as profiles/slurm does: "
                "mpi: \"'srun --mpi=pmix' if int(wildcards.ranks) > 1 else ''\"")


def prepare(config: Mapping[str, Any], *,
            default_resources: Mapping[str, Any] | None = None,
            overwrite_resources: Mapping[str, Mapping[str, Any]] | None = None,
            conda_sdm: bool = False,
            which: Callable[[str], str | None] = shutil.which,
            run: Runner = subprocess.run,
            configfiles: Iterable[str | os.PathLike[str]] = (),
            base_configfile: str | os.PathLike[str] = "config/config.yaml",
            **plan_args: Any) -> Plan:
    """Every check before any job, in the order a user meets them (config, its files,
    folders, profile, environments); the :class:`Plan` of a run that may start.
    ``configfiles``: the --configfile files, checked against the workflow's own
    ``base_configfile`` (:func:`check_suite_files`)."""
    config = check_config(config)
    check_suite_files(config.get("suite"), configfiles, base_configfile)
    check_folders(config["results_dir"], config["logs_dir"])
    check_writable(config["results_dir"])
    check_writable(config["logs_dir"])
    safety.mark_results_folder(config["results_dir"])
    safety.mark_results_folder(config["logs_dir"])
    check_site_settings(site_settings(default_resources, overwrite_resources),
                        which=which, run=run)
    plan = Plan(config, **plan_args)
    check_mpi_resources(overwrite_resources, plan.mpi_steps())
    check_env_mode(plan.env_mode, conda_sdm)
    check_specs(config["backends"], plan.env)
    return plan


# -- each step's inputs and parameters -----------------------------------------------------


def canonical_python(path: str) -> str:
    """One name for an interpreter that has several in its ``bin/`` folder.

    A venv's ``python``, ``python3`` and ``python3.X`` are one interpreter, but a
    ``snakemake`` script installed through ``python3`` starts as that name while
    ``gpubench run`` starts as ``python``. The name reaches every rule's params, and
    Snakemake re-runs a job whose params changed: without this, switching between the
    two re-ran every step. Only names in the same folder that are the same file are
    merged, so a venv is never swapped for the interpreter it links to."""
    p = Path(path)
    if not p.name.startswith("python"):
        return path
    for name in ("python", "python3"):
        other = p.with_name(name)
        try:
            if other.is_file() and os.path.samefile(other, p):
                return str(other)
        except OSError:
            continue
    return path


class Plan:
    """The files and parameters of a run's steps, from its (validated) config.

    Methods taking ``wildcards`` are Snakemake input functions. What Snakemake knows only
    once the DAG is built (cores, ``--retries``) is read through callables when a rule
    asks; ``retries`` gives None in a dry run.
    """

    def __init__(self, config: Mapping[str, Any], *, python: str = sys.executable,
                 cores: Callable[[], int | None] = lambda: None,
                 retries: Callable[[], int | None] = lambda: None,
                 gpus: Callable[[], tuple[int, str]] = envs.visible_gpus,
                 environ: MutableMapping[str, str] = os.environ,
                 overwrite_config: Mapping[str, Any] | None = None) -> None:
        self.config = config
        #: the user's config files and --config, merged (what the full suite of this run
        #: would keep: :meth:`suite_info`)
        self.overwrite_config = dict(overwrite_config or {})
        self.results = config["results_dir"]
        self.logs = config["logs_dir"]
        self.mpi: Mapping[str, Any] = config.get("mpi") or {}
        self.env = envs.env_config(config)
        self.env_mode: str = self.env["mode"]
        self.venvs = str(Path(self.env["venv_dir"]))
        self.specs = Path(self.env["spec_dir"])
        self.python = canonical_python(python)
        self._cores, self._retries, self._gpus = cores, retries, gpus
        self._environ = environ
        #: the driver's progress lines while the steps run (:meth:`start_progress`)
        self.progress: Any = None

    # -- what the run makes

    def final_outputs(self) -> list[str]:
        return [f"{self.results}/report/index.html", f"{self.results}/report/summary.md",
                *self.mpi_csv()]

    def raw_timings(self) -> list[str]:
        return [f"{self.results}/raw/{b}.csv" for b in self.config["backends"]]

    def raw_samples(self) -> list[str]:
        return [f"{self.results}/raw/{b}.samples.csv" for b in self.config["backends"]]

    def step_locks(self) -> list[str]:
        """The lock of the environment each step ran in (the report lists their versions)."""
        return [f"{self.results}/raw/{b}.lock.txt" for b in self.config["backends"]]

    def suite_file(self) -> str:
        """The run's suite record (rule suite): the report's header names the suite."""
        return f"{self.results}/suite.json"

    def suite_info(self, wildcards: Any) -> str:
        """What the report says of the suite, as JSON: its name and measurements and, for
        quick, what the full suite of this run (config/config.yaml under the same config
        files and --config) would add, with the command (:func:`gpubench.suites.
        difference`), counted at the benchmark steps' cores."""
        from gpubench import suites

        name = str(self.config.get("suite") or "full")
        cores = self.planning_cores()
        full = suites.suite_config("full", self.overwrite_config)
        if name == "full":
            diff = suites.difference(full, full, cores, "full")
        else:  # as the steps will plan it (step_settings), against the full suite's plan
            mine = {**self.config, **self.step_settings()}
            diff = suites.difference(mine, check_config(full), cores, name)
        return json.dumps(diff.as_dict(), sort_keys=True)

    # -- progress while the steps run (gpubench.progress)

    def start_progress(self, steps: Iterable[str], out: Any = None) -> Any:
        """Start the driver's progress lines over the benchmark ``steps`` that run now,
        each planned at the steps' cores (a step's own count replaces it once it
        starts); None when no step runs."""
        from gpubench.progress import run_progress
        from gpubench.runner import plan

        cores = self.planning_cores()
        settings = self.step_settings()
        planned = {b: len(plan(b, settings, cores)) for b in steps}
        # GPU steps on a host without a GPU write unavailable rows at once (as the
        # environments' gpu_envs: auto assumes): no time of their own in the estimate
        no_gpu = self.env["gpu_envs"] != "always" and not self.gpus_here[0]
        instant = frozenset(b for b in planned if no_gpu and self.step_gpus(
            SimpleNamespace(backend=b)))
        if planned:
            self.progress = run_progress(planned, self.results, out=out,
                                         instant=instant).start()
        return self.progress

    def stop_progress(self) -> None:
        """The last progress line, once the run has ended."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def stored_errors(self) -> str:
        """What a plain run says first when steps it keeps (their rows files exist)
        hold ``error`` rows: a run never measures a finished step again, so the user
        learns which ones and the ``--forcerun`` that does (:func:`stored_errors`)."""
        return stored_errors([*self.raw_timings(), *self.mpi_rows()])

    # -- MPI jobs (rules/mpi.smk, docs/mpi.md)

    def mpi_steps(self) -> list[tuple[str, str, int]]:
        """(job, backend, ranks) of every MPI step (:func:`gpubench.mpi.planned_steps`)."""
        return mpi_planned_steps(self.config)

    def mpi_rows(self) -> list[str]:
        return [f"{self.results}/mpi/raw/{j}.{b}.n{n}.csv" for j, b, n in self.mpi_steps()]

    def mpi_samples(self) -> list[str]:
        return [f"{self.results}/mpi/raw/{j}.{b}.n{n}.samples.csv"
                for j, b, n in self.mpi_steps()]

    def mpi_csv(self) -> list[str]:
        """mpi.csv when any MPI step is configured (the report takes it as input)."""
        return [f"{self.results}/mpi.csv"] if self.mpi_steps() else []

    def mpi_launcher_kind(self, wildcards: Any) -> str:
        """The rule's ``mpi`` resource: which launcher starts the ranks; empty for one
        rank, which the SLURM executor plugin then submits as a one-task job (it refuses
        an MPI job of one task: "For MPI jobs, 'tasks' must be greater than 1"). The
        resource is still there, so the job step runs the command as it is and the step
        starts its one rank with its launcher."""
        if int(wildcards.ranks) < 2:
            return ""
        return mpi_launch.choose_kind(self.mpi.get("launcher", "auto"))

    def mpi_runtime_min(self, wildcards: Any) -> int:
        """SLURM runtime (minutes): the step's time limit plus start-up, rounded up."""
        return int(float(self.mpi.get("time_limit_s", 600)) // 60) + 5

    def mpi_backstop_s(self, wildcards: Any) -> int:
        """The shell's timeout around the whole step: the limit plus a margin to write
        rows."""
        return int(float(self.mpi.get("time_limit_s", 600))) + 120

    def mpi_step_config(self, wildcards: Any) -> str:
        """What an MPI step reads, as JSON (a change re-runs it)."""
        return json.dumps({"mpi": self.mpi,
                           "harness": {"seed": self.config["harness"].get("seed", 0)}},
                          sort_keys=True)

    def mpi_ranks_python(self, wildcards: Any) -> str:
        """The ranks' interpreter: the framework's venv (mode venv), the conda env's
        (mode conda) or the driver's; the step starts them with src/ on PYTHONPATH."""
        if self.env_mode == "venv":
            return f"{self.venvs}/{self.backend_env(wildcards.backend)}/bin/python"
        return "python" if self.env_mode == "conda" else self.python

    def report_mpi_inputs(self, wildcards: Any) -> dict[str, str]:
        """mpi.csv and mpi_samples.csv when the run includes MPI steps (mpi.enabled not
        false and at least one step planned); none otherwise: the report says MPI was not
        run."""
        if not self.mpi_csv():
            return {}
        return {"mpi": f"{self.results}/mpi.csv",
                "mpi_samples": f"{self.results}/mpi_samples.csv"}

    def report_mpi_args(self, wildcards: Any, input: Any) -> str:
        """The report's --mpi/--mpi-samples flags, when those inputs are present."""
        if "mpi" not in input.keys():
            return ""
        return f"--mpi {input.mpi} --mpi-samples {input.mpi_samples}"

    # -- benchmark steps

    def step_python(self, wildcards: Any) -> str:
        """Interpreter that starts a step's script: the one running Snakemake (the
        gpubench package installed in it, or on its PYTHONPATH), or the conda env's
        (mode conda), which has the package's dependencies but not the package: src/
        goes first on its PYTHONPATH. A framework's step re-executes itself in its venv
        (mode venv), src/ on its PYTHONPATH too (environments.env_with_src)."""
        if self.env_mode == "conda":
            src = shlex.quote(str(envs.SRC_DIR))
            return f'env PYTHONPATH={src}"${{PYTHONPATH:+:$PYTHONPATH}}" python'
        return self.python

    def planning_cores(self) -> int:
        """The cores the steps' plans are counted at (the suite record, the progress
        estimate): :meth:`step_threads` where Snakemake has a total of cores; a cluster
        run gives its steps cores per rule (the profile's set-threads) and no total, and
        is counted at this host's cores."""
        from snakemake.exceptions import WorkflowError

        try:
            cores = int(self.step_threads(None) or 0)
        except WorkflowError:
            cores = 0
        return cores or os.cpu_count() or 1

    def step_threads(self, wildcards: Any) -> int | None:
        """Benchmark steps take every core they are given so that no two overlap."""
        return self.config.get("step_threads") or self._cores()

    def step_gpus(self, wildcards: Any) -> int:
        """GPU steps ask for one GPU so a scheduler (or --resources gpu=1) serialises
        them."""
        return 1 if split_backend_id(wildcards.backend)[1] == "gpu" else 0

    def probe_gpus(self, wildcards: Any) -> int:
        """The probe measures the GPU's ceilings when any GPU step is configured."""
        return int(any(split_backend_id(b)[1] == "gpu" for b in self.config["backends"]))

    def step_group(self, wildcards: Any) -> str | None:
        """GPU steps form group "gpu" (a profile's group-components puts them in one job
        on one GPU); CPU steps are not grouped. Groups matter only with a cluster
        executor."""
        return "gpu" if self.step_gpus(wildcards) else None

    def probe_group(self, wildcards: Any) -> str | None:
        """The probe measures the GPU's ceilings: in the GPU steps' group when it uses
        one."""
        return "gpu" if self.probe_gpus(wildcards) else None

    def step_attempts(self) -> int:
        """1 + --retries. Retries are counted by the Snakemake that schedules the jobs
        (its settings are known once the DAG is built); a job that a cluster executor
        starts runs with --retries 0 and inherits GPUBENCH_STEP_ATTEMPTS from it."""
        if ATTEMPTS_VAR not in self._environ:
            retries = self._retries()
            if retries is None:  # a dry run
                return 1
            self._environ[ATTEMPTS_VAR] = str(retries + 1)
        return int(self._environ[ATTEMPTS_VAR])

    def step_guard_args(self, wildcards: Any, resources: Any) -> str:
        """A benchmark step runs watched (gpubench.cli.guard_step): stopped before the
        job's runtime ends, retried while attempts are left, then recorded as error
        rows."""
        attempt = resources.attempt
        runtime = resources.get("runtime") or 0
        return (f"--attempt {attempt} --attempts {max(self.step_attempts(), attempt)}"
                f" --time-limit-min {runtime if isinstance(runtime, int) else 0}")

    def step_compile_cache_args(self, wildcards: Any) -> str:
        """Where the step keeps the frameworks' persistent compilation caches (config key
        ``compile_cache_dir``: null is ``<results_dir>/cache/compile``, false or "off"
        leaves the frameworks' own defaults); the step uses the subfolder of its
        environment's name."""
        where = self.config.get("compile_cache_dir")
        if where is False or (isinstance(where, str) and where.lower() == "off"):
            return "--compile-cache off"
        return shlex.join(["--compile-cache", where or f"{self.results}/cache/compile"])

    def gpu_steps_measure(self) -> bool:
        """Whether a GPU step of this run can measure: one is configured and, in mode
        venv, its environment is built here (``gpu_envs: always``, or ``auto`` where
        NVML sees a GPU); in modes system and conda the driver cannot tell: yes."""
        if not any(split_backend_id(b)[1] == "gpu" for b in self.config["backends"]):
            return False
        if self.env_mode != "venv":
            return True
        policy = self.env["gpu_envs"]
        return policy == "always" or (policy == "auto" and bool(self.gpus_here[0]))

    def step_settings(self) -> dict[str, Any]:
        """The part of the config a benchmark step reads. With ``baseline: with_gpu``
        (the quick suite) and no GPU step that can measure, the kernels lose their
        ``baseline_sizes``: NumPy's rows there exist to be compared with GPU rows."""
        keys = ("threads", "gpu_modes", "gpu_cold_max_bytes", "harness", "gpu_harness",
                "kernels", "energy")
        out = {k: self.config[k] for k in keys if k in self.config}
        # the plan leaves out what a framework's own venv cannot import (runner.missing_needs)
        out["environments"] = {"mode": self.env_mode}
        if self.config.get("baseline") == "with_gpu" and not self.gpu_steps_measure():
            out["kernels"] = {name: {k: v for k, v in kcfg.items() if k != "baseline_sizes"}
                              for name, kcfg in out["kernels"].items()}
        return out

    def step_config(self, wildcards: Any) -> str:
        """:meth:`step_settings` as JSON (a change re-runs the step)."""
        return json.dumps(self.step_settings(), sort_keys=True)

    # -- environments (docs/environments.md)

    def backend_env(self, backend: str) -> str:
        """Name of a backend's environment: numpy, jax-cpu, jax-cuda12, ..."""
        return envs.env_name(backend, self.env["cuda"])

    def env_locks(self) -> list[str]:
        """Build locks of the environments the configured backends need (mode venv)."""
        if self.env_mode != "venv":
            return []
        names = sorted({self.backend_env(b) for b in self.config["backends"]})
        return [f"{self.results}/envs/{env}/lock.txt" for env in names]

    def env_spec_inputs(self, wildcards: Any) -> dict[str, Any]:
        """A pip spec and the files it includes: editing any of them rebuilds the env."""
        files = [str(p) for p in envs.spec_files(self.specs / f"{wildcards.env}.txt")]
        return {"spec": files[0], "includes": files[1:]}

    @functools.cached_property
    def gpus_here(self) -> tuple[int, str]:
        """(GPUs on this host, why none): asked once, by the first GPU env's build."""
        return self._gpus()

    def env_build(self, wildcards: Any) -> str:
        """yes; or, for a GPU env, no-gpu (gpu_envs auto on a host without a GPU) or
        never."""
        policy = self.env["gpu_envs"]
        if not envs.is_gpu_env(wildcards.env) or policy == "always":
            return "yes"
        if policy == "never":
            return "never"
        return "yes" if self.gpus_here[0] else "no-gpu"

    def env_python(self, wildcards: Any) -> str:
        return self.env["python"] or self.python

    def env_pip_args(self, wildcards: Any) -> str:
        return " ".join(shlex.quote(f"--pip-arg={a}") for a in self.env["pip_args"])

    def step_env_inputs(self, wildcards: Any) -> dict[str, str]:
        """A framework's step depends on its environment's build lock (mode venv)."""
        if self.env_mode != "venv":
            return {}
        return {"env_lock": f"{self.results}/envs/{self.backend_env(wildcards.backend)}"
                            "/lock.txt"}

    def step_env_args(self, wildcards: Any) -> str:
        """How run.py finds the step's environment."""
        env = self.backend_env(wildcards.backend)
        if self.env_mode == "venv":
            args = ["--env-mode", "venv", "--env-name", env,
                    "--env-lock", f"{self.results}/envs/{env}/lock.txt",
                    "--env-python", f"{self.venvs}/{env}/bin/python"]
        elif self.env_mode == "conda":
            args = ["--env-mode", "conda", "--env-name", env]
        else:
            args = ["--env-mode", "system", "--env-name", "system"]
        return shlex.join(args)

    def step_conda_env(self, wildcards: Any) -> str | None:
        """The framework's conda-forge spec (mode conda, with --sdm conda)."""
        if self.env_mode != "conda":
            return None
        return f"../envs/{self.backend_env(wildcards.backend)}.yaml"

    def driver_conda_env(self, wildcards: Any) -> str | None:
        """The analysis stack for probe, collect and report (mode conda)."""
        return "../envs/driver.yaml" if self.env_mode == "conda" else None

    # -- steps SLURM ended (gpubench.slurm, docs/slurm.md, "When SLURM misbehaves")

    def salvage(self, job: Any, reason: str) -> bool:
        """Record a step whose SLURM job ended before the step wrote its rows.

        Called by the SLURM executor for each Snakemake job of a job SLURM ended on its
        last attempt (cancelled, preempted, a node failure, out of memory or time):
        every planned measurement of the step not yet made becomes an ``error`` row with
        ``reason`` (the SLURM state and job id), as the step guard does for a step that
        ran out of time, so no row is lost and collect and the report go on. Rows the
        step had finished (its partial file, :func:`gpubench.runner.kept_rows`) are
        kept; a whole rows file is kept with the SLURM reason appended to its ``error``
        rows. The probe
        gets a host file saying why it has nothing. Returns False for a rule with no
        rows to write (collect, report): that job fails as usual.
        """
        from gpubench import results

        rule = job.rule.name
        out, wildcards = job.output, job.wildcards
        if rule == "run_backend":
            if not _amend_rows(out.timings, reason, results.read_timings):
                from gpubench import environments
                from gpubench.runner import write_unavailable

                if not Path(out.lock).exists():
                    environments.atomic_write_text(out.lock, environments.Lock({
                        "env": self.backend_env(wildcards.backend), "mode": self.env_mode,
                        "backend": wildcards.backend, "status": "failed",
                        "reason": reason}).text())
                write_unavailable(wildcards.backend, json.loads(self.step_config(wildcards)),
                                  int(job.threads), out.timings, out.samples, reason,
                                  env_lock="failed", status="error", keep=True)
        elif rule == "mpi_job":
            from gpubench.mpi import schema
            from gpubench.mpi.step import Step

            if not _amend_rows(out.rows, reason, schema.read):
                step = Step(wildcards.job, wildcards.backend, int(wildcards.ranks),
                            json.loads(self.mpi_step_config(wildcards)),
                            python=self.mpi_ranks_python(wildcards), log=io.StringIO())
                step.fill("error", reason)
                step.write(out.rows, out.samples)
        elif rule == "probe":
            if not Path(out[0]).exists():
                results.atomic_write_text(out[0], json.dumps(
                    {"probe_error": reason, "gpus": [], "gpu_reason": reason,
                     "ceilings": {}}, indent=2, sort_keys=True) + "\n")
        else:
            return False
        for log in getattr(job, "log", None) or []:
            try:
                with open(log, "a", encoding="utf-8") as fh:
                    fh.write(f"[gpubench] {reason}; the driver recorded the step's rows\n")
            except OSError:
                pass
        return all(Path(f).exists() for f in out)


def stored_errors(paths: Iterable[str]) -> str:
    """``gpubench: N stored step(s) have error rows ...``: each rows file of ``paths``
    with ``error`` rows (how many, the first reason) and the command that measures them
    again; '' when none has (or none exists yet)."""
    import pandas as pd

    lines, again = [], []
    for path in paths:
        try:
            frame = pd.read_csv(path, usecols=["status", "reason"],
                                dtype={"reason": str}, keep_default_na=False)
        except (OSError, ValueError):
            continue  # not there yet, or not a rows file: nothing stored
        errors = frame[frame["status"] == "error"]
        if errors.empty:
            continue
        reason = " ".join(str(errors["reason"].iloc[0]).split())
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        lines.append(f"  {Path(path).name.removesuffix('.csv')}: {len(errors)} of "
                     f"{len(frame)} rows error ({reason})")
        again.append(path)
    if not lines:
        return ""
    return "\n".join([
        f"gpubench: {len(lines)} stored step(s) have error rows; a run keeps a finished "
        "step as it is, so these are not measured again:", *lines,
        "To measure them again: snakemake <same options> --forcerun "
        + " ".join(shlex.quote(p) for p in again)])


def failed_jobs_message(jobs: Iterable[Any], argv: Sequence[str]) -> str:
    """The last words of a failed run: each job that failed for good (rule, wildcards,
    log) and the command that runs them again (the same command: their outputs were
    removed, the finished steps are kept); '' when none failed."""
    lines = []
    for job in jobs:
        for member in (list(job.jobs) if job.is_group() else [job]):
            wildcards = getattr(member, "wildcards", None) or {}
            items = wildcards.items() if hasattr(wildcards, "items") else []
            name = " ".join([member.rule.name, *(f"{k}={v}" for k, v in items)])
            logs = ", ".join(str(f) for f in getattr(member, "log", None) or [])
            lines.append(f"  {name}" + (f" (log: {logs})" if logs else ""))
    if not lines:
        return ""
    return "\n".join([f"gpubench: {len(lines)} job(s) failed:", *sorted(lines),
                      "To run them again (finished steps are kept): " + shlex.join(argv)])


def _amend_rows(path: str, reason: str, read: Callable[[str], Any]) -> bool:
    """Whether a step's rows file is whole (the step wrote it before its job ended); if
    so, its ``error`` rows get ``reason`` appended (the SLURM state and job id)."""
    from gpubench import results

    if not Path(path).exists():
        return False
    try:
        frame = read(path)
    except results.SchemaError:
        return False  # cut short: written again in full
    note = reason.split(";")[0]
    errors = (frame["status"] == "error") & ~frame["reason"].str.contains(note, regex=False)
    if errors.any():
        frame.loc[errors, "reason"] = frame.loc[errors, "reason"] + "; " + note
        results.atomic_write_csv(path, frame)
    return True
