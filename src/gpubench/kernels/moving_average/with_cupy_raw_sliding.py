"""moving_average as a CuPy RawKernel with a sliding window in registers:
``moving_average_warp<T, W, V>`` of the same ``moving_average.cu`` as the ``raw_kernel``
row, instantiated through a ``cupy.RawModule`` name expression (one compile per dtype
and window) and launched with the CUDA Python ``nvrtc_sliding`` row's geometry and
fallback to the tiled kernel and unroll factor (see that module)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.moving_average.with_cuda_python_sliding import (
    DEFAULT_UNROLL,
    warp_kernel,
    warp_threads,
)
from gpubench.spec import BuildContext, implementation


@functools.cache
def _function(name: str) -> Any:
    """The template instantiation ``name`` (a name expression), compiled once per process."""
    import cupy

    from gpubench import cuda_sources

    module = cupy.RawModule(code=cuda_sources.source("moving_average"),
                            options=("-std=c++17",), name_expressions=[name])
    return module.get_function(name)


@implementation("moving_average", "cupy", "raw_kernel_sliding", devices=("gpu",))
def raw_kernel_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.cupy.adapter import cupy_raw_grid
    from gpubench.cuda_launch import THREADS, unroll_factor
    from gpubench.kernels.moving_average.with_cupy_raw import raw_kernel

    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    warp = warp_kernel(rows, length, int(ctx.case.params["window"]), ctx.case.dtype,
                       (x.data.ptr, out.data.ptr), unroll_factor(DEFAULT_UNROLL))
    if warp is None:
        return raw_kernel(ctx)
    name, v = warp
    fn = _function(name)
    grid = (cupy_raw_grid(fn, warp_threads(rows * length, v)),)
    args = (x, out, np.int32(rows * length), np.int32(length))

    def call() -> None:
        fn(grid, (THREADS,), args)

    return call
