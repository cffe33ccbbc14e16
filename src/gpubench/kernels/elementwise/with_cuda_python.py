"""elementwise in CUDA Python: ``elementwise.cu`` compiled by NVRTC, launched by cuda.core.

One fused launch per call (each input read once, the output written once) on the
backend's stream: 256 threads per block, a grid-stride grid of at most one wave (SMs x
resident blocks from the occupancy API), 16-byte loads. The CuPy ``raw_kernel`` row
launches the same source with the same geometry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.kernels.elementwise import INPUTS
from gpubench.spec import BuildContext, implementation


def work_items(n: int, dtype: str) -> int:
    """Threads' work items: one 16-byte vector (4 floats or 2 doubles) each."""
    width = 16 // np.dtype(dtype).itemsize
    return -(-n // width)


def entry_point(variant: str, dtype: str) -> str:
    """``elementwise_<variant>_<f32|f64>``; arguments (inputs..., out, long long n)."""
    from gpubench import cuda_sources

    return f"elementwise_{variant}_{cuda_sources.suffix(dtype)}"


@implementation("elementwise", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    case = ctx.case
    ins = [ctx.inputs[name] for name in INPUTS[case.variant]]
    out = ctx.out("out")
    n = out.size
    kernel = be.kernel(cuda_sources.source("elementwise"), entry_point(case.variant, case.dtype))
    grid = be.grid_for(kernel, work_items(n, case.dtype))
    args = (*(x.ptr for x in ins), out.ptr, np.int64(n))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args)

    return call
