"""elementwise in CUDA Python: ``elementwise.cu`` compiled by NVRTC, launched by cuda.core.

One fused launch per call (each input read once, the output written once) on the
backend's stream: 256 threads per block, a grid-stride grid of at most one wave (SMs x
resident blocks from the occupancy API), 16-byte loads. The CuPy ``raw_kernel`` row
launches the same source with the same geometry.

Unroll: each thread takes U packs per grid-stride step (all loads before any compute
or store): ``elementwise_<variant>_<f32|f64>`` for U = 1, ``..._u2`` / ``..._u4``. U is
:data:`DEFAULT_UNROLL` unless the environment variable ``GPUBENCH_UNROLL`` (1, 2 or 4;
anything else is a ValueError) overrides it when the row is built: for a script
measuring each U (tools/unroll_check.py). The grid comes from the chosen
entry point's occupancy (the unrolled ones may allow fewer blocks per SM).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.kernels.elementwise import INPUTS
from gpubench.spec import BuildContext, implementation

#: unroll factor of the launched entry point unless $GPUBENCH_UNROLL says otherwise: 2,
#: measured on an H100 at 2^26 elements (evidence/copy-ceiling-targets/unroll.txt): hypot
#: and rational gain 0.5-1.5 points of the copy ceiling over U = 1 (float64 95.1-95.8 ->
#: 96.3-96.5 %), sigmoid is unchanged (92-93 % at every U) and U = 4 adds nothing over 2.
#: vector_add and moving_average stay at U = 1 (no gain from U = 2 there)
DEFAULT_UNROLL = 2


def work_items(n: int, dtype: str) -> int:
    """Threads' work items: one 16-byte vector (4 floats or 2 doubles) each."""
    width = 16 // np.dtype(dtype).itemsize
    return -(-n // width)


def entry_point(variant: str, dtype: str) -> str:
    """``elementwise_<variant>_<f32|f64>[_u2|_u4]``; arguments (inputs..., out, long long
    n). The unroll factor from :func:`unroll_factor` (:data:`DEFAULT_UNROLL`, or
    ``$GPUBENCH_UNROLL``)."""
    from gpubench import cuda_sources
    from gpubench.cuda_launch import unroll_factor, unrolled

    return unrolled(f"elementwise_{variant}_{cuda_sources.suffix(dtype)}",
                    unroll_factor(DEFAULT_UNROLL))


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
