"""interop into JAX: ``jax.numpy.from_dlpack`` of NumPy, PyTorch and CuPy arrays.

XLA needs buffers aligned to its own rule; one that is not is copied, which the pointer
check reports as ``wrong_result`` rather than timing a copy as a hand-off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import consumer
from gpubench.spec import implementation


def _from_dlpack() -> Callable[[Any], Any]:
    import jax.numpy as jnp

    return jnp.from_dlpack


implementation("interop", "jax", "from_numpy", variants=("dlpack",), needs=("numpy",))(
    consumer(_from_dlpack, "numpy"))
implementation("interop", "jax", "from_torch", devices=("cpu", "gpu"), variants=("dlpack",),
               needs=("torch",))(
    consumer(_from_dlpack, "torch"))
implementation("interop", "jax", "from_cupy", devices=("gpu",), variants=("dlpack",),
               needs=("cupy",))(
    consumer(_from_dlpack, "cupy"))
