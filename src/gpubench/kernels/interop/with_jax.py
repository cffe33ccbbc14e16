"""interop into JAX: ``jax.numpy.from_dlpack`` of NumPy, PyTorch and CuPy arrays.

XLA needs buffers aligned to its own rule; one that is not is copied, which the pointer
check reports as ``wrong_result`` rather than timing a copy as a hand-off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import handoff
from gpubench.spec import BuildContext, implementation


def _dlpack(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        import jax.numpy as jnp

        return handoff(ctx, producer, jnp.from_dlpack)

    return build


implementation("interop", "jax", "from_numpy", variants=("dlpack",))(_dlpack("numpy"))
implementation("interop", "jax", "from_torch", devices=("cpu", "gpu"), variants=("dlpack",))(
    _dlpack("torch"))
implementation("interop", "jax", "from_cupy", devices=("gpu",), variants=("dlpack",))(
    _dlpack("cupy"))
