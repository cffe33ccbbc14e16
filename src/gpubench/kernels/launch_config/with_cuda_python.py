"""launch_config in CUDA Python: ``launch_config.cu`` compiled by NVRTC, launched by
cuda.core at the variant's threads per block.

The geometry rule of every CUDA Python row (:meth:`~gpubench.backends.cuda_python.
adapter.CudaPythonGPU.grid_for`: a grid-stride grid of at most one wave, resident blocks
from the occupancy API) at the variant's block size, 16-byte loads. The occupancy is
cuda.core's ``Kernel.occupancy.max_active_blocks_per_multiprocessor``, its wrapper of the
driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench import occupancy
from gpubench.kernels.launch_config import parse_variant
from gpubench.spec import BuildContext, implementation


def entry_point(variant: str, dtype: str) -> str:
    """``launch_config_<work>_<threads>_<f32|f64>``: the entry of a variant and dtype."""
    from gpubench import cuda_sources

    work, threads = parse_variant(variant)
    return f"launch_config_{work}_{threads}_{cuda_sources.suffix(dtype)}"


def work_items(n: int, dtype: str) -> int:
    """Threads' work items: one 16-byte vector (4 floats or 2 doubles) each."""
    width = 16 // np.dtype(dtype).itemsize
    return -(-n // width)


def driver_occupancy(be: Any, kernel: Any, threads: int) -> float:
    """Theoretical occupancy of ``kernel`` at ``threads`` per block on ``be``'s device."""
    api = getattr(kernel, "occupancy", None)
    if api is None:
        raise RuntimeError("this cuda-core has no Kernel.occupancy (added in 0.3)")
    blocks = int(api.max_active_blocks_per_multiprocessor(threads, 0))
    return occupancy.theoretical(blocks, threads, be.max_threads_per_sm)


@implementation("launch_config", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources

    be = ctx.backend
    _, threads = parse_variant(ctx.case.variant)
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = a.size
    kernel = be.kernel(cuda_sources.source("launch_config"),
                       entry_point(ctx.case.variant, ctx.case.dtype))
    grid = be.grid_for(kernel, work_items(n, ctx.case.dtype), threads)
    args = (a.ptr, b.ptr, c.ptr, np.int64(n))
    occupancy.attach(ctx, lambda: driver_occupancy(be, kernel, threads))

    def call() -> None:
        be.launch(kernel, grid, threads, *args)

    return call
