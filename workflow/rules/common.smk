"""Helpers for the rules: config checks, paths, per-step parameters."""

import json
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

SRC = Path(workflow.basedir).parent / "src"
sys.path.insert(0, str(SRC))

from gpubench.backends import BACKENDS, split_backend_id  # noqa: E402
from gpubench.config import ConfigError, validate_config  # noqa: E402

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
        probe = Path(folder) / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise WorkflowError(
            f"config key results_dir/logs_dir: cannot write to {folder!r}: {exc}"
        ) from None


_check_writable(RESULTS)
_check_writable(LOGS)


wildcard_constraints:
    backend="|".join(sorted(BACKENDS)),


def final_outputs():
    return [f"{RESULTS}/report/index.html", f"{RESULTS}/report/summary.md"]


def raw_timings():
    return expand(f"{RESULTS}/raw/{{backend}}.csv", backend=config["backends"])


def raw_samples():
    return expand(f"{RESULTS}/raw/{{backend}}.samples.csv", backend=config["backends"])


def step_python(wildcards):
    """Interpreter for a framework's step (the one running Snakemake, for now)."""
    return sys.executable


def step_threads(wildcards):
    """Benchmark steps take every core they are given so that no two overlap."""
    return config.get("step_threads") or workflow.cores


def step_gpus(wildcards):
    """GPU steps ask for one GPU so a scheduler (or --resources gpu=1) serialises them."""
    return 1 if split_backend_id(wildcards.backend)[1] == "gpu" else 0


def probe_gpus(wildcards):
    """The probe measures the GPU's ceilings when any GPU step is configured."""
    return int(any(split_backend_id(b)[1] == "gpu" for b in config["backends"]))


def step_config(wildcards):
    """The part of the config a benchmark step reads, as JSON (a change re-runs it)."""
    keys = ("threads", "gpu_modes", "harness", "kernels")
    return json.dumps({k: config[k] for k in keys if k in config}, sort_keys=True)


def step_conda_env(wildcards):
    """The framework's own environment spec (used with --sdm conda)."""
    framework = split_backend_id(wildcards.backend)[0]
    return f"../envs/{framework}.yaml"
