"""reduction in Numba on the CPU: a serial loop and a ``prange`` reduction (the
workshop book, §4.8.3).

The accumulator starts as the literal ``0.0``, a float64, as idiomatic Numba code does;
float32 rows therefore multiply in float32 but accumulate in float64 (more accurate than
NumPy's float32 BLAS, and the result is a float64). Without ``fastmath`` the serial loop
cannot be vectorised (reordering a float sum changes it), so it runs at the latency of
one add per element; ``prange`` gives each thread its own partial sum.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@functools.cache
def _kernels(parallel: bool) -> dict[str, Callable[..., float]]:
    """One compiled function per variant, created once per process."""
    import numba
    from numba import prange

    if parallel:
        @numba.njit(parallel=True)
        def sumsq(a):
            total = 0.0
            for i in prange(a.shape[0]):
                total += a[i] * a[i]
            return total

        @numba.njit(parallel=True)
        def dot(a, b):
            total = 0.0
            for i in prange(a.shape[0]):
                total += a[i] * b[i]
            return total

        @numba.njit(parallel=True)
        def weighted_mean(a, w):
            num = 0.0
            den = 0.0
            for i in prange(a.shape[0]):
                num += w[i] * a[i]
                den += w[i]
            return num / den
    else:
        @numba.njit
        def sumsq(a):
            total = 0.0
            for i in range(a.shape[0]):
                total += a[i] * a[i]
            return total

        @numba.njit
        def dot(a, b):
            total = 0.0
            for i in range(a.shape[0]):
                total += a[i] * b[i]
            return total

        @numba.njit
        def weighted_mean(a, w):
            num = 0.0
            den = 0.0
            for i in range(a.shape[0]):
                num += w[i] * a[i]
                den += w[i]
            return num / den

    return {"sumsq": sumsq, "dot": dot, "weighted_mean": weighted_mean}


def _call(ctx: BuildContext, parallel: bool) -> Callable[[], Any]:
    fn = _kernels(parallel)[ctx.case.variant]
    second = {"sumsq": (), "dot": ("b",), "weighted_mean": ("w",)}[ctx.case.variant]
    args = (ctx.inputs["a"], *(ctx.inputs[n] for n in second))
    return lambda: fn(*args)


@implementation("reduction", "numba", "njit_loop")
def njit_loop(ctx: BuildContext) -> Callable[[], Any]:
    return _call(ctx, parallel=False)


@implementation("reduction", "numba", "njit_prange", parallel=True)
def njit_prange(ctx: BuildContext) -> Callable[[], Any]:
    return _call(ctx, parallel=True)
