"""allocation in PyTorch: ``torch.empty`` of ``size`` bytes, then dropped. On a GPU it is
the caching allocator (after the first call, its cached block); ``no_cache`` then calls
``torch.cuda.empty_cache()``, so every call goes to ``cudaMalloc`` and ``cudaFree``
through the allocator, as a user who empties the cache gets it (the process-wide
``PYTORCH_NO_CUDA_MEMORY_CACHING`` would change every other row of the step)."""

from __future__ import annotations

from collections.abc import Callable

from gpubench.kernels.allocation import MARK, verify
from gpubench.spec import BuildContext, implementation


def _probe(ctx: BuildContext) -> None:
    import torch

    t = torch.empty(ctx.case.size, dtype=torch.uint8, device=ctx.backend.torch_device)
    t[-1] = MARK
    verify(ctx.case, t.numel() * t.element_size(), int(t[-1].item()))


@implementation("allocation", "torch", "empty", devices=("cpu", "gpu"))
def empty(ctx: BuildContext) -> Callable[[], int]:
    import torch

    n, device = ctx.case.size, ctx.backend.torch_device
    _probe(ctx)

    def call() -> int:
        buf = torch.empty(n, dtype=torch.uint8, device=device)
        nbytes = buf.nbytes
        del buf
        return nbytes

    return call


@implementation("allocation", "torch", "no_cache", devices=("gpu",))
def no_cache(ctx: BuildContext) -> Callable[[], int]:
    import torch

    n, device = ctx.case.size, ctx.backend.torch_device
    _probe(ctx)
    release = torch.cuda.empty_cache
    release()

    def call() -> int:
        buf = torch.empty(n, dtype=torch.uint8, device=device)
        nbytes = buf.nbytes
        del buf
        release()
        return nbytes

    return call
