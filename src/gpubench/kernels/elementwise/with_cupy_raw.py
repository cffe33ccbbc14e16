"""elementwise as a CuPy RawKernel: the same ``elementwise.cu`` as the CUDA Python row.

CuPy compiles the file with NVRTC (``cupy.RawModule``, once per process) and launches
the variant's fused kernel on CuPy's current stream with the CUDA Python row's
geometry: 256 threads, a grid-stride grid of at most one wave (SMs x resident blocks
from the occupancy API).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.elementwise import INPUTS
from gpubench.kernels.elementwise.with_cuda_python import entry_point, work_items
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("elementwise"), options=("-std=c++17",))


@implementation("elementwise", "cupy", "raw_kernel", devices=("gpu",))
def raw_kernel(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.cupy.adapter import cupy_raw_grid
    from gpubench.cuda_launch import THREADS

    case = ctx.case
    ins = [ctx.inputs[name] for name in INPUTS[case.variant]]
    out = ctx.out("out")
    n = out.size
    fn = _module().get_function(entry_point(case.variant, case.dtype))
    grid = (cupy_raw_grid(fn, work_items(n, case.dtype)),)
    args = (*ins, out, np.int64(n))

    def call() -> None:
        fn(grid, (THREADS,), args)

    return call
