"""reduction in JAX through Pallas: per-block partial sums in a ``pallas_call`` (Triton
lowering), then one small XLA sum of the partials, in one jitted function.

A program reads one block of ``BLOCK`` elements (the last one masked, its padding
zero), and writes its sum (weighted_mean: and its weight sum) as one partial in the
input's dtype; XLA then sums the ``n / BLOCK`` partials (weighted_mean: divides the two
sums). The input is read once; the partials are 1/``BLOCK`` of it. On the CPU it runs in
Pallas' interpreter (``interpret=True``); a JAX without Pallas gives an
``unavailable`` row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

BLOCK = 8192
WARPS = 8


@implementation("reduction", "jax", "pallas", devices=("gpu",))
def pallas(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    variant = ctx.case.variant
    a = ctx.inputs["a"]
    args = [a] if variant == "sumsq" else [a, ctx.inputs["b" if variant == "dot" else "w"]]
    n = a.shape[0]
    blocks = pl.cdiv(n, BLOCK)
    nout = 2 if variant == "weighted_mean" else 1

    def kernel(*refs):
        in_refs, out_refs = refs[:len(args)], refs[len(args):]
        i = pl.program_id(0) * BLOCK + jnp.arange(BLOCK)
        mask = i < n
        xs = [plgpu.load(r, mask=mask, other=0) for r in in_refs]
        prod = xs[0] * xs[0] if variant == "sumsq" else xs[1] * xs[0]
        out_refs[0][...] = jnp.broadcast_to(jnp.sum(prod), (1,))
        if variant == "weighted_mean":
            out_refs[1][...] = jnp.broadcast_to(jnp.sum(xs[1]), (1,))

    in_spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    out_spec = pl.BlockSpec((1,), lambda i: (i,))
    partials = pl.pallas_call(
        kernel, out_shape=[jax.ShapeDtypeStruct((blocks,), a.dtype)] * nout,
        grid=(blocks,), in_specs=[in_spec] * len(args), out_specs=[out_spec] * nout,
        interpret=ctx.backend.device != "gpu",
        compiler_params=plgpu.CompilerParams(num_warps=WARPS))

    @jax.jit
    def reduce(*xs):
        parts = partials(*xs)
        if variant == "weighted_mean":
            return jnp.sum(parts[0]) / jnp.sum(parts[1])
        return jnp.sum(parts[0])

    return lambda: reduce(*args)
