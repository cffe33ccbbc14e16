"""matmul in Numba on the CPU: hand-written loops, the workshop book's style
(§4.9.1) and a fast one.

``njit_naive`` is the textbook i-j-k loop: the inner k loop walks B down a column, so
every access is a cache miss at large n; it is capped at n=256. ``njit_prange_ikj``
reorders to i-k-j, so the inner loop streams along rows of B and C (contiguous, SIMD
friendly), and splits rows over threads. Both accumulate in the array's dtype, as a
float32 GEMM does; no ``np.dot`` version, which would just call the same BLAS as NumPy.
"""

import functools
from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


@functools.cache
def _kernels() -> tuple[Callable, Callable]:
    import numba
    from numba import prange

    @numba.njit
    def naive(a, b, c):
        n, m = a.shape
        p = b.shape[1]
        for i in range(n):
            for j in range(p):
                acc = c.dtype.type(0)  # accumulate in float32 for float32, like BLAS
                for k in range(m):
                    acc += a[i, k] * b[k, j]
                c[i, j] = acc

    @numba.njit(parallel=True)
    def prange_ikj(a, b, c):
        n, m = a.shape
        p = b.shape[1]
        for i in prange(n):
            for j in range(p):
                c[i, j] = 0
            for k in range(m):
                aik = a[i, k]
                for j in range(p):
                    c[i, j] += aik * b[k, j]

    return naive, prange_ikj


def _args(ctx: BuildContext) -> tuple:
    return ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")


@implementation("matmul", "numba", "njit_naive", max_size=256)
def njit_naive(ctx: BuildContext) -> Callable[[], None]:
    a, b, c = _args(ctx)
    fn = _kernels()[0]
    return lambda: fn(a, b, c)


@implementation("matmul", "numba", "njit_prange_ikj", parallel=True, max_size=1024)
def njit_prange_ikj(ctx: BuildContext) -> Callable[[], None]:
    a, b, c = _args(ctx)
    fn = _kernels()[1]
    return lambda: fn(a, b, c)
