"""axpy in JAX: the update, jitted (a new array)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@functools.cache
def _jitted() -> Any:
    """The update, jitted once per process."""
    import jax

    return jax.jit(lambda p, g, s: p - s * g)


@implementation("axpy", "jax", "jit", devices=("cpu", "gpu"))
def jit(ctx: BuildContext) -> Callable[..., Any]:
    return _jitted()
