"""vector_add as a CuPy RawKernel: the same ``vector_add.cu`` as the CUDA Python row.

CuPy compiles the file with NVRTC (``cupy.RawModule``, once per process) and launches
it on CuPy's current stream with the CUDA Python row's geometry: 256 threads, a
grid-stride grid of at most one wave (SMs x resident blocks from the occupancy API),
the same entry point (unroll factor: see that module).
So the two rows differ only in how the framework loads and launches the kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.vector_add.with_cuda_python import entry_point, work_items
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("vector_add"), options=("-std=c++17",))


@implementation("vector_add", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.cupy.adapter import cupy_raw_grid
    from gpubench.cuda_launch import THREADS

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = a.size
    fn = _module().get_function(entry_point(ctx.case.dtype))
    grid = (cupy_raw_grid(fn, work_items(n, ctx.case.dtype)),)
    args = (a, b, c, np.int64(n))

    def call() -> None:
        fn(grid, (THREADS,), args)

    return call
