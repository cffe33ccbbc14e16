"""moving_average in PyTorch through Triton: one program per series, a scanned running sum.

The window sum obeys ``S[i] = S[i-1] + x[i] - x[i-w]`` (x[j] = 0 for j < 0). A program
walks its row in blocks of ``BLOCK``: it loads ``d = x[i] - x[i-w]`` (the second load
was read ``w`` elements earlier, an L1/L2 hit), ``tl.cumsum`` scans the block in
float64, and the block's total carries into the next. O(1) work per element whatever
the window, each x read from memory once, out written once; float64 sums as in the
Numba versions. Without ``triton`` installed the row is ``unavailable``; on the CPU it
runs only under Triton's interpreter (``TRITON_INTERPRET=1``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

MAX_BLOCK = 1024


@functools.cache
def _kernel() -> Any:
    import triton
    import triton.language as tl

    @triton.jit
    def moving_average(x_ptr, out_ptr, length, window, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64) * length
        lanes = tl.arange(0, BLOCK)
        carry = tl.zeros((), dtype=tl.float64)
        for start in range(0, length, BLOCK):
            i = start + lanes
            inside = i < length
            x = tl.load(x_ptr + row + i, mask=inside, other=0.0).to(tl.float64)
            lag = tl.load(x_ptr + row + i - window, mask=inside & (i >= window),
                          other=0.0).to(tl.float64)
            s = tl.cumsum(x - lag, axis=0) + carry
            carry = carry + tl.sum(x - lag, axis=0)
            count = tl.minimum(i + 1, window).to(tl.float64)
            tl.store(out_ptr + row + i, (s / count).to(out_ptr.dtype.element_ty), mask=inside)

    return moving_average


@implementation("moving_average", "torch", "triton", devices=("gpu",))
def triton_kernel(ctx: BuildContext) -> Callable[[], None]:
    import triton

    kernel = _kernel()
    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    w = int(ctx.case.params["window"])
    block = min(MAX_BLOCK, triton.next_power_of_2(length))
    launch = kernel[(rows,)]

    def call() -> None:
        launch(x, out, length, w, BLOCK=block, num_warps=4)

    return call
