"""elementwise in Numba on the CPU: serial and prange loops, cpu and parallel ufuncs.

The workshop book's §4.7.1 and §4.8.2. Every form is fused: one pass, no temporaries. Constants are
made in the case's dtype: a bare ``2.0`` is a float64 in Numba and would silently turn
a float32 row into float64 arithmetic (and ``expf`` into ``exp``), unlike NumPy, JAX and
PyTorch, which keep float32 as float32.

The loops are plain ``@njit`` as the book writes them, so ``/`` keeps Python's
ZeroDivisionError check; that branch stops LLVM from vectorising the rational loop
(about 2.4x slower than with ``error_model="numpy"``). The ``@vectorize`` ufuncs use
NumPy's error model and are vectorised. ``exp`` has no SIMD version without Intel
SVML, so sigmoid is scalar in every Numba form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@functools.cache
def _scalar(variant: str, dtype: str) -> Callable[..., Any]:
    """The per-element formula as plain Python, with constants typed as ``dtype``."""
    import math

    import numpy as np

    one, two, three = (getattr(np, dtype)(c) for c in (1.0, 2.0, 3.0))

    if variant == "hypot":
        def hypot(x, y):
            return math.sqrt(x * x + y * y)
        return hypot
    if variant == "sigmoid":
        def sigmoid(x):
            return one / (one + math.exp(-x))
        return sigmoid

    def rational(x, y):
        return (x * two + y * three) / (x + y + one)
    return rational


@functools.cache
def _loop(variant: str, dtype: str, parallel: bool) -> Callable[..., None]:
    """An explicit loop writing ``out[i]``; built once per process for each variant/dtype."""
    import numba
    from numba import prange

    f = numba.njit(_scalar(variant, dtype))

    if variant == "sigmoid":
        if parallel:
            @numba.njit(parallel=True)
            def unary_prange(a, out):
                for i in prange(out.shape[0]):
                    out[i] = f(a[i])
            return unary_prange

        @numba.njit
        def unary_loop(a, out):
            for i in range(out.shape[0]):
                out[i] = f(a[i])
        return unary_loop

    if parallel:
        @numba.njit(parallel=True)
        def binary_prange(a, b, out):
            for i in prange(out.shape[0]):
                out[i] = f(a[i], b[i])
        return binary_prange

    @numba.njit
    def binary_loop(a, b, out):
        for i in range(out.shape[0]):
            out[i] = f(a[i], b[i])
    return binary_loop


@functools.cache
def _ufunc(variant: str, dtype: str, target: str) -> Callable[..., Any]:
    """``@vectorize`` with an explicit signature (compiled now, once per process)."""
    import numba

    nargs = 1 if variant == "sigmoid" else 2
    sig = f"{dtype}({', '.join([dtype] * nargs)})"
    return numba.vectorize([sig], target=target)(_scalar(variant, dtype))


def _args(ctx: BuildContext) -> tuple[Any, ...]:
    """Inputs the variant reads, then the output buffer."""
    names = ("a",) if ctx.case.variant == "sigmoid" else ("a", "b")
    return (*(ctx.inputs[n] for n in names), ctx.out("out"))


def _loop_call(ctx: BuildContext, parallel: bool) -> Callable[[], None]:
    fn = _loop(ctx.case.variant, ctx.case.dtype, parallel)
    args = _args(ctx)
    return lambda: fn(*args)


def _ufunc_call(ctx: BuildContext, target: str) -> Callable[[], None]:
    fn = _ufunc(ctx.case.variant, ctx.case.dtype, target)
    *ins, out = _args(ctx)

    def call() -> None:
        fn(*ins, out=out)

    return call


@implementation("elementwise", "numba", "njit_loop")
def njit_loop(ctx: BuildContext) -> Callable[[], None]:
    return _loop_call(ctx, parallel=False)


@implementation("elementwise", "numba", "njit_prange", parallel=True)
def njit_prange(ctx: BuildContext) -> Callable[[], None]:
    return _loop_call(ctx, parallel=True)


@implementation("elementwise", "numba", "vectorize_cpu")
def vectorize_cpu(ctx: BuildContext) -> Callable[[], None]:
    return _ufunc_call(ctx, "cpu")


@implementation("elementwise", "numba", "vectorize_parallel", parallel=True)
def vectorize_parallel(ctx: BuildContext) -> Callable[[], None]:
    """``target="parallel"``: how fast depends on Numba's threading layer.

    The workqueue and TBB layers hand each thread a chunk; the OpenMP layer
    (``omppool.parallel_for``) calls the compiled kernel once per element of a 1-D
    ufunc, ~20 ns each, which is an order of magnitude slower than ``target="cpu"``.
    """
    return _ufunc_call(ctx, "parallel")
