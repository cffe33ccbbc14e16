"""linear_grad in NumPy: the residual and its products with BLAS."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.linear_grad import array_grad
from gpubench.spec import BuildContext, implementation


@implementation("linear_grad", "numpy", "array_ops")
def array_ops(ctx: BuildContext) -> Callable[..., Any]:
    import numpy as np

    return lambda p, x, y: array_grad(np, p, x, y)
