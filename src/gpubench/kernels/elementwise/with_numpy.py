"""elementwise in NumPy: the formula as a user writes it, one temporary per operation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("elementwise", "numpy", "array_ops")
def array_ops(ctx: BuildContext) -> Callable[[], Any]:
    """Unfused array expressions; only the last operation writes into the output.

    Python scalars keep float32 arrays in float32 (NEP 50), so no silent upcast.
    """
    import numpy as np

    a, b, out = ctx.inputs["a"], ctx.inputs.get("b"), ctx.out("out")
    variant = ctx.case.variant

    if variant == "hypot":
        def call() -> None:
            np.sqrt(a * a + b * b, out=out)
    elif variant == "sigmoid":
        def call() -> None:
            np.divide(1.0, 1.0 + np.exp(-a), out=out)
    else:
        def call() -> None:
            np.divide(a * 2 + b * 3, a + b + 1, out=out)

    return call
