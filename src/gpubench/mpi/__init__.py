"""MPI + GPU jobs (the workshop book, chapter 9): one Snakemake step per (job, backend, ranks).

The step's parent (:mod:`gpubench.mpi.step`) never imports MPI or a framework: it
checks that they can run, builds the launcher command (:mod:`gpubench.mpi.launch`),
runs the ranks (:mod:`gpubench.mpi.worker`) under a time limit and turns whatever came
back into tidy rows (:mod:`gpubench.mpi.schema`). Each job is written once, in its own
module of :mod:`gpubench.mpi.jobs` (found by a scan of that package), against the
framework's backend (:mod:`gpubench.backends`), the same adapter the single-device rows
use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpubench.mpi.catalog import MpiJob

def backend_class(backend_id: str) -> type:
    """The Backend class of a backend id, without importing its framework."""
    from gpubench.backends import backend_class as of

    return of(backend_id)


def mpi_backends() -> tuple[str, ...]:
    """Backends with an MPI version: every registered backend that some job runs on
    (:func:`job_runs_on`), plugins' included (``GPUBENCH_PLUGINS``), so registering a
    backend is all it takes. Built in: NumPy on CPU ranks, CuPy, Numba, JAX and CUDA
    Python on GPUs, JAX on CPU ranks (the JAX path without a GPU), and PyTorch on GPUs
    for the single-process several-GPU job only."""
    from gpubench.backends import BACKENDS, load_plugins

    load_plugins()
    return tuple(b for b in BACKENDS if any(job_runs_on(j, b) for j in catalog_of_jobs()))


def planned_steps(config: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(job, backend, ranks) of every MPI step of a run's config: enabled jobs x
    ``mpi.backends`` x ``mpi.ranks``, each job only on backends it runs on and from its
    fewest ranks. Only backends also in the top-level ``backends`` list: restricting a
    run to some frameworks restricts its MPI steps too (and the environments they need).
    ``mpi.enabled: false`` or no MPI backends: none."""
    mpi = config.get("mpi") or {}
    if str(mpi.get("enabled", "auto")).lower() == "false" or not mpi.get("backends"):
        return []
    jobs = mpi.get("jobs") or {}
    steps = []
    for job, facts in catalog_of_jobs().items():
        if job not in jobs or not (jobs[job] or {}).get("enabled", True):
            continue
        for backend in mpi["backends"]:
            if backend not in config.get("backends", ()) or not job_runs_on(job, backend):
                continue
            steps += [(job, backend, int(r)) for r in mpi.get("ranks", [1, 2])
                      if int(r) >= facts.min_ranks]
    return steps


def job_runs_on(job: str, backend_id: str) -> bool:
    """Whether ``job`` has a version on this backend: the backend class's facts have the
    fact the job :attr:`~gpubench.mpi.catalog.MpiJob.needs` (``mpi``, ``multi_device``,
    ...)."""
    return bool(getattr(backend_class(backend_id).facts, catalog_of_jobs()[job].needs))


def catalog_of_jobs() -> dict[str, MpiJob]:
    """Every MPI job's facts (:class:`~gpubench.mpi.catalog.MpiJob`), in the order the
    report lists them: declared once each, on the job's function in its module of
    :mod:`gpubench.mpi.jobs` (the package's scan imports them all; they import NumPy,
    never MPI or a framework)."""
    from gpubench.mpi import catalog, jobs  # noqa: F401  (jobs declares them)

    return catalog.registered()


def jobs_where(**facts: Any) -> tuple[str, ...]:
    """The jobs, in report order, whose facts have these values (``buffers=True``, ...)."""
    return tuple(name for name, job in catalog_of_jobs().items()
                 if all(getattr(job, k) == v for k, v in facts.items()))


def __getattr__(name: str) -> tuple[str, ...]:
    """``JOBS`` (every job, in report order) and ``SINGLE_PROCESS_JOBS`` (one process
    driving several devices, no launcher): read from the jobs' facts when first asked."""
    if name == "JOBS":
        return tuple(catalog_of_jobs())
    if name == "SINGLE_PROCESS_JOBS":
        return jobs_where(single_process=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
