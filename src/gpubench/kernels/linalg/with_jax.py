"""linalg in JAX: jitted ``jnp.linalg`` (LAPACK on the CPU, cuSOLVER on GPUs).

Traced under ``default_matmul_precision("highest")``: any matmul XLA uses inside a
decomposition (blocked algorithms, the concatenation's layout) then stays full float32
instead of TF32 on GPUs.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("linalg", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    variant = ctx.case.variant

    def compute(a, b=None):
        with jax.default_matmul_precision("highest"):
            if variant == "solve":
                return jnp.linalg.solve(a, b)
            if variant == "inv":
                return jnp.linalg.inv(a)
            if variant == "eigh":
                w, v = jnp.linalg.eigh(a)
                return jnp.concatenate([w, v.ravel()])
            u, s, vt = jnp.linalg.svd(a, full_matrices=False)
            return jnp.concatenate([s, u.ravel(), vt.ravel()])

    fn = jax.jit(compute)
    a = ctx.inputs["a"]
    if variant == "solve":
        b = ctx.inputs["b"]
        return lambda: fn(a, b)
    return lambda: fn(a)
