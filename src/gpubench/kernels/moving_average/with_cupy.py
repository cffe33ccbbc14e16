"""moving_average in CuPy: cumulative sums (as NumPy) and a direct-window ElementwiseKernel.

- ``cumsum``: ``cupy.cumsum`` along each row, differenced ``window`` apart and divided
  by the counts, exactly the NumPy version's steps; the prefix sums are a temporary in
  the input dtype, which is where float32 rows get their rounding error (spec).
- ``elementwise_kernel``: one thread per output sums its own window straight from x
  (``raw`` input, so the body indexes freely), like the workshop book's ``@guvectorize`` loop:
  O(window) reads per output, but they hit cache, and there are no temporaries and no
  large prefix sums to cancel, so float32 is accurate to a few roundings.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.kernels.moving_average import window_counts
from gpubench.spec import BuildContext, implementation


@implementation("moving_average", "cupy", "cumsum", devices=("gpu",))
def cumsum(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    x, out = ctx.inputs["x"], ctx.out("out")
    w = int(ctx.case.params["window"])
    counts = cupy.asarray(window_counts(x.shape[-1], w).astype(x.dtype))

    def call() -> None:
        c = cupy.cumsum(x, axis=-1)
        out[:, :w] = c[:, :w]
        cupy.subtract(c[:, w:], c[:, :-w], out=out[:, w:])
        cupy.divide(out, counts, out=out)

    return call


#: ``i`` is the flat index of the output; x is passed flattened, so x[k] is element k.
_WINDOW_BODY = """
const long long j = i % length;
const long long first = j >= window ? j - window + 1 : 0;
const long long row = i - j;
T s = 0;
for (long long k = row + first; k <= i; ++k) {
    s += x[k];
}
y = s / T(j - first + 1);
"""


@functools.cache
def _window_kernel() -> Any:
    """One kernel per process; CuPy compiles it once per dtype of ``T``."""
    import cupy

    return cupy.ElementwiseKernel("raw T x, int64 length, int64 window", "T y",
                                  _WINDOW_BODY, "gpubench_moving_average")


@implementation("moving_average", "cupy", "elementwise_kernel", devices=("gpu",))
def elementwise_kernel(ctx: BuildContext) -> Callable[[], Any]:
    import numpy as np

    kernel = _window_kernel()
    x, out = ctx.inputs["x"], ctx.out("out")
    flat = x.ravel()  # a view: x is C-contiguous
    length = np.int64(x.shape[-1])
    window = np.int64(ctx.case.params["window"])

    def call() -> None:
        kernel(flat, length, window, out)

    return call
