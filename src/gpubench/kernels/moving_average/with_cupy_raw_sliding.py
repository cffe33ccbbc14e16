"""moving_average as a CuPy RawKernel with a sliding window: ``moving_average_sliding_<dtype>``
of the same ``moving_average.cu`` module as the ``raw_kernel`` row, launched with the
CUDA Python ``nvrtc_sliding`` row's geometry (see that module)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.kernels.moving_average.with_cuda_python_sliding import sliding_plan
from gpubench.kernels.moving_average.with_cupy_raw import _module
from gpubench.spec import BuildContext, implementation


@implementation("moving_average", "cupy", "raw_kernel_sliding", devices=("gpu",))
def raw_kernel_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS, cupy_raw_grid

    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    window = int(ctx.case.params["window"])
    fn = _module().get_function(
        f"moving_average_sliding_{cuda_sources.suffix(ctx.case.dtype)}")
    items, shmem = sliding_plan(rows, length, window, ctx.case.dtype, THREADS)
    grid = (cupy_raw_grid(fn, items, shmem),)
    args = (x, out, np.int64(rows), np.int64(length), np.int64(window))

    def call() -> None:
        fn(grid, (THREADS,), args, shared_mem=shmem)

    return call
