"""moving_average in Numba on the CPU: ``@guvectorize`` (the workshop book, §4.7.2)
and a ``prange`` loop.

Both keep a running window sum instead of the book's inner loop over the window, so the
work is O(1) per element whatever the window. The sum is a float64 (the literal
``0.0``), so float32 rows accumulate in float64: a float32 running sum over a 1024-long
series drifts by its rounding error at every add and subtract. The window is a scalar
argument (layout ``(n),()->(n)``), as in the book.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


def _running_mean(x, w, out):
    """out[i] = mean of the last ``min(i + 1, w)`` elements of ``x``, by a running sum."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        if i >= w:
            s -= x[i - w]
        out[i] = s / min(i + 1, w)


@functools.cache
def _gufunc(dtype: str, target: str) -> Callable[..., Any]:
    """The gufunc for one dtype and target, compiled once per process."""
    import numba

    sig = f"void({dtype}[:], intp, {dtype}[:])"
    return numba.guvectorize([sig], "(n),()->(n)", target=target)(_running_mean)


@functools.cache
def _prange() -> Callable[..., None]:
    import numba
    from numba import prange

    @numba.njit(parallel=True)
    def moving_average_rows(x, w, out):
        for r in prange(x.shape[0]):
            s = 0.0
            for i in range(x.shape[1]):
                s += x[r, i]
                if i >= w:
                    s -= x[r, i - w]
                out[r, i] = s / min(i + 1, w)

    return moving_average_rows


def _args(ctx: BuildContext) -> tuple[Any, int, Any]:
    return ctx.inputs["x"], int(ctx.case.params["window"]), ctx.out("out")


def _gufunc_call(ctx: BuildContext, target: str) -> Callable[[], None]:
    fn = _gufunc(ctx.case.dtype, target)
    x, w, out = _args(ctx)

    def call() -> None:
        fn(x, w, out)

    return call


@implementation("moving_average", "numba", "guvectorize_cpu")
def guvectorize_cpu(ctx: BuildContext) -> Callable[[], None]:
    return _gufunc_call(ctx, "cpu")


@implementation("moving_average", "numba", "guvectorize_parallel", parallel=True)
def guvectorize_parallel(ctx: BuildContext) -> Callable[[], None]:
    """The parallel target splits the rows (the loop dimension) across threads.

    Numba's OpenMP threading layer calls the kernel once per row; a row is a whole
    series here, so that per-call cost is negligible (unlike a 1-D ``@vectorize``).
    """
    return _gufunc_call(ctx, "parallel")


@implementation("moving_average", "numba", "njit_prange", parallel=True)
def njit_prange(ctx: BuildContext) -> Callable[[], None]:
    """Rows in parallel, each a serial running sum."""
    fn = _prange()
    x, w, out = _args(ctx)
    return lambda: fn(x, w, out)
