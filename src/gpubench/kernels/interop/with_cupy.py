"""interop into CuPy: ``cupy.from_dlpack`` (PyTorch, JAX) and ``cupy.asarray`` over the
CUDA Array Interface (Numba, PyTorch, CUDA Python): both wrap the producer's memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import consumer
from gpubench.spec import implementation


def _from_dlpack() -> Callable[[Any], Any]:
    import cupy

    return cupy.from_dlpack


def _asarray() -> Callable[[Any], Any]:
    import cupy

    return cupy.asarray


for _producer in ("torch", "jax"):
    implementation("interop", "cupy", f"from_{_producer}", devices=("gpu",),
                   variants=("dlpack",), needs=(_producer,))(consumer(_from_dlpack, _producer))
for _producer in ("numba", "torch", "cuda_python"):
    implementation("interop", "cupy", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",),
                   needs=(_producer,))(
        consumer(_asarray, _producer))
