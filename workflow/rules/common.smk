"""Helpers for the rules: config checks, paths, per-step parameters."""

import functools
import getpass
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.settings.types import DeploymentMethod

SRC = Path(workflow.basedir).parent / "src"
sys.path.insert(0, str(SRC))

from gpubench.backends import BACKENDS, split_backend_id  # noqa: E402
from gpubench.config import ConfigError, validate_config  # noqa: E402
from gpubench import environments as envs  # noqa: E402
from gpubench import runlock  # noqa: E402
from gpubench.mpi import JOBS as MPI_JOBS  # noqa: E402
from gpubench.mpi import launch as mpi_launch  # noqa: E402

try:
    config.update(validate_config(config))
except ConfigError as exc:
    raise WorkflowError(f"invalid configuration: {exc}") from None

RESULTS = config["results_dir"]
LOGS = config["logs_dir"]
SCRIPTS = Path(workflow.basedir) / "scripts"


def _check_writable(folder):
    """Fail before any job starts if results cannot be written."""
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        probe = Path(folder) / f".write-test-{os.getpid()}"  # one per run: no race
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise WorkflowError(
            f"config key results_dir/logs_dir: cannot write to {folder!r}: {exc}"
        ) from None


_check_writable(RESULTS)
_check_writable(LOGS)


def _site_settings():
    """(where, name, value) of the slurm_partition/slurm_account a profile sets."""
    settings = workflow.resource_settings
    for rule, resources in [
        ("default-resources", settings.default_resources),
        *settings.overwrite_resources.items(),
    ]:
        where = rule if rule == "default-resources" else f"set-resources.{rule}"
        for name, value in dict(getattr(resources, "_data", resources) or {}).items():
            raw = getattr(value, "raw", value)
            if name in ("slurm_partition", "slurm_account") and isinstance(raw, str):
                yield where, name, raw.strip("'\"")


