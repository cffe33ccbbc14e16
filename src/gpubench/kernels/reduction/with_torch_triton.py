"""reduction in PyTorch through Triton: two hand-written ``triton.jit`` launches, no atomics.

Like ``reduction.cu``: pass 1 runs at most one wave of programs (4 per SM), each
striding over the input in blocks of ``BLOCK`` elements with a vector accumulator in
the input's dtype, and writes its sum (weighted_mean: and its weight sum) to a float64
partial; pass 2, one program, sums the partials in float64 and writes the scalar in the
case's dtype. The order is fixed, so every call gives the same bits. Without
``triton`` installed the row is ``unavailable``; on the CPU it runs only under
Triton's interpreter (``TRITON_INTERPRET=1``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

BLOCK = 4096
WARPS = 8
PROGRAMS_PER_SM = 4
MODES = {"sumsq": 0, "dot": 1, "weighted_mean": 2}


@functools.cache
def _kernels() -> tuple[Any, Any]:
    import triton
    import triton.language as tl

    @triton.jit
    def partial_sums(a_ptr, b_ptr, partials_ptr, n, nprog, iters, MODE: tl.constexpr,
                     BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=a_ptr.dtype.element_ty)
        wacc = tl.zeros((BLOCK,), dtype=a_ptr.dtype.element_ty)
        for it in range(iters):  # block it * nprog + pid: a grid-stride loop
            offs = (pid + it * nprog).to(tl.int64) * BLOCK + lanes
            mask = offs < n
            a = tl.load(a_ptr + offs, mask=mask, other=0.0)
            if MODE == 0:
                acc += a * a
            else:
                b = tl.load(b_ptr + offs, mask=mask, other=0.0)
                acc += b * a
                if MODE == 2:
                    wacc += b
        tl.store(partials_ptr + pid, tl.sum(acc, axis=0).to(tl.float64))
        if MODE == 2:
            tl.store(partials_ptr + nprog + pid, tl.sum(wacc, axis=0).to(tl.float64))

    @triton.jit
    def finalize(partials_ptr, out_ptr, nparts, RATIO: tl.constexpr, PBLOCK: tl.constexpr):
        offs = tl.arange(0, PBLOCK)
        mask = offs < nparts
        s = tl.sum(tl.load(partials_ptr + offs, mask=mask, other=0.0), axis=0)
        if RATIO:
            s = s / tl.sum(tl.load(partials_ptr + nparts + offs, mask=mask, other=0.0), axis=0)
        tl.store(out_ptr, s.to(out_ptr.dtype.element_ty))

    return partial_sums, finalize


def _programs(a: Any, n: int) -> int:
    """At most one wave: SMs x PROGRAMS_PER_SM (4 SMs' worth on the CPU interpreter)."""
    import torch

    sms = (torch.cuda.get_device_properties(a.device).multi_processor_count
           if a.is_cuda else 4)
    return max(1, min(-(-n // BLOCK), sms * PROGRAMS_PER_SM))


@implementation("reduction", "torch", "triton", devices=("gpu",))
def triton_kernel(ctx: BuildContext) -> Callable[[], Any]:
    import torch
    import triton

    partial_sums, finalize = _kernels()
    a = ctx.inputs["a"]
    variant = ctx.case.variant
    b = a if variant == "sumsq" else ctx.inputs["b" if variant == "dot" else "w"]
    mode = MODES[variant]
    n = a.numel()
    nprog = _programs(a, n)
    partials = torch.empty(2 * nprog, dtype=torch.float64, device=a.device)
    out = torch.empty((), dtype=a.dtype, device=a.device)
    pass1 = partial_sums[(nprog,)]
    pass2 = finalize[(1,)]
    pblock = triton.next_power_of_2(nprog)
    iters = -(-n // (nprog * BLOCK))

    def call() -> Any:
        pass1(a, b, partials, n, nprog, iters, MODE=mode, BLOCK=BLOCK, num_warps=WARPS)
        pass2(partials, out, nprog, RATIO=mode == 2, PBLOCK=pblock, num_warps=4)
        return out

    return call
