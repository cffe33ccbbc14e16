"""linalg in PyTorch: eager ``torch.linalg`` (LAPACK on the CPU, cuSOLVER/MAGMA on GPUs)."""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("linalg", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "solve":
        b = ctx.inputs["b"]
        return lambda: torch.linalg.solve(a, b)
    if variant == "inv":
        return lambda: torch.linalg.inv(a)
    if variant == "eigh":
        def eigh() -> Any:
            w, v = torch.linalg.eigh(a)
            return torch.cat([w, v.reshape(-1)])

        return eigh

    def svd() -> Any:
        u, s, vt = torch.linalg.svd(a, full_matrices=False)
        return torch.cat([s, u.reshape(-1), vt.reshape(-1)])

    return svd
