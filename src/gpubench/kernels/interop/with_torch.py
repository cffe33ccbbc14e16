"""interop into PyTorch: ``torch.from_dlpack`` (NumPy, JAX, CuPy arrays) and
``torch.as_tensor(..., device="cuda")`` over the CUDA Array Interface (CuPy, Numba,
CUDA Python)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import consumer
from gpubench.spec import implementation


def _from_dlpack() -> Callable[[Any], Any]:
    import torch

    return torch.from_dlpack


def _as_cuda_tensor() -> Callable[[Any], Any]:
    import torch

    return lambda x: torch.as_tensor(x, device="cuda")


implementation("interop", "torch", "from_numpy", variants=("dlpack",), needs=("numpy",))(
    consumer(_from_dlpack, "numpy"))
implementation("interop", "torch", "from_jax", devices=("cpu", "gpu"), variants=("dlpack",),
               needs=("jax",))(
    consumer(_from_dlpack, "jax"))
implementation("interop", "torch", "from_cupy", devices=("gpu",), variants=("dlpack",),
               needs=("cupy",))(
    consumer(_from_dlpack, "cupy"))
for _producer in ("cupy", "numba", "cuda_python"):
    implementation("interop", "torch", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",),
                   needs=(_producer,))(
        consumer(_as_cuda_tensor, _producer))
