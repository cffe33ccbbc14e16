"""Deliberately broken implementations that the plausibility gates must refuse.

Load with ``GPUBENCH_PLUGINS=gpubench.kernels.vector_add.mutants``; never part of a
default run (only the kernel's ``with_*.py`` modules are loaded with it). Each one
computes the right answer but hides its work from the device clock, as real code can
by accident: ``side_stream`` launches ``vector_add`` on a stream of its own, so CUDA
events on the caller's stream bracket an empty stretch and the row reads tens of
times faster than the memory allows. The caller's clock waits for the whole device and
sees the real cost; the report must list the row as ``implausible``, never rank it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("vector_add", "torch", "side_stream", devices=("gpu",))
def torch_side_stream(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    side = torch.cuda.Stream()

    def call() -> None:
        with torch.cuda.stream(side):
            torch.add(a, b, out=c)

    return call


@implementation("vector_add", "cupy", "side_stream", devices=("gpu",))
def cupy_side_stream(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    side = cupy.cuda.Stream(non_blocking=True)

    def call() -> None:
        with side:
            cupy.add(a, b, out=c)

    return call
