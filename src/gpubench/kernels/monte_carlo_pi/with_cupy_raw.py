"""monte_carlo_pi as CuPy RawKernels: the Philox4x32-10 kernels of ``monte_carlo_pi.cu``.

CuPy compiles the file with NVRTC (``cupy.RawModule``, once per process) and launches,
on CuPy's current stream, the counting kernel (key = the case's seed, a call number
that goes up every call, so every call draws fresh points) and the one-thread finalize
that writes 4 * hits / n and re-zeroes the counter. Same geometry and seeds as the CUDA
Python row, so both draw the same points call for call.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.monte_carlo_pi.with_cuda_python import work_items
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("monte_carlo_pi"), options=("-std=c++17",))


@implementation("monte_carlo_pi", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    from gpubench import cuda_sources
    from gpubench.backends.cupy.adapter import cupy_raw_grid
    from gpubench.cuda_launch import THREADS

    n = ctx.case.size
    count = _module().get_function(f"monte_carlo_pi_{cuda_sources.suffix(ctx.case.dtype)}")
    finalize = _module().get_function("monte_carlo_pi_finalize")
    grid = (cupy_raw_grid(count, work_items(n, ctx.case.dtype)),)
    hits = cupy.zeros(1, dtype=cupy.uint64)  # finalize re-zeroes it after every call
    estimate = cupy.empty((), dtype=cupy.float64)
    seed, n64 = np.uint64(ctx.seed), np.int64(n)
    calls = itertools.count()

    def call() -> Any:
        count(grid, (THREADS,), (seed, np.uint64(next(calls)), n64, hits))
        finalize((1,), (1,), (hits, n64, estimate))
        return estimate

    return call
