"""reduction in CUDA Python: ``reduction.cu`` compiled by NVRTC, launched by cuda.core.

Two launches per call on the backend's stream, no atomics (the same bits every call):
the variant's pass writes one double partial per block (two for weighted_mean: sum w*a
and sum w), then ``reduction_finalize[_ratio]`` sums the partials in one block of 256
threads and writes the 0-d result in the input dtype. Pass 1: 256 threads, a
grid-stride grid of at most one wave (SMs x resident blocks from the occupancy API),
16-byte loads. float32 accumulates in float per thread and block, in double across
blocks (see the ``.cu``). The CuPy ``raw_kernel`` row launches the same source with the
same geometry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.kernels.reduction import INPUTS
from gpubench.spec import BuildContext, implementation


def work_items(n: int, dtype: str) -> int:
    """Threads' work items in pass 1: one 16-byte vector (4 floats or 2 doubles) each."""
    width = 16 // np.dtype(dtype).itemsize
    return -(-n // width)


def entry_points(variant: str, dtype: str) -> tuple[str, str]:
    """(pass 1, finalize) entry names; finalize divides for weighted_mean."""
    from gpubench import cuda_sources

    sfx = cuda_sources.suffix(dtype)
    final = "reduction_finalize_ratio" if variant == "weighted_mean" else "reduction_finalize"
    return f"reduction_{variant}_{sfx}", f"{final}_{sfx}"


@implementation("reduction", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], object]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    case = ctx.case
    ins = [ctx.inputs[name] for name in INPUTS[case.variant]]
    n = ins[0].size
    source = cuda_sources.source("reduction")
    first, final = entry_points(case.variant, case.dtype)
    k1, k2 = be.kernel(source, first), be.kernel(source, final)
    grid = be.grid_for(k1, work_items(n, case.dtype))
    partials = be.empty((2 * grid,), "float64")  # numerators, then weight sums
    out = be.empty((), case.dtype)
    args1 = (*(x.ptr for x in ins), partials.ptr, np.int64(n))
    args2 = (partials.ptr, np.int64(grid), out.ptr)

    def call() -> object:
        be.launch(k1, grid, THREADS, *args1)
        be.launch(k2, 1, THREADS, *args2)
        return out

    return call
