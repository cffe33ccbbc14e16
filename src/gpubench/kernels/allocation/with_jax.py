"""allocation in JAX: ``jnp.zeros`` of ``size`` bytes, waited for, then deleted. JAX
has no allocation without a computation (``jnp.empty`` is ``jnp.zeros``), so the call
pays the dispatch, the fill and the wait beside XLA's allocator (on GPUs its BFC pool)."""

from __future__ import annotations

from collections.abc import Callable

from gpubench.kernels.allocation import MARK, verify
from gpubench.spec import BuildContext, implementation


@implementation("allocation", "jax", "zeros", devices=("cpu", "gpu"))
def zeros(ctx: BuildContext) -> Callable[[], int]:
    import jax.numpy as jnp

    n = ctx.case.size
    probe = jnp.zeros(n, dtype=jnp.uint8).at[-1].set(MARK)
    verify(ctx.case, probe.nbytes, int(probe[-1]))
    probe.delete()

    def call() -> int:
        buf = jnp.zeros(n, dtype=jnp.uint8)
        buf.block_until_ready()
        nbytes = buf.nbytes
        buf.delete()
        return nbytes

    return call
