"""elementwise in JAX: the formula under ``jax.jit``, which XLA fuses into one loop.

Python scalars are weakly typed in JAX, so float32 rows stay float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("elementwise", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "hypot":
        fn = jax.jit(lambda x, y: jnp.sqrt(x * x + y * y))
    elif variant == "sigmoid":
        fn = jax.jit(lambda x: 1.0 / (1.0 + jnp.exp(-x)))
    else:
        fn = jax.jit(lambda x, y: (x * 2 + y * 3) / (x + y + 1))
    if variant == "sigmoid":
        return lambda: fn(a)
    b = ctx.inputs["b"]
    return lambda: fn(a, b)
