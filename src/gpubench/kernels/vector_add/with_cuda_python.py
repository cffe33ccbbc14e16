"""vector_add in CUDA Python: ``vector_add.cu`` compiled by NVRTC, launched by cuda.core.

One launch per call on the backend's stream: 256 threads per block, a grid-stride grid
of at most one wave (SMs x resident blocks from the occupancy API), 16-byte loads. The
CuPy ``raw_kernel`` row launches the same source with the same geometry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation


def work_items(n: int, dtype: str) -> int:
    """Threads' work items: one 16-byte vector (4 floats or 2 doubles) each."""
    width = 16 // np.dtype(dtype).itemsize
    return -(-n // width)


@implementation("vector_add", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = a.size
    kernel = be.kernel(cuda_sources.source("vector_add"),
                       f"vector_add_{cuda_sources.suffix(ctx.case.dtype)}")
    grid = be.grid_for(kernel, work_items(n, ctx.case.dtype))
    args = (a.ptr, b.ptr, c.ptr, np.int64(n))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args)

    return call
