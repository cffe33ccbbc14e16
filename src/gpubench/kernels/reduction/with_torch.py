"""reduction in PyTorch eager mode: ``torch.dot`` (returns a 0-d tensor on the device)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("reduction", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "sumsq":
        return lambda: torch.dot(a, a)
    if variant == "dot":
        b = ctx.inputs["b"]
        return lambda: torch.dot(a, b)
    w = ctx.inputs["w"]
    return lambda: torch.dot(w, a) / torch.sum(w)
