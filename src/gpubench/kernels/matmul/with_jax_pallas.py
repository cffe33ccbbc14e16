"""matmul in JAX through Pallas: a tiled ``pallas_call`` GEMM (Triton lowering).

Each program computes a ``BM x BN`` tile of C: it holds row block ``i`` of A and column
block ``j`` of B (K rounded up to a power of two, as Triton needs) and loops over K in
``BK`` steps (``fori_loop``), masking past n, accumulating ``plgpu.dot`` in the case's
dtype. ``allow_tf32=False``: float32 products in full precision, not TF32 (which would
miss the tolerance 25-fold). On the CPU it runs in Pallas' interpreter
(``interpret=True``); a JAX without Pallas gives an ``unavailable`` row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: (BM, BN, BK, warps, stages) per dtype
TILES = {"float32": (64, 64, 32, 4, 3), "float64": (64, 64, 16, 4, 3)}


@implementation("matmul", "jax", "pallas", devices=("gpu",))
def pallas(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    a, b = ctx.inputs["a"], ctx.inputs["b"]
    n = ctx.case.size
    bm, bn, bk, warps, stages = TILES[ctx.case.dtype]
    kp = max(pl.next_power_of_2(n), bk)

    def kernel(a_ref, b_ref, c_ref):
        rm = pl.program_id(0) * bm + jnp.arange(bm)
        rn = pl.program_id(1) * bn + jnp.arange(bn)
        rk = jnp.arange(bk)

        def step(k, acc):
            ks = k * bk + rk
            x = plgpu.load(a_ref.at[:, pl.ds(k * bk, bk)],
                           mask=(rm[:, None] < n) & (ks[None, :] < n), other=0)
            y = plgpu.load(b_ref.at[pl.ds(k * bk, bk), :],
                           mask=(ks[:, None] < n) & (rn[None, :] < n), other=0)
            return acc + plgpu.dot(x, y, allow_tf32=False).astype(acc.dtype)

        acc = jax.lax.fori_loop(0, pl.cdiv(n, bk), step, jnp.zeros((bm, bn), c_ref.dtype))
        plgpu.store(c_ref, acc, mask=(rm[:, None] < n) & (rn[None, :] < n))

    fn = jax.jit(pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((n, n), a.dtype),
        grid=(pl.cdiv(n, bm), pl.cdiv(n, bn)),
        in_specs=[pl.BlockSpec((bm, kp), lambda i, j: (i, 0)),
                  pl.BlockSpec((kp, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        interpret=ctx.backend.device != "gpu",
        compiler_params=plgpu.CompilerParams(num_warps=warps, num_stages=stages)))
    return lambda: fn(a, b)
