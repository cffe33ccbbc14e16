"""elementwise in PyTorch eager mode: one kernel and one temporary per operation.

The last operation writes into the preallocated output. Python scalars keep float32
tensors in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("elementwise", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    a, b, out = ctx.inputs["a"], ctx.inputs.get("b"), ctx.out("out")
    variant = ctx.case.variant

    if variant == "hypot":
        def call() -> None:
            torch.sqrt(a * a + b * b, out=out)
    elif variant == "sigmoid":
        def call() -> None:
            torch.reciprocal(1.0 + torch.exp(-a), out=out)
    else:
        def call() -> None:
            torch.div(a * 2 + b * 3, a + b + 1, out=out)

    return call
