"""linear_grad in CuPy: NumPy's expressions on device arrays (cuBLAS products)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.linear_grad import array_grad
from gpubench.spec import BuildContext, implementation


@implementation("linear_grad", "cupy", "array_ops", devices=("gpu",))
def array_ops(ctx: BuildContext) -> Callable[..., Any]:
    import cupy

    return lambda p, x, y: array_grad(cupy, p, x, y)
