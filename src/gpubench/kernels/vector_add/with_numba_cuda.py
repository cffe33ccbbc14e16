"""vector_add in Numba CUDA: a ``@cuda.jit`` kernel (the workshop book,
§4.11.1) and a CUDA ufunc (§4.9.2).

``cuda_jit`` is the workshop book's kernel made safe and reusable: a 1-D grid-stride loop
(whose range is the bounds check) over at most one full wave of 256-thread blocks (see
:func:`gpubench.backends.numba.gpu.grid_1d`). ``vectorize_cuda`` is
``@vectorize(target="cuda")`` called with device arrays and ``out=`` a device array:
given host arrays it would copy them in and the result out on every call (the hidden
transfers of example 3 in the NumPy/CuPy/Numba Q&A); given device arrays it launches one
kernel, with a launch configuration Numba picks (``forall``, from the occupancy
calculator).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factories below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None

_SIGNATURES = ["float32(float32, float32)", "float64(float64, float64)"]


@functools.cache
def _kernel() -> Any:
    """The grid-stride add kernel; Numba compiles one version per dtype on first launch."""
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()

    @cuda.jit
    def add(a, b, c):
        for i in range(cuda.grid(1), c.shape[0], cuda.gridsize(1)):
            c[i] = a[i] + b[i]

    return add


@functools.cache
def _ufunc() -> Any:
    """``a + b`` as a CUDA ufunc, compiled for both dtypes now (explicit signatures)."""
    from gpubench.backends.numba.gpu import import_cuda

    import_cuda()  # the NumPy shim must precede numba.cuda's import by vectorize
    import numba

    @numba.vectorize(_SIGNATURES, target="cuda")
    def add(x, y):
        return x + y

    return add


def _args(ctx: BuildContext) -> tuple[Any, Any, Any]:
    return ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")


@implementation("vector_add", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import grid_1d

    a, b, c = _args(ctx)
    launch = _kernel()[grid_1d(c.shape[0])]

    def call() -> None:
        launch(a, b, c)

    return call


@implementation("vector_add", "numba", "vectorize_cuda", devices=("gpu",))
def vectorize_cuda(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import require_device

    require_device('@vectorize(target="cuda")')
    a, b, c = _args(ctx)
    fn = _ufunc()

    def call() -> None:
        fn(a, b, out=c)

    return call
