"""Glue between the rules and gpubench.workflow, where the logic lives (unit-tested in
tests/test_workflow_module.py): the checks before any job, and the input functions and
parameters the rules call."""

import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.settings.types import DeploymentMethod

# The gpubench package: installed into the Python running Snakemake (`make run`,
# `pip install -e .`), or from src/ through PYTHONPATH=src on a host without the install.
try:
    import gpubench
except ModuleNotFoundError:
    raise WorkflowError(
        f"the gpubench package is not installed in {sys.executable}: run `make run` "
        "(it installs the project into .venv), or `pip install -e .` in this clone, or "
        f"set PYTHONPATH={Path(workflow.basedir).parent / 'src'}"
    ) from None

# "gw": the name "workflow" is Snakemake's
from gpubench import workflow as gw
from gpubench import slurm as gslurm
from gpubench.backends import BACKENDS
from gpubench.mpi import JOBS as MPI_JOBS


def _retries():
    """--retries of the Snakemake that schedules the jobs; None in a dry run."""
    settings = getattr(workflow, "execution_settings", None)
    return None if settings is None else settings.retries


# A bad config, an unwritable or foreign results folder, a profile's site placeholder or
# unknown partition, or environments.mode against --sdm: refused here, naming the key.
_resources = workflow.resource_settings
_sdm = workflow.deployment_settings.deployment_method
try:
    PLAN = gw.prepare(
        config,
        default_resources=_resources.default_resources,
        overwrite_resources=_resources.overwrite_resources,
        conda_sdm=DeploymentMethod.CONDA in _sdm,
        cores=lambda: workflow.cores,
        retries=_retries,
        overwrite_config=workflow.config_settings.overwrite_config,
        configfiles=workflow.overwrite_configfiles or (),
    )
except gw.SetupError as exc:
    raise WorkflowError(str(exc)) from None
config.update(PLAN.config)

# Under `executor: slurm`: the plugin's executor with a status check that holds (docs/slurm.md,
# "When SLURM misbehaves"): a job SLURM ends is retried or recorded as the step's error
# rows (PLAN.salvage), a silent scheduler is noticed, Ctrl-C cancels this run's jobs.
try:
    gslurm.install(salvage=PLAN.salvage, results=PLAN.results)
except gslurm.SettingError as exc:
    raise WorkflowError(str(exc)) from None

# A plain re-run keeps finished steps, those stored as error rows too: say which, and the
# --forcerun that measures them again (the driver only: job steps parse this file too).
if workflow.is_main_process:
    _said = PLAN.stored_errors()
    if _said:
        print(_said, file=sys.stderr, flush=True)

RESULTS = PLAN.results
LOGS = PLAN.logs
VENVS = PLAN.venvs
# the interpreter running Snakemake, one name for it (gpubench.workflow.canonical_python)
DRIVER_PYTHON = PLAN.python
SCRIPTS = Path(workflow.basedir) / "scripts"


def steps_to_run():
    """The benchmark steps this run executes (the DAG's jobs that need to run)."""
    return sorted(
        {
            job.wildcards.backend
            for job in workflow.dag.needrun_jobs()
            if job.rule.name == "run_backend"
        }
    )


onstart:
    try:
        gw.claim_results_dir(RESULTS)
    except gw.SetupError as exc:
        raise WorkflowError(str(exc)) from None
    # progress lines: measurements done of planned, time left (gpubench.progress)
    PLAN.start_progress(steps_to_run())


onsuccess:
    PLAN.stop_progress()


onerror:
    PLAN.stop_progress()
    # the failed jobs and the command that runs them again, as the run's last words
    said = gw.failed_jobs_message(
        getattr(workflow.scheduler, "failed", ()), sys.argv
    )
    if said:
        print(said, file=sys.stderr, flush=True)


wildcard_constraints:
    backend="|".join(sorted(BACKENDS)),
    env="[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*",
    job="|".join(MPI_JOBS),
    ranks="[0-9]+",


# What the rules call (gpubench.workflow.Plan says what each one does).
final_outputs = PLAN.final_outputs
raw_timings = PLAN.raw_timings
raw_samples = PLAN.raw_samples
step_locks = PLAN.step_locks
suite_file = PLAN.suite_file
suite_info = PLAN.suite_info
# benchmark steps and the probe
step_python = PLAN.step_python
step_threads = PLAN.step_threads
step_gpus = PLAN.step_gpus
step_group = PLAN.step_group
step_config = PLAN.step_config
step_guard_args = PLAN.step_guard_args
step_compile_cache_args = PLAN.step_compile_cache_args
probe_gpus = PLAN.probe_gpus
probe_group = PLAN.probe_group
# environments
env_locks = PLAN.env_locks
env_spec_inputs = PLAN.env_spec_inputs
env_build = PLAN.env_build
env_python = PLAN.env_python
env_pip_args = PLAN.env_pip_args
step_env_inputs = PLAN.step_env_inputs
step_env_args = PLAN.step_env_args
step_conda_env = PLAN.step_conda_env
driver_conda_env = PLAN.driver_conda_env
# MPI jobs and the report's MPI inputs
mpi_rows = PLAN.mpi_rows
mpi_samples = PLAN.mpi_samples
mpi_launcher_kind = PLAN.mpi_launcher_kind
mpi_runtime_min = PLAN.mpi_runtime_min
mpi_backstop_s = PLAN.mpi_backstop_s
mpi_step_config = PLAN.mpi_step_config
mpi_ranks_python = PLAN.mpi_ranks_python
report_mpi_inputs = PLAN.report_mpi_inputs
report_mpi_args = PLAN.report_mpi_args
