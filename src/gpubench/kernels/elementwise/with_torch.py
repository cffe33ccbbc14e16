"""elementwise in PyTorch: eager (one kernel and one temporary per operation) and compiled.

The last operation writes into the preallocated output. Python scalars keep float32
tensors in float32.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.kernels.torch_compile import compile_static
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


def _expression(variant: str) -> Callable[..., Any]:
    """The same formulas as ``eager``, as one function a compiler can fuse."""
    import torch

    if variant == "hypot":
        return lambda a, b: torch.sqrt(a * a + b * b)
    if variant == "sigmoid":
        return lambda a, b: torch.reciprocal(1.0 + torch.exp(-a))
    return lambda a, b: (a * 2 + b * 3) / (a + b + 1)


@functools.cache
def _compiled(variant: str, dtype: str, size: int) -> Callable[..., Any]:
    """One compiled function per case, ``dynamic=False``: Inductor specialises the Triton
    kernel on the length, which lets it prove 16-byte alignment and vectorise (on an
    H100 float32 hypot: 3.07 TB/s static vs 2.04 TB/s with ``dynamic=True``). Only the
    first compilation in a process is slow (~13 s); later shapes take ~0.5 s each, in
    their first call. The formulas share one code object, so dynamo's recompile limit
    (8 per code object; past it ``fullgraph=True`` fails) is raised to the sweep's size.
    """
    return compile_static(_expression(variant))


@implementation("elementwise", "torch", "compile", devices=("gpu",))
def compiled(ctx: BuildContext) -> Callable[[], Any]:
    """``torch.compile`` (Inductor, Triton on the GPU): the expression fused into one kernel.

    GPU only: on the CPU Inductor spends seconds of C++ compilation per shape and dtype,
    more than the whole CPU run's budget for this kernel; the first call records that cost.
    """
    fn = _compiled(ctx.case.variant, ctx.case.dtype, ctx.case.size)
    a, b = ctx.inputs["a"], ctx.inputs.get("b")
    return lambda: fn(a, b)
