"""matmul as CuPy RawKernels: the hand-written kernels of ``matmul.cu`` (as in CUDA Python).

CuPy compiles the file with NVRTC (``cupy.RawModule``, once per process) and launches
``raw_naive`` (block 16 x 16, one thread per element of C, capped at n = 4096) and
``raw_tiled`` (32 x 32 shared-memory tiles, block 32 x 8) on CuPy's current stream with
the CUDA Python rows' geometry; the library GEMM is the ``cublas`` row.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.matmul.with_cuda_python import launch_geometry
from gpubench.spec import BuildContext, implementation


@functools.cache
def _module() -> Any:
    import cupy

    from gpubench import cuda_sources

    return cupy.RawModule(code=cuda_sources.source("matmul"), options=("-std=c++17",))


def _build(ctx: BuildContext, style: str) -> Callable[[], None]:
    from gpubench import cuda_sources

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n, rows = ctx.case.size, a.shape[0]
    fn = _module().get_function(f"matmul_{style}_{cuda_sources.suffix(ctx.case.dtype)}")
    grid, block = launch_geometry(style, n, rows)
    args = (a, b, c, np.int64(rows), np.int64(n))

    def call() -> None:
        fn(grid, block, args)

    return call


@implementation("matmul", "cupy", "raw_naive", devices=("gpu",), max_size=4096)
def raw_naive(ctx: BuildContext) -> Callable[[], None]:
    return _build(ctx, "naive")


@implementation("matmul", "cupy", "raw_tiled", devices=("gpu",))
def raw_tiled(ctx: BuildContext) -> Callable[[], None]:
    return _build(ctx, "tiled")
