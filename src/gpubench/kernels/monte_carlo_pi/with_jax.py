"""monte_carlo_pi in JAX with explicit PRNG keys: one base key, a new key per call.

Each call folds a call counter into the base key inside the jitted function, so no key
is ever used twice and every call draws fresh points (the workshop book's mistake in
§7.7.2 was reusing one key). x and y come from one ``uniform`` draw of shape (2, n).
"""

import itertools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("monte_carlo_pi", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    n = ctx.case.size
    dtype = jnp.dtype(ctx.case.dtype)
    base = jax.random.key(ctx.seed)

    @jax.jit
    def estimate(key, i):
        xy = jax.random.uniform(jax.random.fold_in(key, i), (2, n), dtype=dtype)
        hits = jnp.count_nonzero(xy[0] * xy[0] + xy[1] * xy[1] <= 1)
        return 4.0 * hits.astype(jnp.float64) / n

    counter = itertools.count()
    return lambda: estimate(base, next(counter))
