"""vector_add in CuPy: the NumPy-style ufunc, an ElementwiseKernel, and a host round trip.

``array_ops`` and ``elementwise_kernel`` work on device-resident inputs and write into
the preallocated output. ``array_ops+transfers`` starts from the host arrays, copies
them to the device (pageable memory, as users call ``cupy.asarray``), adds, and copies
the sum back (the workshop book, §5.10.1, "Including Memory Transfer Overhead"); the report puts it
next to the device-resident row to show what the transfers cost.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("vector_add", "cupy", "array_ops", devices=("gpu",))
def array_ops(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call() -> None:
        cupy.add(a, b, out=c)

    return call


@functools.cache
def _add_kernel() -> Any:
    """One ElementwiseKernel per process; CuPy compiles it once per dtype of ``T``."""
    import cupy

    return cupy.ElementwiseKernel("T x, T y", "T z", "z = x + y", "gpubench_vector_add")


@implementation("vector_add", "cupy", "elementwise_kernel", devices=("gpu",))
def elementwise_kernel(ctx: BuildContext) -> Callable[[], Any]:
    kernel = _add_kernel()
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call() -> None:
        kernel(a, b, c)

    return call


@implementation("vector_add", "cupy", "array_ops+transfers", devices=("gpu",))
def array_ops_transfers(ctx: BuildContext) -> Callable[[], Any]:
    """Host in, host out: two host-to-device copies, the add, one device-to-host copy."""
    import cupy

    a_host, b_host = ctx.host_inputs["a"], ctx.host_inputs["b"]

    def call() -> Any:
        return cupy.asnumpy(cupy.asarray(a_host) + cupy.asarray(b_host))

    return call
