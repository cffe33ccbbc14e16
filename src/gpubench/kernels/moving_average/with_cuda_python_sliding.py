"""moving_average in CUDA Python with a sliding window: ``moving_average_sliding_<dtype>``
of ``moving_average.cu``, compiled by NVRTC, launched by cuda.core.

The ``nvrtc`` row's tiles and staging, but each thread slides the window over its 4
consecutive outputs (one window sum, then an add and a subtract per output) instead of
summing ``window`` values from shared memory for each: 5.5 shared reads per output at
window 16, not 16. Shared memory is padded one word per 128 bytes (bank spreading).
Same grid: 256 threads, tiles of 1024 outputs, at most one wave.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.kernels.moving_average.with_cuda_python import MAX_SHARED, PER_THREAD
from gpubench.spec import BuildContext, implementation


def sliding_plan(rows: int, length: int, window: int, dtype: str,
                 threads: int) -> tuple[int, int]:
    """(threads' work items, dynamic shared bytes) for one launch of the sliding kernel:
    ``tile + window - 1`` elements plus the pad word per 128 bytes (``gpb_skew``).
    Raises ValueError past 48 KiB (huge windows)."""
    tile = PER_THREAD * threads
    tiles = rows * -(-length // tile)
    itemsize = np.dtype(dtype).itemsize
    last = tile + window - 2  # the highest staged index
    words = last + last // (128 // itemsize) + 1
    shmem = words * itemsize
    if shmem > MAX_SHARED:
        raise ValueError(f"window {window} needs {shmem} B of shared memory per block "
                         f"(> {MAX_SHARED} B)")
    return tiles * threads, shmem


@implementation("moving_average", "cuda_python", "nvrtc_sliding", devices=("gpu",))
def nvrtc_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.kernels.moving_average.with_cuda_python import launcher

    return launcher(ctx, "moving_average_sliding", sliding_plan)
