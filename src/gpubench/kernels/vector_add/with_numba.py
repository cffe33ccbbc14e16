"""vector_add in Numba on the CPU: serial loop, prange loop, and ufuncs (the workshop book,
§4.7.1, §4.8.2)."""

import functools

from gpubench.spec import implementation


@functools.cache
def _kernels():
    import numba
    from numba import prange

    @numba.njit
    def add_loop(a, b, c):
        for i in range(a.shape[0]):
            c[i] = a[i] + b[i]

    @numba.njit(parallel=True)
    def add_prange(a, b, c):
        for i in prange(a.shape[0]):
            c[i] = a[i] + b[i]

    sigs = ["float32(float32, float32)", "float64(float64, float64)"]

    @numba.vectorize(sigs, target="cpu")
    def add_ufunc(x, y):
        return x + y

    @numba.vectorize(sigs, target="parallel")
    def add_ufunc_parallel(x, y):
        return x + y

    return add_loop, add_prange, add_ufunc, add_ufunc_parallel


def _args(ctx):
    return ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")


@implementation("vector_add", "numba", "njit_loop")
def njit_loop(ctx):
    a, b, c = _args(ctx)
    fn = _kernels()[0]
    return lambda: fn(a, b, c)


@implementation("vector_add", "numba", "njit_prange", parallel=True)
def njit_prange(ctx):
    a, b, c = _args(ctx)
    fn = _kernels()[1]
    return lambda: fn(a, b, c)


@implementation("vector_add", "numba", "vectorize_cpu")
def vectorize_cpu(ctx):
    a, b, c = _args(ctx)
    fn = _kernels()[2]

    def call():
        fn(a, b, out=c)

    return call


@implementation("vector_add", "numba", "vectorize_parallel", parallel=True)
def vectorize_parallel(ctx):
    a, b, c = _args(ctx)
    fn = _kernels()[3]

    def call():
        fn(a, b, out=c)

    return call
