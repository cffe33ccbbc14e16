"""moving_average in CUDA Python: ``moving_average.cu`` compiled by NVRTC, launched by cuda.core.

One launch per call on the backend's stream: a block per tile of 1024 outputs of one
row (staged with its window - 1 halo in dynamic shared memory), 256 threads, tiles
grid-strided over at most one wave (SMs x resident blocks from the occupancy API). The
CuPy ``raw_kernel`` row launches the same source with the same geometry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation

#: outputs per thread in the kernel (GPB_PER_THREAD in moving_average.cu)
PER_THREAD = 4
#: dynamic shared memory a block may use without opting in to more
MAX_SHARED = 48 * 1024


def launch_plan(rows: int, length: int, window: int, dtype: str,
                threads: int) -> tuple[int, int]:
    """(threads' work items, dynamic shared bytes) for one launch.

    A tile is ``PER_THREAD * threads`` outputs; a block stages the tile plus ``window -
    1`` earlier elements. Raises ValueError when that exceeds 48 KiB (huge windows).
    """
    tile = PER_THREAD * threads
    tiles = rows * -(-length // tile)
    shmem = (tile + window - 1) * np.dtype(dtype).itemsize
    if shmem > MAX_SHARED:
        raise ValueError(f"window {window} needs {shmem} B of shared memory per block "
                         f"(> {MAX_SHARED} B)")
    return tiles * threads, shmem


@implementation("moving_average", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    window = int(ctx.case.params["window"])
    kernel = be.kernel(cuda_sources.source("moving_average"),
                       f"moving_average_{cuda_sources.suffix(ctx.case.dtype)}")
    items, shmem = launch_plan(rows, length, window, ctx.case.dtype, THREADS)
    grid = be.grid_for(kernel, items, shmem=shmem)
    args = (x.ptr, out.ptr, np.int64(rows), np.int64(length), np.int64(window))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args, shmem=shmem)

    return call
