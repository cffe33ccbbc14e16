"""interop into Numba CUDA: ``numba.cuda.as_cuda_array`` over the CUDA Array Interface
of CuPy and PyTorch arrays (a DeviceNDArray view, no copy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.interop import consumer
from gpubench.spec import implementation


def _as_cuda_array() -> Callable[[Any], Any]:
    from gpubench.backends.numba.gpu import import_cuda

    return import_cuda().as_cuda_array


for _producer in ("cupy", "torch"):
    implementation("interop", "numba", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",),
                   needs=(_producer,))(
        consumer(_as_cuda_array, _producer))
