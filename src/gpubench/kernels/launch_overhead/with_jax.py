"""launch_overhead in JAX: one call of a jitted ``x + 1`` (dispatch: cache lookup, argument
handling, the XLA executable's launch); it returns a new array."""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("launch_overhead", "jax", "jit", devices=("cpu", "gpu"))
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax

    add_one = jax.jit(lambda x: x + 1)
    a = ctx.inputs["a"]
    return lambda: add_one(a)
