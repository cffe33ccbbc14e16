"""launch_overhead in CuPy: the NumPy-style ufunc and an ``ElementwiseKernel``, each one
kernel launch writing into the preallocated output."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("launch_overhead", "cupy", "array_ops", devices=("gpu",))
def array_ops(ctx: BuildContext) -> Callable[[], None]:
    import cupy

    a, out = ctx.inputs["a"], ctx.out("out")

    def call() -> None:
        cupy.add(a, 1, out=out)

    return call


@functools.cache
def _kernel() -> Any:
    import cupy

    return cupy.ElementwiseKernel("T x", "T y", "y = x + T(1)", "gpubench_add_one")


@implementation("launch_overhead", "cupy", "elementwise_kernel", devices=("gpu",))
def elementwise_kernel(ctx: BuildContext) -> Callable[[], None]:
    kernel = _kernel()
    a, out = ctx.inputs["a"], ctx.out("out")

    def call() -> None:
        kernel(a, out)

    return call
