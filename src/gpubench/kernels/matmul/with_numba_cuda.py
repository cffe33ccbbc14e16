"""matmul in Numba CUDA: a naive kernel (the workshop book, §4.9.1) and a shared-memory tiled one.

Both launch 16x16-thread blocks on a 2-D grid of ceil(n/16) x ceil(n/16) blocks, one
thread per element of C (ceil(n/16) x ceil(m/16) when A and C have m < n rows, as in
the MPI matmul job), and accumulate in the array's dtype as a GEMM does (a float64
accumulator would make float32 rows run at the FP64 rate).

``cuda_jit_naive`` is the workshop book's kernel with the thread mapping turned around:
``cuda.grid(2)`` gives (x, y) with x varying fastest within a warp, so x indexes the
*column* j. A warp then reads 32 consecutive elements of a row of B and one element of
A (broadcast) per step and writes 32 consecutive elements of C: coalesced. The book's
``i, j = cuda.grid(2)`` puts the warp down a column instead (32 cache lines a load).

``cuda_jit_tiled`` stages 16x16 tiles of A and B in shared memory, so each element of
A and B is read from global memory n/16 times instead of n times. Tiles that hang over
the edge of the matrix are padded with zeros, so any n works; every thread reaches both
``syncthreads`` in every step (no early return), as the barrier requires.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factories below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None

#: tile edge and block edge (threads per block = TPB * TPB = 256)
TPB = 16
#: the same in the CUDA simulator, where each of a block's threads is a Python thread
#: and each barrier waits for all of them (same code; the tests run n = 20 and 35)
SIM_TPB = 8


def tile_size() -> int:
    """Tile and block edge: :data:`TPB`, or :data:`SIM_TPB` in the simulator."""
    from gpubench.backends.numba.gpu import is_simulator

    return SIM_TPB if is_simulator() else TPB


@functools.cache
def _kernels(dtype: str) -> tuple[Any, Any]:
    """(naive, tiled) kernels for one dtype, created once per process."""
    import numpy as np

    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()
    tpb = tile_size()  # a compile-time constant in the kernels (closure variable)
    nbtype = getattr(cuda, dtype)  # numba-cuda's own type objects (numba.cuda.float32, ...)
    zero = getattr(np, dtype)(0)

    @cuda.jit
    def naive(a, b, c):
        j, i = cuda.grid(2)
        if i < c.shape[0] and j < c.shape[1]:
            acc = zero
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc

    @cuda.jit
    def tiled(a, b, c):
        sa = cuda.shared.array((tpb, tpb), nbtype)
        sb = cuda.shared.array((tpb, tpb), nbtype)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        i = cuda.blockIdx.y * tpb + ty
        j = cuda.blockIdx.x * tpb + tx
        m = a.shape[1]
        acc = zero
        for t in range((m + tpb - 1) // tpb):
            ka = t * tpb + tx
            kb = t * tpb + ty
            sa[ty, tx] = a[i, ka] if i < a.shape[0] and ka < m else zero
            sb[ty, tx] = b[kb, j] if kb < m and j < b.shape[1] else zero
            cuda.syncthreads()
            for k in range(tpb):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        if i < c.shape[0] and j < c.shape[1]:
            c[i, j] = acc

    return naive, tiled


def _build(ctx: BuildContext, which: int) -> Callable[[], None]:
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    n, tpb = ctx.case.size, tile_size()
    rows = a.shape[0]  # n, or fewer: one MPI rank's rows of A
    blocks = ((n + tpb - 1) // tpb, max(1, (rows + tpb - 1) // tpb))
    launch = _kernels(ctx.case.dtype)[which][blocks, (tpb, tpb)]

    def call() -> None:
        launch(a, b, c)

    return call


@implementation("matmul", "numba", "cuda_jit_naive", devices=("gpu",), max_size=4096)
def cuda_jit_naive(ctx: BuildContext) -> Callable[[], None]:
    return _build(ctx, 0)


@implementation("matmul", "numba", "cuda_jit_tiled", devices=("gpu",))
def cuda_jit_tiled(ctx: BuildContext) -> Callable[[], None]:
    return _build(ctx, 1)
