"""reduction in NumPy: ``np.dot`` as a user writes it.

On 1-D arrays ``np.dot`` calls BLAS ``?dot``, which OpenBLAS and MKL run on one thread,
so this is a serial implementation (``parallel=False``). float32 rows accumulate in
float32 inside BLAS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("reduction", "numpy", "array_op")
def array_op(ctx: BuildContext) -> Callable[[], Any]:
    import numpy as np

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "sumsq":
        return lambda: np.dot(a, a)
    if variant == "dot":
        b = ctx.inputs["b"]
        return lambda: np.dot(a, b)
    w = ctx.inputs["w"]
    return lambda: np.dot(w, a) / w.sum()