def _slurm_names(cmd):
    """Names a SLURM client lists, or None where it cannot tell (no SLURM here)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = {n.strip().rstrip("*").lower() for n in out.stdout.split()}
    return names if out.returncode == 0 and names else None


_SLURM_NAME = re.compile(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*")


def _check_site_settings():
    """Fail before any job on a profile's SITE_* placeholder, on a partition or account
    that is not a plain SLURM name, or (where sinfo/sacctmgr answer) on one this cluster
    does not have."""
    found = [(w, n, v) for w, n, v in _site_settings() if "SITE_" in v]
    if found:
        raise WorkflowError(
            "the profile still has site placeholders: "
            + "; ".join(f"{w}.{n}: {v}" for w, n, v in found)
            + ". Set them to your cluster's values in the profile (profiles/slurm/"
            "config.yaml; README 'Running on a SLURM cluster')"
        )
    # sbatch is started through a shell: a name that is not a plain SLURM name (one a
    # shell could read as a command, `a; rm -rf ~`) is refused whoever would quote it.
    for where, name, value in _site_settings():
        if not _SLURM_NAME.fullmatch(value):
            raise WorkflowError(
                f"profile setting {where}.{name}: {value!r} is not a SLURM name "
                "(letters, digits, '_', '.', '-'; several separated by commas)"
            )
    known = {
        "slurm_partition": lambda: _slurm_names(["sinfo", "-h", "-o", "%P"]),
        "slurm_account": lambda: _slurm_names(
            [
                "sacctmgr",
                "-n",
                "-P",
                "-s",
                "list",
                "user",
                getpass.getuser(),
                "format=account",
            ]
        ),
    }
    for where, name, value in _site_settings():
        names = known[name]() if shutil.which("sinfo") else None
        if names is not None and value.lower() not in names:
            raise WorkflowError(
                f"profile setting {where}.{name}: {value!r} is not "
                + ("a partition" if name == "slurm_partition" else "an account")
                + f" of this cluster (it has: {', '.join(sorted(names))})"
            )


_check_site_settings()


def _claim_results_dir():
    """A second run writing to the same results_dir from another working directory
    (Snakemake's own lock covers only its working directory) is refused before its
    first job: it would delete and rewrite the steps' files under the first run."""
    try:
        runlock.claim(RESULTS)
    except runlock.FolderBusy as exc:
        raise WorkflowError(str(exc)) from None


onstart:
    _claim_results_dir()


wildcard_constraints:
    backend="|".join(sorted(BACKENDS)),
    env="[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*",
    job="|".join(MPI_JOBS),
    ranks="[0-9]+",


def final_outputs():
    return [
        f"{RESULTS}/report/index.html",
        f"{RESULTS}/report/summary.md",
        *mpi_csv(),
    ]


# -- MPI jobs (rules/mpi.smk, README "MPI jobs") --------------------------------------------

MPI = config.get("mpi") or {}
#: backends that have a single-process several-device version (the multi_gpu job)
MULTI_DEVICE_BACKENDS = ("cupy-gpu", "jax-gpu", "jax-cpu")


def mpi_enabled():
    return str(MPI.get("enabled", "auto")).lower() != "false" and bool(
        MPI.get("backends")
    )


def mpi_steps():
    """(job, backend, ranks) of every MPI step: enabled jobs x backends x ranks.

    Only backends also in the top-level ``backends`` list: restricting a run to some
    frameworks restricts its MPI steps too (and the environments they need).
    """
    if not mpi_enabled():
        return []
    steps = []
    jobs = MPI.get("jobs") or {}
    for job in MPI_JOBS:
        if job not in jobs or not (jobs[job] or {}).get("enabled", True):
            continue
        for backend in MPI["backends"]:
            if backend not in config["backends"]:
                continue
            if job == "multi_gpu" and backend not in MULTI_DEVICE_BACKENDS:
                continue
            for ranks in MPI.get("ranks", [1, 2]):
                if job == "p2p" and ranks < 2:
                    continue
                steps.append((job, backend, ranks))
    return steps


def mpi_rows():
    return [f"{RESULTS}/mpi/raw/{j}.{b}.n{n}.csv" for j, b, n in mpi_steps()]


def mpi_samples():
    return [f"{RESULTS}/mpi/raw/{j}.{b}.n{n}.samples.csv" for j, b, n in mpi_steps()]


def mpi_csv():
    """mpi.csv when any MPI step is configured (the report takes it as input)."""
    return [f"{RESULTS}/mpi.csv"] if mpi_steps() else []


def mpi_launcher_kind(wildcards):
    return mpi_launch.choose_kind(MPI.get("launcher", "auto"))


def mpi_runtime_min(wildcards):
    """SLURM runtime (minutes): the step's time limit plus start-up, rounded up."""
    return int(float(MPI.get("time_limit_s", 600)) // 60) + 5


def mpi_backstop_s(wildcards):
    """The shell's timeout around the whole step: the limit plus a margin to write rows."""
    return int(float(MPI.get("time_limit_s", 600))) + 120


def mpi_step_config(wildcards):
    """What an MPI step reads, as JSON (a change re-runs it)."""
    return json.dumps(
        {"mpi": MPI, "harness": {"seed": config["harness"].get("seed", 0)}},
        sort_keys=True,
    )


def mpi_ranks_python(wildcards):
    """The ranks' interpreter: the framework's venv (mode venv) or the step's own."""
    if ENV_MODE == "venv":
        return f"{VENVS}/{backend_env(wildcards.backend)}/bin/python"
    return "python" if ENV_MODE == "conda" else sys.executable


def raw_timings():
    return expand(f"{RESULTS}/raw/{{backend}}.csv", backend=config["backends"])


def raw_samples():
    return expand(f"{RESULTS}/raw/{{backend}}.samples.csv", backend=config["backends"])


def step_python(wildcards):
    """Interpreter that starts a step's script: the one running Snakemake, or the conda
    env's (mode conda). A framework's step re-executes itself in its venv (mode venv).
    """
    return "python" if ENV_MODE == "conda" else sys.executable


def step_threads(wildcards):
    """Benchmark steps take every core they are given so that no two overlap."""
    return config.get("step_threads") or workflow.cores


def step_gpus(wildcards):
    """GPU steps ask for one GPU so a scheduler (or --resources gpu=1) serialises them."""
    return 1 if split_backend_id(wildcards.backend)[1] == "gpu" else 0


def probe_gpus(wildcards):
    """The probe measures the GPU's ceilings when any GPU step is configured."""
    return int(any(split_backend_id(b)[1] == "gpu" for b in config["backends"]))


def step_group(wildcards):
    """GPU steps form group "gpu" (a profile's group-components puts them in one job on
    one GPU); CPU steps are not grouped. Groups matter only with a cluster executor."""
    return "gpu" if step_gpus(wildcards) else None


def probe_group(wildcards):
    """The probe measures the GPU's ceilings: in the GPU steps' group when it uses one."""
    return "gpu" if probe_gpus(wildcards) else None


_ATTEMPTS_VAR = (
    "GPUBENCH_STEP_ATTEMPTS"  # set here, not by the user: no envvars directive
)


def step_attempts():
    """1 + --retries. Retries are counted by the Snakemake that schedules the jobs (its
    settings are known once the DAG is built); a job that a cluster executor starts runs
    with --retries 0 and inherits GPUBENCH_STEP_ATTEMPTS from it."""
    if _ATTEMPTS_VAR not in os.environ:
        settings = getattr(workflow, "execution_settings", None)
        if settings is None:  # a dry run
            return 1
        os.environ[_ATTEMPTS_VAR] = str(settings.retries + 1)
    return int(os.environ[_ATTEMPTS_VAR])


def step_guard_args(wildcards, resources):
    """A benchmark step runs watched (gpubench.cli.guard_step): stopped before the job's
    runtime ends, retried while attempts are left, then recorded as error rows."""
    attempts = step_attempts()
    runtime = resources.get("runtime") or 0
    return (
        f"--attempt {resources.attempt} --attempts {max(attempts, resources.attempt)}"
        f" --time-limit-min {runtime if isinstance(runtime, int) else 0}"
    )


def step_config(wildcards):
    """The part of the config a benchmark step reads, as JSON (a change re-runs it)."""
    keys = (
        "threads",
        "gpu_modes",
        "gpu_cold_max_bytes",
        "harness",
        "gpu_harness",
        "kernels",
        "energy",
    )
    return json.dumps({k: config[k] for k in keys if k in config}, sort_keys=True)


# -- environments (README "Environments") -------------------------------------------------

ENV_CFG = envs.env_config(config)
ENV_MODE = ENV_CFG["mode"]
CUDA = ENV_CFG["cuda"]
VENVS = str(Path(ENV_CFG["venv_dir"]))
SPECS = Path(ENV_CFG["spec_dir"])
_CONDA_SDM = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method

if ENV_MODE == "conda" and not _CONDA_SDM:
    raise WorkflowError(
        "config key environments.mode: conda needs --sdm conda (or use mode venv or system)"
    )
if _CONDA_SDM and ENV_MODE != "conda":
    raise WorkflowError(
        f"--sdm conda is given but config key environments.mode is {ENV_MODE!r}; "
        "set environments.mode: conda for conda environments"
    )


def backend_env(backend):
    """Name of a backend's environment: numpy, jax-cpu, jax-cuda12, ..."""
    return envs.env_name(backend, CUDA)


if ENV_MODE == "venv":
    for _i, _backend in enumerate(config["backends"]):
        _spec = SPECS / f"{backend_env(_backend)}.txt"
        if not _spec.is_file():
            raise WorkflowError(
                f"config key backends[{_i}]: {_backend} has no pip spec {_spec} "
                f"(environments.spec_dir); add it or use environments.mode: system"
            )


def env_locks():
    """Build locks of the environments the configured backends need (mode venv)."""
    if ENV_MODE != "venv":
        return []
    names = sorted({backend_env(b) for b in config["backends"]})
    return expand(f"{RESULTS}/envs/{{env}}/lock.txt", env=names)


def env_spec_inputs(wildcards):
    """A pip spec and the files it includes: editing any of them rebuilds the env."""
    files = [str(p) for p in envs.spec_files(SPECS / f"{wildcards.env}.txt")]
    return {"spec": files[0], "includes": files[1:]}


@functools.cache
def _gpus_here():
    return envs.visible_gpus()


def env_build(wildcards):
    """yes; or, for a GPU env, no-gpu (gpu_envs auto on a host without a GPU) or never."""
    policy = ENV_CFG["gpu_envs"]
    if not envs.is_gpu_env(wildcards.env) or policy == "always":
        return "yes"
    if policy == "never":
        return "never"
    return "yes" if _gpus_here()[0] else "no-gpu"


def env_python(wildcards):
    return ENV_CFG["python"] or sys.executable


def env_pip_args(wildcards):
    return " ".join(shlex.quote(f"--pip-arg={a}") for a in ENV_CFG["pip_args"])


def step_env_inputs(wildcards):
    """A framework's step depends on its environment's build lock (mode venv)."""
    if ENV_MODE != "venv":
        return {}
    return {"env_lock": f"{RESULTS}/envs/{backend_env(wildcards.backend)}/lock.txt"}


def step_env_args(wildcards):
    """How run.py finds the step's environment."""
    env = backend_env(wildcards.backend)
    if ENV_MODE == "venv":
        args = [
            "--env-mode",
            "venv",
            "--env-name",
            env,
            "--env-lock",
            f"{RESULTS}/envs/{env}/lock.txt",
            "--env-python",
            f"{VENVS}/{env}/bin/python",
        ]
    elif ENV_MODE == "conda":
        args = ["--env-mode", "conda", "--env-name", env]
    else:
        args = ["--env-mode", "system", "--env-name", "system"]
    return shlex.join(args)


def step_locks():
    """The lock of the environment each step ran in (the report lists their versions)."""
    return expand(f"{RESULTS}/raw/{{backend}}.lock.txt", backend=config["backends"])


def step_conda_env(wildcards):
    """The framework's conda-forge spec (mode conda, with --sdm conda)."""
    if ENV_MODE != "conda":
        return None
    return f"../envs/{backend_env(wildcards.backend)}.yaml"


def driver_conda_env(wildcards):
    """The analysis stack for probe, collect and report (mode conda)."""
    return "../envs/driver.yaml" if ENV_MODE == "conda" else None


def report_mpi_inputs(wildcards):
    """mpi.csv and mpi_samples.csv when the run includes MPI steps (mpi.enabled not
    false and at least one step planned); none otherwise: the report says MPI was not run.
    """
    if not mpi_csv():
        return {}
    return {
        "mpi": f"{RESULTS}/mpi.csv",
        "mpi_samples": f"{RESULTS}/mpi_samples.csv",
    }


def report_mpi_args(wildcards, input):
    """The report's --mpi/--mpi-samples flags, when those inputs are present."""
    if "mpi" not in input.keys():
        return ""
    return f"--mpi {input.mpi} --mpi-samples {input.mpi_samples}"
