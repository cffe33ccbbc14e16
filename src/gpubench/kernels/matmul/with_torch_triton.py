"""matmul in PyTorch through Triton: the tiled ``tl.dot`` GEMM of Triton's tutorial.

Each program computes a ``BM x BN`` tile of C, looping over K in ``BK`` steps with
masked loads; programs are grouped along M (``GROUP``) so neighbouring programs share
tiles of B in L2. ``input_precision="ieee"``: float32 products in full precision, not
TF32 (which would miss the tolerance 25-fold); float64 uses the FP64 tensor-core path
where Triton has one. Without ``triton`` installed the row is ``unavailable``; on the
CPU it runs only under Triton's interpreter (``TRITON_INTERPRET=1``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: (BM, BN, BK, warps, stages) per dtype: float64 tiles are half as wide in K
TILES = {"float32": (128, 128, 32, 8, 3), "float64": (64, 64, 16, 4, 3)}
GROUP = 8


@functools.cache
def _kernel() -> Any:
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, GROUP: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(n, BM)
        tiles_n = tl.cdiv(n, BN)
        in_group = GROUP * tiles_n
        first_m = (pid // in_group) * GROUP
        group_m = tl.minimum(tiles_m - first_m, GROUP)
        pid_m = first_m + (pid % in_group) % group_m
        pid_n = (pid % in_group) // group_m
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=c_ptr.dtype.element_ty)
        for k in range(0, n, BK):
            a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :],
                        mask=(rm[:, None] < n) & ((k + rk)[None, :] < n), other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :],
                        mask=((k + rk)[:, None] < n) & (rn[None, :] < n), other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee",
                         out_dtype=c_ptr.dtype.element_ty)
        tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc,
                 mask=(rm[:, None] < n) & (rn[None, :] < n))

    return matmul


@implementation("matmul", "torch", "triton", devices=("gpu",))
def triton_kernel(ctx: BuildContext) -> Callable[[], None]:
    kernel = _kernel()
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = ctx.case.size
    bm, bn, bk, warps, stages = TILES[ctx.case.dtype]
    launch = kernel[(-(-n // bm) * -(-n // bn),)]

    def call() -> None:
        launch(a, b, c, n, BM=bm, BN=bn, BK=bk, GROUP=GROUP, num_warps=warps,
               num_stages=stages)

    return call
