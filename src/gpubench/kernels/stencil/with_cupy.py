"""stencil in CuPy: NumPy's array expressions on device arrays (CuPy runs each as its
own elementwise kernel on the current stream)."""

from __future__ import annotations

from gpubench.kernels.stencil import Operation, array_interior, by_views
from gpubench.spec import BuildContext, implementation


@implementation("stencil", "cupy", "array_ops", devices=("gpu",),
                variants=("interior", "cells", "ghosts", "edges"))
def array_ops(ctx: BuildContext) -> Operation:
    return by_views(ctx.backend, array_interior)[ctx.case.variant]
