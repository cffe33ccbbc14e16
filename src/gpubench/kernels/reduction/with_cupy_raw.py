"""reduction as CuPy RawKernels: the same ``reduction.cu`` as the CUDA Python row.

CuPy compiles the file with NVRTC (``cupy.RawModule``, once per process) and launches,
on CuPy's current stream, the variant's pass (one double partial per block) and the
one-block finalize that writes the 0-d result, with the CUDA Python row's geometry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.reduction import INPUTS
from gpubench.kernels.reduction.with_cuda_python import entry_points, work_items
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("reduction"), options=("-std=c++17",))


@implementation("reduction", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    from gpubench.backends.cupy.adapter import cupy_raw_grid
    from gpubench.cuda_launch import THREADS

    case = ctx.case
    ins = [ctx.inputs[name] for name in INPUTS[case.variant]]
    n = ins[0].size
    first, final = entry_points(case.variant, case.dtype)
    k1, k2 = _module().get_function(first), _module().get_function(final)
    grid = cupy_raw_grid(k1, work_items(n, case.dtype))
    partials = cupy.empty(2 * grid, dtype=cupy.float64)  # numerators, then weight sums
    out = cupy.empty((), dtype=case.dtype)
    args1 = (*ins, partials, np.int64(n))
    args2 = (partials, np.int64(grid), out)

    def call() -> Any:
        k1((grid,), (THREADS,), args1)
        k2((1,), (THREADS,), args2)
        return out

    return call
