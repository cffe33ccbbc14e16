"""stencil in CUDA Python: ``stencil.cu`` compiled by NVRTC, one grid-stride launch on
the backend's stream; the edge cells launch it on views of the slab."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.kernels.stencil import Operation, by_views
from gpubench.spec import BuildContext, implementation


@implementation("stencil", "cuda_python", "nvrtc", devices=("gpu",),
                variants=("interior", "cells", "ghosts", "edges"))
def nvrtc(ctx: BuildContext) -> Operation:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    kernel = be.kernel(cuda_sources.source("stencil"),
                       f"stencil_{cuda_sources.suffix(ctx.case.dtype)}")

    def interior(u: Any, out: Any, alpha: float) -> Any:
        n = u.size - 2
        be.launch(kernel, be.grid_for(kernel, max(1, n)), THREADS, u.ptr, out.ptr,
                  np.int64(n), u.dtype.type(alpha))
        return out

    return by_views(be, interior)[ctx.case.variant]
