"""interop into CUDA Python: ``cuda.core.utils.StridedMemoryView`` over DLPack (CuPy,
PyTorch, JAX) or the CUDA Array Interface (CuPy, PyTorch, Numba).

The view carries the producer's pointer, shape and dtype and keeps the producer alive;
it is wrapped as the backend's DeviceArray so kernels can be launched on it. The
backend's stream is handed to the producer (``stream_ptr``), which orders its pending
work before it, as the protocols require.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.interop import handoff
from gpubench.spec import BuildContext, implementation


def _view(protocol: str, producer: str) -> Callable[[BuildContext], Callable[[], Any]]:
    """Unlike the other consumers this one needs the backend's stream, so it builds its
    consuming function from the context rather than through ``interop.consumer``."""
    def build(ctx: BuildContext) -> Callable[[], Any]:
        from cuda.core.utils import StridedMemoryView

        from gpubench.backends.cuda_python.adapter import DeviceArray

        stream = int(ctx.backend.stream.handle)
        make = (StridedMemoryView.from_dlpack if protocol == "dlpack"
                else StridedMemoryView.from_cuda_array_interface)

        def consume(x: Any) -> DeviceArray:
            view = make(x, stream_ptr=stream)
            return DeviceArray(view, tuple(view.shape), np.dtype(view.dtype))

        return handoff(ctx, producer, consume)

    return build


for _producer in ("cupy", "torch", "jax"):
    implementation("interop", "cuda_python", f"from_{_producer}", devices=("gpu",),
                   variants=("dlpack",), needs=(_producer,))(_view("dlpack", _producer))
for _producer in ("cupy", "torch", "numba"):
    implementation("interop", "cuda_python", f"from_{_producer}", devices=("gpu",),
                   variants=("cuda_array_interface",),
                   needs=(_producer,))(
        _view("cuda_array_interface", _producer))
