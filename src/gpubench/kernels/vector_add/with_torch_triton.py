"""vector_add in PyTorch through Triton: a hand-written ``triton.jit`` kernel.

Triton is PyTorch's own route to custom GPU kernels (Inductor generates the same kind
of code). One program per block of ``BLOCK`` elements, masked tail; Triton vectorises
the loads to 16 bytes when it can prove alignment (torch allocations are 256-byte
aligned and ``n`` is specialised when divisible by 16). Without ``triton`` installed
the row is ``unavailable`` with the import error. On the CPU it runs only under
Triton's interpreter (``TRITON_INTERPRET=1``), which the tests use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

BLOCK = 4096
WARPS = 8


@functools.cache
def _kernel() -> Any:
    import triton
    import triton.language as tl

    @triton.jit
    def vector_add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs, mask=mask)
        tl.store(c_ptr + offs, a + b, mask=mask)

    return vector_add


@implementation("vector_add", "torch", "triton", devices=("gpu",))
def triton_kernel(ctx: BuildContext) -> Callable[[], None]:
    kernel = _kernel()
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = a.numel()
    launch = kernel[(-(-n // BLOCK),)]

    def call() -> None:
        launch(a, b, c, n, BLOCK=BLOCK, num_warps=WARPS)

    return call
