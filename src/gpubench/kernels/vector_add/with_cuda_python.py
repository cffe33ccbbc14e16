"""vector_add in CUDA Python: ``vector_add.cu`` compiled by NVRTC, launched by cuda.core.

One launch per call on the backend's stream: 256 threads per block, a grid-stride grid
of at most one wave (SMs x resident blocks from the occupancy API), 16-byte loads. The
CuPy ``raw_kernel`` row launches the same source with the same geometry.

Unroll: each thread takes U packs per grid-stride step (all loads before any store):
``vector_add_<f32|f64>`` for U = 1, ``..._u2`` / ``..._u4``. U is :data:`DEFAULT_UNROLL`
unless the environment variable ``GPUBENCH_UNROLL`` (1, 2 or 4; anything else is a
ValueError) overrides it when the row is built: for a script measuring each U
(tools/unroll_check.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation

#: unroll factor of the launched entry point unless $GPUBENCH_UNROLL says otherwise
DEFAULT_UNROLL = 1


def work_items(n: int, dtype: str) -> int:
    """Threads' work items: one 16-byte vector (4 floats or 2 doubles) each."""
    width = 16 // np.dtype(dtype).itemsize
    return -(-n // width)


def entry_point(dtype: str) -> str:
    """``vector_add_<f32|f64>[_u2|_u4]``: the unroll factor from :func:`unroll_factor`
    (:data:`DEFAULT_UNROLL`, or ``$GPUBENCH_UNROLL``)."""
    from gpubench import cuda_sources
    from gpubench.cuda_launch import unroll_factor, unrolled

    return unrolled(f"vector_add_{cuda_sources.suffix(dtype)}", unroll_factor(DEFAULT_UNROLL))


@implementation("vector_add", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = a.size
    kernel = be.kernel(cuda_sources.source("vector_add"), entry_point(ctx.case.dtype))
    grid = be.grid_for(kernel, work_items(n, ctx.case.dtype))
    args = (a.ptr, b.ptr, c.ptr, np.int64(n))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args)

    return call
