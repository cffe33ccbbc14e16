"""MPI + GPU jobs (seeds section 9): one Snakemake step per (job, backend, ranks).

The step's parent (:mod:`gpubench.mpi.step`) never imports MPI or a framework: it
checks that they can run, builds the launcher command (:mod:`gpubench.mpi.launch`),
runs the ranks (:mod:`gpubench.mpi.worker`) under a time limit and turns whatever came
back into tidy rows (:mod:`gpubench.mpi.schema`). Each job is written once
(:mod:`gpubench.mpi.jobs`) against a small per-framework adapter
(:mod:`gpubench.mpi.arrays`).
"""

from __future__ import annotations

#: every job, in the order the report lists them
JOBS: tuple[str, ...] = ("device_selection", "reduction", "matmul", "monte_carlo_pi",
                         "grad_avg", "halo", "p2p", "allreduce", "multi_gpu")

#: backends with an MPI version: the frameworks the seeds pair with MPI (NumPy on CPU
#: ranks; JAX also on CPU ranks, which tests the JAX path without a GPU)
MPI_BACKENDS: tuple[str, ...] = ("numpy-cpu", "jax-cpu", "cupy-gpu", "numba-gpu", "jax-gpu",
                                 "cuda_python-gpu")

#: jobs that run as one process driving several devices (no launcher)
SINGLE_PROCESS_JOBS: tuple[str, ...] = ("multi_gpu",)

from pathlib import Path  # noqa: E402

#: CUDA C of the jobs' own kernels (CUDA Python ranks compile it with NVRTC)
KERNEL_SOURCE = Path(__file__).resolve().parent / "mpi_kernels.cu"
