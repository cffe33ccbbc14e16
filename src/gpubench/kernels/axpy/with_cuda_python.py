"""axpy in CUDA Python: ``axpy.cu`` compiled by NVRTC, one grid-stride launch on the
backend's stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation


@implementation("axpy", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[..., Any]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    kernel = be.kernel(cuda_sources.source("axpy"),
                       f"axpy_{cuda_sources.suffix(ctx.case.dtype)}")

    def axpy(p: Any, g: Any, scale: float) -> Any:
        out = be.empty((p.size,), p.dtype.name)
        be.launch(kernel, be.grid_for(kernel, max(1, p.size)), THREADS, p.ptr, g.ptr,
                  out.ptr, np.int64(p.size), p.dtype.type(scale))
        return out

    return axpy
