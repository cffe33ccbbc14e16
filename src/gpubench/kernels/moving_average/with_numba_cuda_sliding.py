"""moving_average in Numba CUDA with tiles in shared memory and a sliding window: the
tiled sliding-window kernel the CUDA C ``nvrtc_sliding`` row ran before its warp-shuffle
kernel (``moving_average_warp`` in ``moving_average.cu``), written in Numba; no longer
paired with a CUDA C row in the "Numba matches CUDA C" claim.

The ``cuda_jit`` row scans each row with warp shuffles: O(1) work per element, but a
serial chain of shuffles per 32 elements, one warp per row. Here a block stages a tile
of ``4 * blockDim.x`` consecutive outputs of one row plus the ``window - 1`` elements
before it in shared memory (coalesced loads; one pad word per 128 bytes spreads the
banks), each thread slides the window over its 4 consecutive outputs (one window sum,
then an add and a subtract per output; sums in float64 as in the other Numba rows),
and the outputs go back through shared memory so the stores are coalesced. Tiles are
grid-strided over at most one wave. The shared array is static, so windows above
``MAX_WINDOW`` are refused (a ValueError in the build: an ``error`` row with the reason).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factory below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba_gpu.cuda`)
cuda: Any = None

PER_THREAD = 4
MAX_THREADS = 256
MAX_WINDOW = 512


@functools.cache
def _kernel(dtype: str) -> Any:
    """The kernel for one dtype (its shared array's type and padding are constants)."""
    from gpubench.backends.numba_gpu import import_cuda

    global cuda
    cuda = import_cuda()
    import numba

    shared_type = getattr(numba, dtype)
    local_type = numba.float64
    shift = 5 if dtype == "float32" else 4  # one pad word per 128 bytes
    staged = PER_THREAD * MAX_THREADS + MAX_WINDOW - 1
    shared_size = staged + (staged >> shift)

    @cuda.jit
    def moving_average(x, w, out):
        rows, length = x.shape
        s = cuda.shared.array(shared_size, shared_type)
        res = cuda.local.array(PER_THREAD, local_type)
        tid = cuda.threadIdx.x
        nt = cuda.blockDim.x
        tile = PER_THREAD * nt
        tiles_per_row = (length + tile - 1) // tile
        halo = w - 1
        for t in range(cuda.blockIdx.x, rows * tiles_per_row, cuda.gridDim.x):
            r = t // tiles_per_row
            i0 = (t - r * tiles_per_row) * tile
            for k in range(tid, halo, nt):
                g = i0 - halo + k
                s[k + (k >> shift)] = x[r, g] if g >= 0 else 0.0
            for p in range(PER_THREAD):
                g = i0 + tid + p * nt
                k = halo + tid + p * nt
                s[k + (k >> shift)] = x[r, g] if g < length else 0.0
            cuda.syncthreads()
            first = tid * PER_THREAD
            acc = 0.0
            for k in range(first, first + w):
                acc += s[k + (k >> shift)]
            res[0] = acc
            for p in range(1, PER_THREAD):
                k_in = first + p + halo
                k_out = first + p - 1
                acc += s[k_in + (k_in >> shift)] - s[k_out + (k_out >> shift)]
                res[p] = acc
            cuda.syncthreads()  # every window read: reuse s for the outputs
            for p in range(PER_THREAD):
                k = first + p
                s[k + (k >> shift)] = res[p] / min(i0 + k + 1, w)
            cuda.syncthreads()
            for p in range(PER_THREAD):
                k = tid + p * nt
                if i0 + k < length:
                    out[r, i0 + k] = s[k + (k >> shift)]
            cuda.syncthreads()  # the next tile overwrites s

    return moving_average


@implementation("moving_average", "numba", "cuda_jit_sliding", devices=("gpu",))
def cuda_jit_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba_gpu import grid_1d

    x, out = ctx.inputs["x"], ctx.out("out")
    w = int(ctx.case.params["window"])
    if w > MAX_WINDOW:
        raise ValueError(f"window {w} > {MAX_WINDOW}: the static shared tile has no room")
    rows, length = x.shape
    blocks, threads = grid_1d(rows * -(-length // (PER_THREAD * MAX_THREADS)) * MAX_THREADS)
    threads = min(threads, MAX_THREADS)
    tiles = rows * -(-length // (PER_THREAD * threads))
    launch = _kernel(ctx.case.dtype)[min(blocks, tiles), threads]

    def call() -> None:
        launch(x, w, out)

    return call
