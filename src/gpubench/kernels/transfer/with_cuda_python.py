"""transfer in CUDA Python: ``cuMemcpyHtoDAsync`` / ``cuMemcpyDtoHAsync`` on the backend's
stream, between a ``cuMemAlloc`` buffer and a host array.

Pinned host memory comes from ``cuMemHostAlloc`` (wrapped as a NumPy array that frees
it with ``cuMemFreeHost``); pageable memory is the ordinary NumPy input, which the
driver stages through its own pinned buffer (the call then returns only when the copy
is done). Both are bracketed by the backend's events on the same stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation


@implementation("transfer", "cuda_python", "memcpy_async", devices=("gpu",))
def memcpy_async(ctx: BuildContext) -> Callable[[], Any]:
    be = ctx.backend
    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False
    direction, memory = ctx.case.variant.split("_")

    def host_buffer() -> np.ndarray:
        return be.pinned_empty(x.shape, x.dtype.str) if memory == "pinned" else np.empty_like(x)

    if direction == "h2d":
        src = x
        if memory == "pinned":
            src = host_buffer()
            src[...] = x
        dev = be.empty(x.shape, x.dtype.str)
        be.poison(dev)

        def h2d() -> Any:
            be.copy_to_device(dev, src)
            return dev

        return h2d

    dev = be.to_device(x)
    dst = host_buffer()
    dst[...] = np.nan

    def d2h() -> Any:
        be.copy_to_host(dst, dev)
        return dst

    return d2h
