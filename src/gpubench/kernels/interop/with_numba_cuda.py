"""interop into Numba CUDA: ``numba.cuda.as_cuda_array`` over the CUDA Array Interface
of CuPy and PyTorch arrays (a DeviceNDArray view, no copy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import handoff
from gpubench.spec import BuildContext, implementation


def _cai(producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    def build(ctx: BuildContext) -> Callable[[], Any]:
        from gpubench.backends.numba_gpu import import_cuda

        cuda = import_cuda()
        return handoff(ctx, producer, cuda.as_cuda_array)

    return build


for _producer in ("cupy", "torch"):
    implementation("interop", "numba", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",))(_cai(_producer))
