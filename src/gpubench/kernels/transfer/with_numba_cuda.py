"""transfer in Numba CUDA: ``DeviceNDArray.copy_to_device`` / ``copy_to_host`` on stream 0.

Pinned host memory comes from ``cuda.pinned_array``. Without a stream argument both
copies are synchronous (``cuMemcpyHtoD`` / ``cuMemcpyDtoH``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation


@implementation("transfer", "numba", "copy_to", devices=("gpu",))
def copy_to(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.backends.numba_gpu import import_cuda

    cuda = import_cuda()
    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False
    direction, memory = ctx.case.variant.split("_")

    def host_buffer() -> np.ndarray:
        if memory == "pinned":
            return cuda.pinned_array(x.shape, dtype=x.dtype)
        return np.empty_like(x)

    if direction == "h2d":
        src = x
        if memory == "pinned":
            src = host_buffer()
            src[...] = x
        dev = cuda.to_device(np.full_like(x, np.nan))

        def h2d() -> Any:
            dev.copy_to_device(src)
            return dev

        return h2d

    dev = cuda.to_device(x)
    dst = host_buffer()
    dst[...] = np.nan
    cuda.synchronize()

    def d2h() -> Any:
        dev.copy_to_host(dst)
        return dst

    return d2h
