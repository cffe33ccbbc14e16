"""transfer in PyTorch: ``Tensor.copy_`` between a preallocated CUDA tensor and a CPU tensor.

Pinned host tensors come from ``torch.empty(..., pin_memory=True)``; from or into pinned
memory the copy is issued with ``non_blocking=True`` (an asynchronous DMA on the current
stream, as a pipelined program would use it), so it is complete only once the backend's
end event has been waited on, which ``time_call`` does. Pageable copies are synchronous.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("transfer", "torch", "copy_", devices=("gpu",))
def copy_(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    x = torch.from_numpy(ctx.inputs["x"])  # a view of the host input: pageable memory
    direction, memory = ctx.case.variant.split("_")
    pinned = memory == "pinned"

    def host_tensor() -> Any:
        return torch.empty(x.shape, dtype=x.dtype, pin_memory=pinned)

    if direction == "h2d":
        src = x
        if pinned:
            src = host_tensor()
            src.copy_(x)
        dev = torch.full(x.shape, float("nan"), dtype=x.dtype, device="cuda")

        def h2d() -> Any:
            dev.copy_(src, non_blocking=pinned)
            return dev

        return h2d

    dev = x.to("cuda")
    dst = host_tensor()
    dst.fill_(float("nan"))
    torch.cuda.synchronize()

    def d2h() -> Any:
        dst.copy_(dev, non_blocking=pinned)
        return dst

    return d2h
