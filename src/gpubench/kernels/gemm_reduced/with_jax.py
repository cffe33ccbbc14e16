"""gemm_reduced in JAX: a jitted ``jnp.matmul`` (returns a new array).

``tf32``: float32 arrays at ``Precision.DEFAULT``, given on the call, so it overrides
the backend's process-wide "highest" for this product only; on NVIDIA GPUs of compute
capability 8.0 and later XLA then computes float32 dots in TF32. ``bf16`` / ``fp16``:
A and B cast once, before the timed calls; the product in that format with float32
accumulation, C in that format. On the CPU only ``bf16`` runs (XLA's CPU dot).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.gemm_reduced import FORMATS, not_offered
from gpubench.spec import BuildContext, implementation


def _capability(device: Any) -> float | None:
    """A JAX CUDA device's compute capability ("9.0"), or None where it says none."""
    try:
        return float(str(device.compute_capability))
    except (AttributeError, ValueError):
        return None


@implementation("gemm_reduced", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    a, b = ctx.inputs["a"], ctx.inputs["b"]
    device = ctx.backend.device
    capability = _capability(next(iter(a.devices()))) if device == "gpu" else None
    not_offered(ctx.case, device, capability)
    if ctx.case.variant == "tf32":
        mm = jax.jit(lambda x, y: jnp.matmul(x, y, precision=jax.lax.Precision.DEFAULT))
    else:
        dtype = getattr(jnp, FORMATS[ctx.case.variant].storage)
        a = a.astype(dtype).block_until_ready()  # cast before the timed calls
        b = b.astype(dtype).block_until_ready()
        mm = jax.jit(lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32
                                             ).astype(dtype))
    return lambda: mm(a, b)
