"""interop into CuPy: ``cupy.from_dlpack`` (PyTorch, JAX) and ``cupy.asarray`` over the
CUDA Array Interface (Numba, PyTorch): both wrap the producer's memory, no copy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import handoff
from gpubench.spec import BuildContext, implementation


def _dlpack(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        import cupy

        return handoff(ctx, producer, cupy.from_dlpack)

    return build


def _cai(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        import cupy

        return handoff(ctx, producer, cupy.asarray)

    return build


for _producer in ("torch", "jax"):
    implementation("interop", "cupy", f"from_{_producer}", devices=("gpu",),
                   variants=("dlpack",))(_dlpack(_producer))
for _producer in ("numba", "torch", "cuda_python"):
    implementation("interop", "cupy", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",))(_cai(_producer))
