"""reduction in JAX: ``jnp.dot`` / ``jnp.sum`` under ``jax.jit`` (one fused pass each)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("reduction", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "sumsq":
        fn = jax.jit(lambda x: jnp.dot(x, x))
        return lambda: fn(a)
    if variant == "dot":
        fn = jax.jit(jnp.dot)
        b = ctx.inputs["b"]
        return lambda: fn(a, b)
    fn = jax.jit(lambda x, w: jnp.dot(w, x) / jnp.sum(w))
    w = ctx.inputs["w"]
    return lambda: fn(a, w)
