"""matmul in CUDA Python: the hand-written kernels of ``matmul.cu``, launched by cuda.core.

``naive``: one thread per element of C, block (16, 16), grid (ceil(n/16), ceil(n/16));
capped at n = 4096 (at 8192 the float64 version takes seconds per call). ``tiled``: 32 x
32 shared-memory tiles, block (32, 8) with 4 outputs per thread, grid (ceil(n/32),
ceil(n/32)). Both accumulate in the matrix's dtype, as a GEMM does. The CuPy
``raw_naive`` / ``raw_tiled`` rows launch the same source with the same geometry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation

#: style -> (block, tile edge covered by one block)
GEOMETRY: dict[str, tuple[tuple[int, int], int]] = {
    "naive": ((16, 16), 16),
    "tiled": ((32, 8), 32),
}


def launch_geometry(style: str, n: int, rows: int | None = None
                    ) -> tuple[tuple[int, int], tuple[int, int]]:
    """(grid, block) of ``matmul_<style>_*`` for a C of ``rows`` x n (n x n by default;
    the MPI matmul job multiplies one rank's rows); x runs along columns."""
    block, edge = GEOMETRY[style]
    rows = n if rows is None else rows
    return (-(-n // edge), max(1, -(-rows // edge))), block


def _build(ctx: BuildContext, style: str) -> Callable[[], None]:
    from gpubench import cuda_sources

    be = ctx.backend
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n, rows = ctx.case.size, a.shape[0]
    kernel = be.kernel(cuda_sources.source("matmul"),
                       f"matmul_{style}_{cuda_sources.suffix(ctx.case.dtype)}")
    grid, block = launch_geometry(style, n, rows)
    args = (a.ptr, b.ptr, c.ptr, np.int64(rows), np.int64(n))

    def call() -> None:
        be.launch(kernel, grid, block, *args)

    return call


@implementation("matmul", "cuda_python", "naive", devices=("gpu",), max_size=4096)
def naive(ctx: BuildContext) -> Callable[[], None]:
    return _build(ctx, "naive")


@implementation("matmul", "cuda_python", "tiled", devices=("gpu",))
def tiled(ctx: BuildContext) -> Callable[[], None]:
    return _build(ctx, "tiled")
