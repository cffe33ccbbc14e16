"""axpy in Numba CUDA: a grid-stride ``@cuda.jit`` kernel on the default stream."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda`` once imported, a module global as the CUDA simulator needs
#: (:mod:`gpubench.backends.numba.gpu`)
cuda: Any = None


@functools.cache
def _kernel() -> Any:
    """The update, compiled once per process (per dtype on first launch)."""
    global cuda
    from gpubench.backends.numba.gpu import import_cuda

    cuda = import_cuda()

    @cuda.jit
    def axpy(a, b, scale, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = a[i] - scale * b[i]

    return axpy


@implementation("axpy", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[..., Any]:
    from gpubench.backends.numba.gpu import import_cuda, launch

    numba_cuda = import_cuda()

    def axpy(p: Any, g: Any, scale: float) -> Any:
        out = numba_cuda.device_array(p.shape[0], dtype=p.dtype)
        launch(_kernel(), p.shape[0], p, g, scale, out)
        return out

    return axpy
