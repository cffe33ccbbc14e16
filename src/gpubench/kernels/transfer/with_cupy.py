"""transfer in CuPy: ``ndarray.set`` (host → device) and ``ndarray.get(out=...)`` (device →
host) on the current stream, between a preallocated device array and a host array.

Pinned host memory comes from ``cupyx.empty_pinned`` (a NumPy array over page-locked
memory from CuPy's pinned pool); pageable memory is the ordinary NumPy input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.transfer import one_copy
from gpubench.spec import BuildContext, implementation


@implementation("transfer", "cupy", "memcpy", devices=("gpu",))
def memcpy(ctx: BuildContext) -> Callable[[], Any]:
    import cupy
    import cupyx

    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False

    def poisoned_device(like: np.ndarray) -> Any:
        dev = cupy.empty(like.shape, like.dtype)
        dev.fill(np.nan)
        return dev

    # ndarray.get: blocking=True (the default) waits on the stream after the copy is queued
    return one_copy(x, ctx.case.variant,
                    pinned_empty=lambda like: cupyx.empty_pinned(like.shape, like.dtype),
                    poisoned_device=poisoned_device, to_device=cupy.asarray,
                    h2d=lambda dev, src: dev.set(src), d2h=lambda dst, dev: dev.get(out=dst),
                    synchronize=cupy.cuda.get_current_stream().synchronize)
