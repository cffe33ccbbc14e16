"""linear_grad in JAX: ``jax.grad`` of the loss, jitted; the product at HIGHEST
precision (no TF32 on a GPU: the job checks against float64)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@functools.cache
def _jitted() -> Any:
    """The gradient, jitted once per process."""
    import jax
    import jax.numpy as jnp

    hi = jax.lax.Precision.HIGHEST

    def loss(p: Any, x: Any, y: Any) -> Any:
        outs, feats = y.shape[1], x.shape[1]
        w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
        r = jnp.matmul(x, w.T, precision=hi) + b - y
        return jnp.sum(r * r)

    return jax.jit(jax.grad(loss))


@implementation("linear_grad", "jax", "grad", devices=("cpu", "gpu"))
def grad(ctx: BuildContext) -> Callable[..., Any]:
    return _jitted()
