"""launch_config as a CuPy RawKernel: the same ``launch_config.cu`` and entry points as
the CUDA Python rows, on CuPy's current stream, at the variant's threads per block.

The grid is :func:`~gpubench.backends.cupy.adapter.cupy_raw_grid` at that block size
(one wave at most, resident blocks from CuPy's
``cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor``), which also gives the
row's theoretical occupancy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench import occupancy
from gpubench.kernels.launch_config import parse_variant
from gpubench.kernels.launch_config.with_cuda_python import entry_point, work_items
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("launch_config"), options=("-std=c++17",))


def cupy_occupancy(fn: Any, threads: int) -> float:
    """Theoretical occupancy of RawKernel function ``fn`` at ``threads`` per block."""
    import cupy

    blocks = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        fn.kernel.ptr, threads, 0)
    most = cupy.cuda.Device().attributes["MaxThreadsPerMultiProcessor"]
    return occupancy.theoretical(int(blocks), threads, int(most))


@implementation("launch_config", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.cupy.adapter import cupy_raw_grid

    _, threads = parse_variant(ctx.case.variant)
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n = a.size
    fn = _module().get_function(entry_point(ctx.case.variant, ctx.case.dtype))
    grid = (cupy_raw_grid(fn, work_items(n, ctx.case.dtype), threads=threads),)
    args = (a, b, c, np.int64(n))
    occupancy.attach(ctx, lambda: cupy_occupancy(fn, threads))

    def call() -> None:
        fn(grid, (threads,), args)

    return call
