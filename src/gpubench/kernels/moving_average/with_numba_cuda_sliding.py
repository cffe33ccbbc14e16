"""moving_average in Numba CUDA with a sliding window in registers: Numba's counterpart
of the CUDA C ``nvrtc_sliding`` / ``raw_kernel_sliding`` rows, the algorithm of
``moving_average_warp<T, W, V>`` in ``moving_average.cu`` written with ``@cuda.jit``
(paired with ``nvrtc_sliding`` in the "Numba matches CUDA C" claim).

Why: the ``cuda_jit`` row (one warp per row, a running sum carried by a serial
5-step scan per 32 elements) spends ~135 warp instructions per 32 elements and
streams at ~40 % (float32) / ~68 % (float64) of an H100's copy rate at 2^26; the
shared-memory tiled kernel this row had before was slower still (staging, barriers,
``window`` shared reads per output). Streaming at ~3 TB/s leaves an SM ~2.5 warp
instructions per float32 element. Here, as in the CUDA C kernel, the data stay in
registers:

* x is one flat sequence (rows * L); a warp takes a chunk of 32 V consecutive elements
  (chunks grid-strided over at most one wave, whole warps together so every lane reaches
  every shuffle), each lane V consecutive ones. Numba has no vector loads: V scalar loads
  of consecutive addresses, which the L1 merges into the same sectors.
* The window before a lane's first element comes from the lanes before it by
  ``cuda.shfl_sync``, as sums: Q = (W - 1) // V whole lanes' sums and one suffix sum of
  the R = (W - 1) % V elements before those; then the lane slides over its V outputs (an
  add and a subtract each; the element leaving comes by one shuffle). Q + V shuffles per
  V outputs, not W reads per output.
* Lanes near the chunk's start need the previous chunk: the last H = ceil((W - 1) / V)
  lanes also load the previous chunk's elements at their own lane and offer those, not
  their own, for shuffles from d lanes back where 32 - d <= lane (:func:`_back`): one
  shuffle serves both. Hence W <= 32 V + 1.
* Row starts: L % V == 0 (V is halved until it divides L), so a lane's V elements lie in
  one row and col = (first element) mod L; a value d lanes back counts when d V <= col.
  Output j divides by min(col + j + 1, W): a multiply by 1 / W when the lane's windows
  are all full. col is kept incrementally (one modulo per thread, then an add and a
  compare per chunk), not a 64-bit modulo per chunk.
* W and V are compile-time: :func:`_kernel` builds one kernel per (dtype, W, V) with
  them as closure constants, so the ``range(V)`` / ``range(Q)`` loops unroll, shuffle
  distances fold to constants and the ``cuda.local.array`` buffers become registers
  (tests compile it to sm_90 PTX: no ``.local``).

V: 4 for float32 and 2 for float64 (16 bytes a lane, as the CUDA C kernel's one vector
access), halved while L % V != 0. Windows past 32 V + 1 (129 / 65 at the defaults) run
the ``cuda_jit`` scan kernel instead: correct, that row's speed (decided in Python by
:func:`warp_v`). Sums are in the input type, as in the CUDA C kernel (a direct window
sum per lane, then at most V - 1 slide steps: no long running sum to drift; float32
within ~1e-7 of the float64 reference): float64 sums would double every float32 shuffle
(a double is two 32-bit shuffles) and halve the add rate. Differences from CUDA C that
Numba imposes: 64-bit index arithmetic (Numba types integers as int64) and scalar, not
vector, loads and stores. Launch: 256 threads, launch bounds 8 blocks per SM (at most
32 registers: a full SM), grid = min(warps needed, one wave)
(:func:`gpubench.backends.numba.gpu.grid_1d`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factory below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None

WARP = 32
FULL_MASK = 0xFFFFFFFF
#: bytes a lane loads (V elements): the CUDA C kernel's one 16-byte access
LANE_BYTES = 16
#: launch bounds on a GPU: 256 threads, 8 resident blocks per SM (<= 32 registers)
LAUNCH_BOUNDS = (256, 8)


def warp_v(length: int, window: int, dtype: str) -> int | None:
    """Elements per lane V for rows of ``length``, or None where the warp kernel cannot
    take ``window`` (W > 32 V + 1: the window reaches past the previous chunk) and the
    ``cuda_jit`` scan kernel runs instead.

    V starts at 16 bytes' worth (4 float32, 2 float64) and halves until it divides L.
    """
    v = LANE_BYTES // np.dtype(dtype).itemsize
    while v > 1 and length % v:
        v //= 2
    return v if 1 <= window <= WARP * v + 1 else None


def warp_threads(n: int, v: int) -> int:
    """Threads that cover ``n`` elements at V per lane: whole warps."""
    return -(-n // (WARP * v)) * WARP


@functools.cache
def _kernel(dtype: str, window: int, v: int) -> Any:
    """``moving_average_warp(x, out, n, length)`` for one dtype, window W and V (flat
    C-contiguous x and out of n = rows * length elements)."""
    from gpubench.backends.numba.gpu import import_cuda, is_simulator

    global cuda
    cuda = import_cuda()
    import numba

    t = getattr(numba, dtype)
    w = int(window)
    q, r = divmod(w - 1, v)  # whole lanes of the window before a lane's first, and R
    h = q + (r > 0)  # lanes back the window reaches
    if w < 1 or h > WARP:
        raise ValueError(f"window {w} with V = {v}: the window must lie in this chunk "
                         f"and the previous (W <= {WARP * v + 1})")
    chunk = WARP * v
    q_shfl = min(q, WARP - 1)  # lanes whose sums come by shuffle (a 31-trip loop unrolls)
    options = {} if is_simulator() else {"launch_bounds": LAUNCH_BOUNDS}

    @cuda.jit(device=True, inline=True)
    def _back(own, prev, lane, d):
        """Lane (lane - d)'s value; lane - d < 0 means lane (lane - d + 32) of the
        previous chunk: lanes from 32 - d on offer ``prev`` instead of ``own``, so one
        shuffle serves both (d constant once unrolled; 0: own; 32: own previous)."""
        if d == 0:
            return own
        val = prev if lane >= WARP - d else own
        if d == WARP:
            return val
        return cuda.shfl_sync(FULL_MASK, val, (lane - d) & (WARP - 1))

    @cuda.jit(**options)
    def moving_average_warp(x, out, n, length):
        zero = t(0)
        inv_w = t(1) / t(w)
        lane = cuda.threadIdx.x & (WARP - 1)
        packs = n // v
        chunks = (packs + WARP - 1) // WARP
        warps = cuda.gridDim.x * (cuda.blockDim.x // WARP)
        # the whole warp takes the same chunks: every lane reaches every shuffle
        c = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) // WARP
        col = ((c * WARP + lane) * v) % length  # where in its row (kept incrementally)
        step = (warps * chunk) % length
        e = cuda.local.array(v, t)  # own elements
        p_ = cuda.local.array(v, t)  # last h lanes: the previous chunk's at this lane
        res = cuda.local.array(v, t)
        while c < chunks:
            p = c * WARP + lane
            i0 = p * v
            for k in range(v):
                e[k] = zero
                p_[k] = zero
            if p < packs:
                for k in range(v):
                    e[k] = x[i0 + k]
            if h > 0 and c > 0 and lane >= WARP - h:
                for k in range(v):
                    p_[k] = x[i0 - chunk + k]
            # the window ending at element 0: itself, q whole lanes back, r before those
            a = e[0]
            ah = p_[0]
            for k in range(1, v):
                a += e[k]
                ah += p_[k]
            s = e[0]
            for d in range(1, q_shfl + 1):
                got = _back(a, ah, lane, d)
                s += got if d * v <= col else zero
            if q == WARP:  # 32 lanes back: this lane's previous-chunk sum, no shuffle
                s += ah if WARP * v <= col else zero
            if r > 0:
                b = e[v - r]
                bh = p_[v - r]
                for k in range(v - r + 1, v):
                    b += e[k]
                    bh += p_[k]
                got = _back(b, bh, lane, q + 1)
                s += got if (q + 1) * v <= col else zero
            # slide: element j enters, element j - w (d lanes back, register k) leaves
            res[0] = s
            for j in range(1, v):
                d = (w - j + v - 1) // v
                k = j - w + d * v
                got = _back(e[k], p_[k], lane, d)
                s += e[j] - (got if d * v <= col else zero)
                res[j] = s
            if p < packs:
                if col >= w - 1:  # every window of this lane is full
                    for j in range(v):
                        out[i0 + j] = res[j] * inv_w
                else:  # among a row's first w - 1 outputs: fewer elements
                    for j in range(v):
                        out[i0 + j] = res[j] / t(min(col + j + 1, w))
            c += warps
            col += step
            if col >= length:
                col -= length

    return moving_average_warp


@implementation("moving_average", "numba", "cuda_jit_sliding", devices=("gpu",))
def cuda_jit_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import grid_1d
    from gpubench.kernels.moving_average.with_numba_cuda import cuda_jit

    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    w = int(ctx.case.params["window"])
    v = warp_v(length, w, ctx.case.dtype)
    if v is None:
        return cuda_jit(ctx)  # the window reaches past the previous chunk
    n = rows * length
    xf, of = x.reshape(n), out.reshape(n)  # C-contiguous: views
    launch = _kernel(ctx.case.dtype, w, v)[grid_1d(warp_threads(n, v))]

    def call() -> None:
        launch(xf, of, n, length)

    return call
