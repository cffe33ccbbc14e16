"""moving_average in PyTorch eager mode: cumsum differenced ``window`` apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("moving_average", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    x, out = ctx.inputs["x"], ctx.out("out")
    w = int(ctx.case.params["window"])
    n = x.shape[-1]
    counts = torch.arange(1, n + 1, device=x.device).clamp(max=w).to(x.dtype)

    def call() -> None:
        c = torch.cumsum(x, dim=-1)
        out[:, :w] = c[:, :w]
        torch.sub(c[:, w:], c[:, :-w], out=out[:, w:])
        out.div_(counts)

    return call
