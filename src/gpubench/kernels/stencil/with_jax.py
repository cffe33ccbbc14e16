"""stencil in JAX: jitted functions returning new arrays (JAX arrays are immutable).

On a GPU the state is donated where only part of it changes (the ghosts, the cells of
the overlapped step): XLA writes those cells in place instead of copying the whole slab
(512 MiB a step at 2**26 float64 cells). Both edge cells come back in one dispatch and
one transfer (two slices cost two).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from gpubench.kernels.stencil import Operation
from gpubench.spec import BuildContext, implementation


@functools.cache
def _jitted(donate: bool) -> dict[str, Any]:
    """The operations, jitted once per process (and per donation setting)."""
    import jax
    import jax.numpy as jnp

    return {
        "interior": jax.jit(lambda u, alpha: u.at[1:-1].set(
            u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:]))),
        # cells start..stop-1 into out (start, stop fixed per trace)
        "cells": jax.jit(lambda u, out, alpha, a, b: out.at[a:b].set(
            u[a:b] + alpha * (u[a - 1:b - 1] - 2 * u[a:b] + u[a + 1:b + 1])),
            static_argnums=(3, 4), donate_argnums=(1,) if donate else ()),
        "ghosts": jax.jit(lambda u, lft, rgt: u.at[0].set(lft[0]).at[-1].set(rgt[0]),
                          donate_argnums=(0,) if donate else ()),
        "edges": jax.jit(lambda u: jnp.stack([u[-2], u[1]])),
    }


@implementation("stencil", "jax", "jit", devices=("cpu", "gpu"),
                variants=("interior", "cells", "ghosts", "edges"))
def jit(ctx: BuildContext) -> Operation:
    fns = _jitted(ctx.backend.platform == "gpu")
    variant = ctx.case.variant
    if variant == "interior":
        return lambda u, out, alpha: fns["interior"](u, alpha)
    if variant == "cells":
        return lambda u, out, alpha, start, stop: fns["cells"](u, out, alpha, start, stop)
    if variant == "ghosts":
        return fns["ghosts"]

    def edges(u: Any, n: int, last: np.ndarray, first: np.ndarray) -> None:
        last[0], first[0] = np.asarray(fns["edges"](u))

    return edges
