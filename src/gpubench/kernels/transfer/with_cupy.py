"""transfer in CuPy: ``ndarray.set`` (host → device) and ``ndarray.get(out=...)`` (device →
host) on the current stream, between a preallocated device array and a host array.

Pinned host memory comes from ``cupyx.empty_pinned`` (a NumPy array over page-locked
memory from CuPy's pinned pool); pageable memory is the ordinary NumPy input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation


@implementation("transfer", "cupy", "memcpy", devices=("gpu",))
def memcpy(ctx: BuildContext) -> Callable[[], Any]:
    import cupy
    import cupyx

    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False
    direction, memory = ctx.case.variant.split("_")

    def host_buffer() -> np.ndarray:
        return cupyx.empty_pinned(x.shape, x.dtype) if memory == "pinned" else np.empty_like(x)

    if direction == "h2d":
        src = x
        if memory == "pinned":
            src = host_buffer()
            src[...] = x
        dev = cupy.empty(x.shape, x.dtype)
        dev.fill(np.nan)

        def h2d() -> Any:
            dev.set(src)
            return dev

        return h2d

    dev = cupy.asarray(x)
    dst = host_buffer()
    dst[...] = np.nan
    cupy.cuda.get_current_stream().synchronize()

    def d2h() -> Any:
        # blocking=True (the default) waits on the stream after the copy is queued
        dev.get(out=dst)
        return dst

    return d2h
