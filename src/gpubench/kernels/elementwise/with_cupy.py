"""elementwise in CuPy: unfused array ops against two ways of fusing them (the
workshop book, §5.5.1, §5.6).

- ``array_ops``: the formula as NumPy code; each operation is its own kernel and writes
  a temporary, only the last one writes into the output.
- ``elementwise_kernel``: the formula as one ``cupy.ElementwiseKernel`` (CUDA C body),
  written into the preallocated output.
- ``fuse``: the same Python formula under the ``@cupy.fuse()`` decorator, which traces
  it into one kernel (the workshop book's ``with cp.fuse():`` is wrong: fuse is a decorator).
  The fused function returns a new array from CuPy's memory pool.

Python scalars are weakly typed in CuPy (NEP 50), so float32 rows stay float32.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ElementwiseKernel bodies; ``T`` is bound to the input dtype, ``T(1)`` keeps literals
#: in it, and CUDA's float overloads of sqrt/exp keep float32 in single precision.
_KERNEL_BODIES: dict[str, tuple[str, str]] = {
    "hypot": ("T x, T y", "z = sqrt(x * x + y * y)"),
    "sigmoid": ("T x", "z = T(1) / (T(1) + exp(-x))"),
    "rational": ("T x, T y", "z = (x * T(2) + y * T(3)) / (x + y + T(1))"),
}


@implementation("elementwise", "cupy", "array_ops", devices=("gpu",))
def array_ops(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    a, b, out = ctx.inputs["a"], ctx.inputs.get("b"), ctx.out("out")
    variant = ctx.case.variant

    if variant == "hypot":
        def call() -> None:
            cupy.sqrt(a * a + b * b, out=out)
    elif variant == "sigmoid":
        def call() -> None:
            cupy.divide(1.0, 1.0 + cupy.exp(-a), out=out)
    else:
        def call() -> None:
            cupy.divide(a * 2 + b * 3, a + b + 1, out=out)

    return call


@functools.cache
def _elementwise_kernel(variant: str) -> Any:
    """One kernel per variant per process; CuPy compiles it once per dtype of ``T``."""
    import cupy

    in_params, body = _KERNEL_BODIES[variant]
    return cupy.ElementwiseKernel(in_params, "T z", body, f"gpubench_{variant}")


@implementation("elementwise", "cupy", "elementwise_kernel", devices=("gpu",))
def elementwise_kernel(ctx: BuildContext) -> Callable[[], Any]:
    kernel = _elementwise_kernel(ctx.case.variant)
    a, out = ctx.inputs["a"], ctx.out("out")
    if ctx.case.variant == "sigmoid":
        def call() -> None:
            kernel(a, out)
    else:
        b = ctx.inputs["b"]

        def call() -> None:
            kernel(a, b, out)

    return call


@functools.cache
def _fused() -> dict[str, Any]:
    """The fused functions, decorated once per process (fuse caches kernels per function)."""
    import cupy

    @cupy.fuse(kernel_name="gpubench_fused_hypot")
    def hypot(x: Any, y: Any) -> Any:
        return cupy.sqrt(x * x + y * y)

    @cupy.fuse(kernel_name="gpubench_fused_sigmoid")
    def sigmoid(x: Any) -> Any:
        return 1.0 / (1.0 + cupy.exp(-x))

    @cupy.fuse(kernel_name="gpubench_fused_rational")
    def rational(x: Any, y: Any) -> Any:
        return (x * 2 + y * 3) / (x + y + 1)

    return {"hypot": hypot, "sigmoid": sigmoid, "rational": rational}


@implementation("elementwise", "cupy", "fuse", devices=("gpu",))
def fuse(ctx: BuildContext) -> Callable[[], Any]:
    fn = _fused()[ctx.case.variant]
    a = ctx.inputs["a"]
    if ctx.case.variant == "sigmoid":
        return lambda: fn(a)
    b = ctx.inputs["b"]
    return lambda: fn(a, b)
