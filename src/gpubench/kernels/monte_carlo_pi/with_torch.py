"""monte_carlo_pi in PyTorch: a seeded ``torch.Generator`` on the device, eager ops.

The generator is created once per build; each ``torch.rand`` advances it, so every call
draws fresh points. The estimate stays on the device (no ``.item()`` sync in the call).
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("monte_carlo_pi", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    n = ctx.case.size
    dtype = getattr(torch, ctx.case.dtype)
    device = getattr(ctx.backend, "torch_device", "cpu")
    gen = torch.Generator(device=device)
    gen.manual_seed(ctx.seed)

    def call() -> Any:
        xy = torch.rand((2, n), generator=gen, dtype=dtype, device=device)
        xy.mul_(xy)
        hits = torch.count_nonzero(torch.add(xy[0], xy[1]) <= 1)
        return hits.to(torch.float64) * (4.0 / n)

    return call
