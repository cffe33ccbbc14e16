"""vector_add in JAX through Pallas: a hand-written ``pallas_call`` kernel (Triton lowering).

Pallas is JAX's own route to custom kernels; on NVIDIA GPUs ``pallas_call`` lowers to
Triton. One program per block of ``BLOCK`` elements (a power of two, as Triton needs);
the last block is masked explicitly (Pallas' Triton lowering does not bound blocks by
the array). Jitted once per case. On the CPU it runs in Pallas' interpreter
(``interpret=True``), which the tests use; a JAX without Pallas gives an
``unavailable`` row with the import error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

BLOCK = 4096
WARPS = 8


@implementation("vector_add", "jax", "pallas", devices=("gpu",))
def pallas(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    a, b = ctx.inputs["a"], ctx.inputs["b"]
    n = a.shape[0]

    def kernel(a_ref, b_ref, c_ref):
        i = pl.program_id(0) * BLOCK + jnp.arange(BLOCK)
        mask = i < n
        x = plgpu.load(a_ref, mask=mask, other=0)
        y = plgpu.load(b_ref, mask=mask, other=0)
        plgpu.store(c_ref, x + y, mask=mask)

    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    add = jax.jit(pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype), grid=(pl.cdiv(n, BLOCK),),
        in_specs=[spec, spec], out_specs=spec, interpret=ctx.backend.device != "gpu",
        compiler_params=plgpu.CompilerParams(num_warps=WARPS)))
    return lambda: add(a, b)
