"""stencil in NumPy: array expressions on the slab, in place into the other buffer."""

from __future__ import annotations

from gpubench.kernels.stencil import Operation, array_interior, by_views
from gpubench.spec import BuildContext, implementation


@implementation("stencil", "numpy", "array_ops", variants=("interior", "cells", "ghosts",
                                                              "edges"))
def array_ops(ctx: BuildContext) -> Operation:
    return by_views(ctx.backend, array_interior)[ctx.case.variant]
