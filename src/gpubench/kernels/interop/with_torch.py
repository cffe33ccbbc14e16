"""interop into PyTorch: ``torch.from_dlpack`` (NumPy, JAX, CuPy arrays) and
``torch.as_tensor(..., device="cuda")`` over the CUDA Array Interface (CuPy, Numba)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import handoff
from gpubench.spec import BuildContext, implementation


def _dlpack(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        import torch

        return handoff(ctx, producer, torch.from_dlpack)

    return build


def _cai(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        import torch

        return handoff(ctx, producer, lambda x: torch.as_tensor(x, device="cuda"))

    return build


implementation("interop", "torch", "from_numpy", variants=("dlpack",))(_dlpack("numpy"))
implementation("interop", "torch", "from_jax", devices=("cpu", "gpu"), variants=("dlpack",))(
    _dlpack("jax"))
implementation("interop", "torch", "from_cupy", devices=("gpu",), variants=("dlpack",))(
    _dlpack("cupy"))
for _producer in ("cupy", "numba", "cuda_python"):
    implementation("interop", "torch", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",))(_cai(_producer))
