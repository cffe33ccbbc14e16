"""linear_grad in CUDA Python: ``linear_grad.cu`` compiled by NVRTC, two grid-stride
launches on the backend's stream (the residual, then the gradient)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation


@implementation("linear_grad", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[..., Any]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    source, sfx = cuda_sources.source("linear_grad"), cuda_sources.suffix(ctx.case.dtype)
    residual = be.kernel(source, f"linear_grad_residual_{sfx}")
    grad = be.kernel(source, f"linear_grad_{sfx}")

    def linear_grad(p: Any, x: Any, y: Any) -> Any:
        rows, feats = x.shape
        outs = y.shape[1]
        b_ptr = p.ptr + outs * feats * p.dtype.itemsize
        r = be.empty((rows, outs), x.dtype.name)
        g = be.empty((outs * feats + outs,), x.dtype.name)
        dims = (np.int64(rows), np.int64(feats), np.int64(outs))
        be.launch(residual, be.grid_for(residual, max(1, rows * outs)), THREADS, x.ptr,
                  y.ptr, p.ptr, b_ptr, r.ptr, *dims)
        be.launch(grad, be.grid_for(grad, max(1, g.size)), THREADS, x.ptr, r.ptr, g.ptr,
                  *dims)
        return g

    return linear_grad
