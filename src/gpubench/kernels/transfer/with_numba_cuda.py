"""transfer in Numba CUDA: ``DeviceNDArray.copy_to_device`` / ``copy_to_host`` on stream 0.

Pinned host memory comes from ``cuda.pinned_array``. Without a stream argument both
copies are synchronous (``cuMemcpyHtoD`` / ``cuMemcpyDtoH``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.transfer import one_copy
from gpubench.spec import BuildContext, implementation


@implementation("transfer", "numba", "copy_to", devices=("gpu",))
def copy_to(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.backends.numba.gpu import import_cuda

    cuda = import_cuda()
    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False
    return one_copy(x, ctx.case.variant,
                    pinned_empty=lambda like: cuda.pinned_array(like.shape, dtype=like.dtype),
                    poisoned_device=lambda like: cuda.to_device(np.full_like(like, np.nan)),
                    to_device=cuda.to_device, h2d=lambda dev, src: dev.copy_to_device(src),
                    d2h=lambda dst, dev: dev.copy_to_host(dst), synchronize=cuda.synchronize)
