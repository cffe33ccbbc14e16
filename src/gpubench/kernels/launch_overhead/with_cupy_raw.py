"""launch_overhead as a CuPy RawKernel: the same ``launch_overhead.cu`` and grid as the
CUDA Python row, so the two rows differ only in each framework's launch path."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.launch_overhead.with_cuda_python import blocks
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("launch_overhead"), options=("-std=c++17",))


@implementation("launch_overhead", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    a, out = ctx.inputs["a"], ctx.out("out")
    fn = _module().get_function(f"launch_overhead_{cuda_sources.suffix(ctx.case.dtype)}")
    grid = (blocks(a.size, THREADS),)
    args = (a, out, np.int64(a.size))

    def call() -> None:
        fn(grid, (THREADS,), args)

    return call
