"""interop into NumPy: ``numpy.from_dlpack`` of PyTorch and JAX CPU arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import handoff
from gpubench.spec import BuildContext, implementation


def _from(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        import numpy as np

        return handoff(ctx, producer, np.from_dlpack)

    build.__name__ = f"from_{producer}"
    return build


for _producer in ("torch", "jax"):
    implementation("interop", "numpy", f"from_{_producer}", variants=("dlpack",))(
        _from(_producer))
