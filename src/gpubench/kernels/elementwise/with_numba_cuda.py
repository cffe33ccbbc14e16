"""elementwise in Numba CUDA: a ``@cuda.jit`` grid-stride kernel and a CUDA ufunc.

Both are fused (one pass, no temporaries) and use the same per-element formula as the
Numba CPU implementations (:func:`gpubench.kernels.elementwise.with_numba._scalar`), with
constants in the case's dtype, so float32 rows stay float32 (``expf``, ``sqrtf``) on
the GPU too. ``cuda_jit`` launches at most one full wave of 256-thread blocks
(:func:`gpubench.backends.numba.gpu.grid_1d`), each thread taking two elements per trip
round its grid-stride loop (four for float32 sigmoid, the one-input float32 kernel);
``vectorize_cuda`` is ``@vectorize(target="cuda")`` called with device arrays and a
device ``out=``, so no hidden host transfer happens, and Numba picks its launch
configuration.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.elementwise.with_numba import _scalar
from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factories below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None


@functools.cache
def _kernel(variant: str, dtype: str) -> Any:
    """The grid-stride kernel for one variant and dtype, created once per process."""
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()
    f = cuda.jit(device=True)(_scalar(variant, dtype))

    # Several elements per trip round the grid-stride loop, all loaded before any is
    # stored: the compiler cannot move a load past a store to ``out`` (it may alias the
    # input), so each trip's loads are all a thread has in flight. Measured on an H100
    # at 2**26 (tools/numba_explore.py): float32 sigmoid, one input,
    # 77% of the copy ceiling with one or two elements per trip, 88.5% with four; the
    # two-input kernels and float64 sigmoid 91-97% with two (four: 89-97%).
    if variant == "sigmoid" and np.dtype(dtype).itemsize == 4:
        @cuda.jit
        def unary4(a, out):
            n, step = out.shape[0], cuda.gridsize(1)
            i = cuda.grid(1)
            while i + 3 * step < n:
                x0, x1, x2, x3 = a[i], a[i + step], a[i + 2 * step], a[i + 3 * step]
                out[i] = f(x0)
                out[i + step] = f(x1)
                out[i + 2 * step] = f(x2)
                out[i + 3 * step] = f(x3)
                i += 4 * step
            while i < n:
                out[i] = f(a[i])
                i += step
        return unary4

    if variant == "sigmoid":
        @cuda.jit
        def unary(a, out):
            n, step = out.shape[0], cuda.gridsize(1)
            i = cuda.grid(1)
            while i + step < n:
                x0, x1 = a[i], a[i + step]
                out[i] = f(x0)
                out[i + step] = f(x1)
                i += 2 * step
            if i < n:
                out[i] = f(a[i])
        return unary

    @cuda.jit
    def binary(a, b, out):
        n, step = out.shape[0], cuda.gridsize(1)
        i = cuda.grid(1)
        while i + step < n:
            x0, y0, x1, y1 = a[i], b[i], a[i + step], b[i + step]
            out[i] = f(x0, y0)
            out[i + step] = f(x1, y1)
            i += 2 * step
        if i < n:
            out[i] = f(a[i], b[i])
    return binary


@functools.cache
def _ufunc(variant: str, dtype: str) -> Any:
    """The formula as a CUDA ufunc with an explicit signature (compiled now, once)."""
    from gpubench.backends.numba.gpu import import_cuda

    import_cuda()
    import numba

    nargs = 1 if variant == "sigmoid" else 2
    sig = f"{dtype}({', '.join([dtype] * nargs)})"
    return numba.vectorize([sig], target="cuda")(_scalar(variant, dtype))


def _args(ctx: BuildContext) -> tuple[Any, ...]:
    """Inputs the variant reads, then the output buffer."""
    names = ("a",) if ctx.case.variant == "sigmoid" else ("a", "b")
    return (*(ctx.inputs[n] for n in names), ctx.out("out"))


@implementation("elementwise", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import grid_1d

    args = _args(ctx)
    launch = _kernel(ctx.case.variant, ctx.case.dtype)[grid_1d(ctx.case.size)]

    def call() -> None:
        launch(*args)

    return call


@implementation("elementwise", "numba", "vectorize_cuda", devices=("gpu",))
def vectorize_cuda(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import require_device

    require_device('@vectorize(target="cuda")')
    fn = _ufunc(ctx.case.variant, ctx.case.dtype)
    *ins, out = _args(ctx)

    def call() -> None:
        fn(*ins, out=out)

    return call
