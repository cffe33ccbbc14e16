"""moving_average in JAX: cumsum differenced ``window`` apart, under ``jax.jit``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("moving_average", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    x = ctx.inputs["x"]
    w = int(ctx.case.params["window"])

    @jax.jit
    def moving_average(x):
        n = x.shape[-1]
        c = jnp.cumsum(x, axis=-1)
        # c shifted right by w with zeros: the sum of everything before the window
        lagged = jnp.pad(c, ((0, 0), (w, 0)))[:, :n]
        counts = jnp.minimum(jnp.arange(1, n + 1), w).astype(x.dtype)
        return (c - lagged) / counts

    return lambda: moving_average(x)
