"""moving_average as a CuPy RawKernel: the same ``moving_average.cu`` as the CUDA Python row.

CuPy compiles the file with NVRTC (``cupy.RawModule``, once per process) and launches
it on CuPy's current stream with the CUDA Python row's geometry: 256 threads, tiles of
1024 outputs (plus the window halo) in dynamic shared memory, at most one wave.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.moving_average.with_cuda_python import launch_plan
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("moving_average"), options=("-std=c++17",))


@implementation("moving_average", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.backends.cupy.adapter import cupy_raw_grid
    from gpubench.cuda_launch import THREADS

    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    window = int(ctx.case.params["window"])
    fn = _module().get_function(f"moving_average_{cuda_sources.suffix(ctx.case.dtype)}")
    items, shmem = launch_plan(rows, length, window, ctx.case.dtype, THREADS)
    grid = (cupy_raw_grid(fn, items, shmem),)
    args = (x, out, np.int64(rows), np.int64(length), np.int64(window))

    def call() -> None:
        fn(grid, (THREADS,), args, shared_mem=shmem)

    return call
