"""stencil in Numba CUDA: a grid-stride ``@cuda.jit`` kernel over the interior, launched
on the default stream; the edge cells run it on views of the slab."""

from __future__ import annotations

import functools
from typing import Any

from gpubench.kernels.stencil import Operation, by_views
from gpubench.spec import BuildContext, implementation

#: ``numba.cuda`` once imported, a module global as the CUDA simulator needs
#: (:mod:`gpubench.backends.numba.gpu`)
cuda: Any = None


@functools.cache
def _kernel() -> Any:
    """The interior step, compiled once per process (per dtype on first launch)."""
    global cuda
    from gpubench.backends.numba.gpu import import_cuda

    cuda = import_cuda()

    @cuda.jit
    def stencil(u, out, alpha):
        n = u.shape[0] - 2
        for i in range(cuda.grid(1) + 1, n + 1, cuda.gridsize(1)):
            out[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])

    return stencil


@implementation("stencil", "numba", "cuda_jit", devices=("gpu",),
                variants=("interior", "cells", "ghosts", "edges"))
def cuda_jit(ctx: BuildContext) -> Operation:
    from gpubench.backends.numba.gpu import launch

    def interior(u: Any, out: Any, alpha: float) -> Any:
        launch(_kernel(), u.shape[0] - 2, u, out, alpha)
        return out

    return by_views(ctx.backend, interior)[ctx.case.variant]
