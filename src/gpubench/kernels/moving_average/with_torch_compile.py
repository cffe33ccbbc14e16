"""moving_average with ``torch.compile``: one fused scan kernel (Triton on the GPU).

The eager row launches a cumsum, a copy, a subtraction and a division, and writes and
re-reads the cumsum temporary. Here the running-sum form ``S = cumsum(x[i] - x[i-w])``
(x[j] = 0 for j < 0) is one expression: Inductor fuses the lagged difference into the
scan's loads and the division by the counts into its store, so x is read once (the
lagged read hits the cache) and out is written once. The scan is in float64 (float32
rows are widened on load, as in the Numba and Triton versions), so float32 results are
rounded once. Compiled per case with ``dynamic=False`` as elementwise's ``compile``
row; the first call records the compilation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.kernels.torch_compile import compile_static
from gpubench.spec import BuildContext, implementation


def _expression(window: int) -> Callable[..., Any]:
    import torch
    import torch.nn.functional as F

    def moving_average(x: Any) -> Any:
        n = x.shape[-1]
        xd = x.to(torch.float64)
        lagged = F.pad(xd, (window, 0))[:, :n]
        s = torch.cumsum(xd - lagged, dim=-1)
        counts = torch.arange(1, n + 1, device=x.device).clamp(max=window)
        return (s / counts).to(x.dtype)

    return moving_average


@functools.cache
def _compiled(window: int, dtype: str, shape: tuple[int, int]) -> Callable[..., Any]:
    """One compiled function per case; dynamo's recompile limits raised to the sweep's
    size (every case shares the inner function's code object)."""
    return compile_static(_expression(window))


@implementation("moving_average", "torch", "compile", devices=("gpu",))
def compiled(ctx: BuildContext) -> Callable[[], Any]:
    """GPU only, as elementwise's: CPU Inductor's C++ builds cost more than the CPU run."""
    x = ctx.inputs["x"]
    fn = _compiled(int(ctx.case.params["window"]), ctx.case.dtype, tuple(x.shape))
    return lambda: fn(x)
