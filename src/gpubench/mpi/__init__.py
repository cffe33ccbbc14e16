"""MPI + GPU jobs (the workshop book, chapter 9): one Snakemake step per (job, backend, ranks).

The step's parent (:mod:`gpubench.mpi.step`) never imports MPI or a framework: it
checks that they can run, builds the launcher command (:mod:`gpubench.mpi.launch`),
runs the ranks (:mod:`gpubench.mpi.worker`) under a time limit and turns whatever came
back into tidy rows (:mod:`gpubench.mpi.schema`). Each job is written once
(:mod:`gpubench.mpi.jobs`) against the framework's backend (:mod:`gpubench.backends`),
the same adapter the single-device rows use.
"""

from __future__ import annotations

#: every job, in the order the report lists them
JOBS: tuple[str, ...] = ("device_selection", "reduction", "matmul", "monte_carlo_pi",
                         "grad_avg", "halo", "p2p", "allreduce", "multi_gpu")

#: jobs that run as one process driving several devices (no launcher)
SINGLE_PROCESS_JOBS: tuple[str, ...] = ("multi_gpu",)

from pathlib import Path  # noqa: E402

#: CUDA C of the jobs' own kernels (CUDA Python ranks compile it with NVRTC)
KERNEL_SOURCE = Path(__file__).resolve().parent / "mpi_kernels.cu"


def backend_class(backend_id: str) -> type:
    """The Backend class of a backend id, without importing its framework."""
    from gpubench.backends import backend_class as of

    return of(backend_id)


def mpi_backends() -> tuple[str, ...]:
    """Backends with an MPI version: every registered backend whose class says it runs
    the MPI jobs (``mpi = True``), plugins' included (``GPUBENCH_PLUGINS``), so
    registering a backend is all it takes. Built in: NumPy on CPU ranks, CuPy, Numba,
    JAX and CUDA Python on GPUs, and JAX on CPU ranks (the JAX path without a GPU)."""
    from gpubench.backends import BACKENDS, load_plugins

    load_plugins()
    return tuple(b for b in BACKENDS if getattr(backend_class(b), "mpi", False))
