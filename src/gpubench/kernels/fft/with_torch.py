"""fft in PyTorch: eager ``torch.fft.fft`` / ``torch.fft.fftn`` (MKL or pocketfft, cuFFT)."""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("fft", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    fn = torch.fft.fft if ctx.case.variant == "1d" else torch.fft.fftn
    x = ctx.inputs["x"]
    return lambda: fn(x)
