"""moving_average in NumPy: cumulative sums differenced ``window`` apart, row by row.

O(1) work per element (the workshop book's direct loop is O(window)); the cumsum is a float32
temporary for float32 rows, which is where its rounding error comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.moving_average import window_counts
from gpubench.spec import BuildContext, implementation


@implementation("moving_average", "numpy", "cumsum")
def cumsum(ctx: BuildContext) -> Callable[[], Any]:
    import numpy as np

    x, out = ctx.inputs["x"], ctx.out("out")
    w = int(ctx.case.params["window"])
    counts = window_counts(x.shape[-1], w).astype(x.dtype)
    # the cumsum's buffer, made and written once: a fresh one per call would be mapped
    # page by page in every sample at the large sizes (see elementwise/with_numpy.py)
    c = np.full_like(x, 0)

    def call() -> None:
        np.cumsum(x, axis=-1, out=c)
        out[:, :w] = c[:, :w]
        np.subtract(c[:, w:], c[:, :-w], out=out[:, w:])
        np.divide(out, counts, out=out)

    return call
