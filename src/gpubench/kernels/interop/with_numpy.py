"""interop into NumPy: ``numpy.from_dlpack`` of PyTorch and JAX CPU arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import consumer
from gpubench.spec import implementation


def _from_dlpack() -> Callable[[Any], Any]:
    import numpy as np

    return np.from_dlpack


for _producer in ("torch", "jax"):
    implementation("interop", "numpy", f"from_{_producer}", variants=("dlpack",),
                   needs=(_producer,))(
        consumer(_from_dlpack, _producer))
