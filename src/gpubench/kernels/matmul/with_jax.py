"""matmul in JAX: a jitted ``jnp.matmul`` at HIGHEST precision (returns a new array)."""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("matmul", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    # The default precision lets XLA compute float32 GEMMs in TF32/bfloat16 on GPUs;
    # HIGHEST keeps float32 a float32 product, the thing every other row measures.
    mm = jax.jit(lambda x, y: jnp.matmul(x, y, precision=jax.lax.Precision.HIGHEST))
    a, b = ctx.inputs["a"], ctx.inputs["b"]
    return lambda: mm(a, b)
