"""moving_average in JAX through Pallas: one program per series, a scanned running sum
(Triton lowering).

``S[i] = cumsum(x[i] - x[i-w])`` (x[j] = 0 for j < 0), as the Numba and Triton
versions: a program loads its whole row (the block is the row length rounded up to a
power of two, as Triton needs, the excess masked), gathers the lagged ``x[i-w]`` from
the same row (a cache hit), scans the differences in float64 and writes ``S / count``
in the case's dtype. O(1) work per element, x read from memory once. Rows longer than
``MAX_LENGTH`` are not run (one block per row). On the CPU it runs in Pallas'
interpreter (``interpret=True``); a JAX without Pallas gives an ``unavailable`` row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

MAX_LENGTH = 1 << 14


@implementation("moving_average", "jax", "pallas", devices=("gpu",))
def pallas(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    x = ctx.inputs["x"]
    rows, length = x.shape
    w = int(ctx.case.params["window"])
    if length > MAX_LENGTH:
        raise ValueError(f"series of {length} elements: one block per row holds at most "
                         f"{MAX_LENGTH}")
    block = pl.next_power_of_2(length)

    def kernel(x_ref, o_ref):
        i = jnp.arange(block)
        inside = i < length
        v = plgpu.load(x_ref, mask=inside, other=0).astype(jnp.float64)
        lag = plgpu.load(x_ref.at[jnp.maximum(i - w, 0)], mask=inside & (i >= w),
                         other=0).astype(jnp.float64)
        s = jnp.cumsum(v - lag)
        count = jnp.minimum(i + 1, w).astype(jnp.float64)
        plgpu.store(o_ref, (s / count).astype(o_ref.dtype), mask=inside)

    spec = pl.BlockSpec((pl.squeezed, block), lambda r: (r, 0))
    fn = jax.jit(pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(rows,),
        in_specs=[spec], out_specs=spec, interpret=ctx.backend.device != "gpu",
        compiler_params=plgpu.CompilerParams(num_warps=max(1, min(8, block // 256)))))
    return lambda: fn(x)
