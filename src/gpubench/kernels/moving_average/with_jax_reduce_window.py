"""moving_average in JAX with ``lax.reduce_window``: the window sum as XLA's own windowed
reduction, under ``jax.jit``.

The ``jit`` row's cumsum is, on GPUs, a log-depth sequence of passes over the data
(XLA lowers ``cumsum`` to windowed reductions); a trailing window sum is one
``reduce_window`` (window ``(1, w)``, stride 1, ``w - 1`` zeros padded before each
row): one fused kernel that reads each element once from memory (the ``w`` reads per
output hit the cache), divides by the counts and writes the output. No cancellation:
float32 sums of ``w`` terms, not differences of long prefix sums.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("moving_average", "jax", "reduce_window", devices=("gpu",))
def reduce_window(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    x = ctx.inputs["x"]
    w = int(ctx.case.params["window"])

    @jax.jit
    def moving_average(x):
        n = x.shape[-1]
        s = lax.reduce_window(x, np.array(0, dtype=x.dtype), lax.add, (1, w), (1, 1),
                              ((0, 0), (w - 1, 0)))
        counts = jnp.minimum(jnp.arange(1, n + 1), w).astype(x.dtype)
        return s / counts

    return lambda: moving_average(x)
