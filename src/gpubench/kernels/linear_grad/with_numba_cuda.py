"""linear_grad in Numba CUDA: two grid-stride ``@cuda.jit`` kernels, the residual
(one thread per row and output) then the gradient (one thread per entry, summed over
the rows), on the default stream."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda`` once imported, a module global as the CUDA simulator needs
#: (:mod:`gpubench.backends.numba.gpu`)
cuda: Any = None


@functools.cache
def _kernels() -> tuple[Any, Any]:
    """(residual, gradient), compiled once per process (per dtype on first launch)."""
    global cuda
    from gpubench.backends.numba.gpu import import_cuda

    cuda = import_cuda()

    @cuda.jit
    def residual(x, y, w, b, r):
        for i in range(cuda.grid(1), r.shape[0] * r.shape[1], cuda.gridsize(1)):
            row = i // r.shape[1]
            o = i % r.shape[1]
            acc = b[o]
            for f in range(x.shape[1]):
                acc += x[row, f] * w[o, f]
            r[row, o] = acc - y[row, o]

    @cuda.jit
    def grad(x, r, g):
        nout = r.shape[1]
        nfeat = x.shape[1]
        for e in range(cuda.grid(1), nout * nfeat + nout, cuda.gridsize(1)):
            acc = 0.0
            if e < nout * nfeat:
                o = e // nfeat
                f = e % nfeat
                for row in range(x.shape[0]):
                    acc += r[row, o] * x[row, f]
            else:
                o = e - nout * nfeat
                for row in range(x.shape[0]):
                    acc += r[row, o]
            g[e] = 2.0 * acc

    return residual, grad


@implementation("linear_grad", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[..., Any]:
    from gpubench.backends.numba.gpu import import_cuda, launch

    numba_cuda = import_cuda()

    def linear_grad(p: Any, x: Any, y: Any) -> Any:
        residual, grad = _kernels()
        outs, feats = y.shape[1], x.shape[1]
        w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
        r = numba_cuda.device_array(y.shape, dtype=y.dtype)
        g = numba_cuda.device_array(outs * feats + outs, dtype=y.dtype)
        launch(residual, y.shape[0] * y.shape[1], x, y, w, b, r)
        launch(grad, g.shape[0], x, r, g)
        return g

    return linear_grad
