"""reduction with ``torch.compile``: Inductor's own fused reduction (Triton on the GPU).

The eager row calls ``torch.dot`` (cuBLAS) and, for weighted_mean, a second
``torch.sum`` pass over ``w`` plus a division: three launches and two reads of ``w``.
Written as ``(a * a).sum()``, ``(a * b).sum()`` and ``(w * a).sum() / w.sum()``,
Inductor generates one split reduction that reads each input once (both sums of
weighted_mean in the same loop) and a small second stage. Compiled per case with
``dynamic=False`` as elementwise's ``compile`` row (see its ``_compiled``); the first
call records the compilation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.kernels.torch_compile import compile_static
from gpubench.spec import BuildContext, implementation


def _expression(variant: str) -> Callable[..., Any]:
    if variant == "sumsq":
        return lambda a, b: (a * a).sum()
    if variant == "dot":
        return lambda a, b: (a * b).sum()
    return lambda a, w: (w * a).sum() / w.sum()


@functools.cache
def _compiled(variant: str, dtype: str, size: int) -> Callable[..., Any]:
    """One compiled function per case; dynamo's recompile limits raised to the sweep's
    size (the formulas share code objects across cases)."""
    return compile_static(_expression(variant))


@implementation("reduction", "torch", "compile", devices=("gpu",))
def compiled(ctx: BuildContext) -> Callable[[], Any]:
    """GPU only, as elementwise's: CPU Inductor's C++ builds cost more than the CPU run."""
    fn = _compiled(ctx.case.variant, ctx.case.dtype, ctx.case.size)
    a = ctx.inputs["a"]
    other = {"sumsq": "a", "dot": "b", "weighted_mean": "w"}[ctx.case.variant]
    b = ctx.inputs[other]
    return lambda: fn(a, b)
