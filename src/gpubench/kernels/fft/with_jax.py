"""fft in JAX: jitted ``jnp.fft.fft`` / ``jnp.fft.fftn`` (DUCC on the CPU, cuFFT on GPUs)."""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("fft", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    fn = jax.jit(jnp.fft.fft if ctx.case.variant == "1d" else jnp.fft.fftn)
    x = ctx.inputs["x"]
    return lambda: fn(x)
