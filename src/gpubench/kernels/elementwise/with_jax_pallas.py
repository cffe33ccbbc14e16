"""elementwise in JAX through Pallas: one ``pallas_call`` kernel per variant (Triton lowering).

The formula is fixed when the kernel is traced, so each variant is one fused kernel:
inputs read once, output written once (what ``jax.jit`` already fuses; this row shows
the hand-written route costs nothing against it). Blocks of ``BLOCK`` elements, the
last one masked explicitly. On the CPU it runs in Pallas' interpreter
(``interpret=True``); a JAX without Pallas gives an ``unavailable`` row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

BLOCK = 4096
WARPS = 8


@implementation("elementwise", "jax", "pallas", devices=("gpu",))
def pallas(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    variant = ctx.case.variant
    args = [ctx.inputs["a"]] if variant == "sigmoid" else [ctx.inputs["a"], ctx.inputs["b"]]
    n = args[0].shape[0]

    def kernel(*refs):
        *in_refs, out_ref = refs
        i = pl.program_id(0) * BLOCK + jnp.arange(BLOCK)
        mask = i < n
        xs = [plgpu.load(r, mask=mask, other=1) for r in in_refs]
        if variant == "hypot":
            y = jnp.sqrt(xs[0] * xs[0] + xs[1] * xs[1])
        elif variant == "sigmoid":
            y = 1 / (1 + jnp.exp(-xs[0]))
        else:
            y = (xs[0] * 2 + xs[1] * 3) / (xs[0] + xs[1] + 1)
        plgpu.store(out_ref, y.astype(out_ref.dtype), mask=mask)

    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    fn = jax.jit(pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct(args[0].shape, args[0].dtype),
        grid=(pl.cdiv(n, BLOCK),), in_specs=[spec] * len(args), out_specs=spec,
        interpret=ctx.backend.device != "gpu",
        compiler_params=plgpu.CompilerParams(num_warps=WARPS)))
    return lambda: fn(*args)
