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

from gpubench.kernels.transfer import one_copy
from gpubench.spec import BuildContext, implementation


@implementation("transfer", "cuda_python", "memcpy_async", devices=("gpu",))
def memcpy_async(ctx: BuildContext) -> Callable[[], Any]:
    be = ctx.backend
    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False

    def poisoned_device(like: np.ndarray) -> Any:
        dev = be.empty(like.shape, like.dtype.str)
        be.poison(dev)
        return dev

    return one_copy(x, ctx.case.variant,
                    pinned_empty=lambda like: be.pinned_empty(like.shape, like.dtype.str),
                    poisoned_device=poisoned_device, to_device=be.to_device,
                    h2d=be.copy_to_device, d2h=be.copy_to_host)
