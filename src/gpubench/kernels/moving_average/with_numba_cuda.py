"""moving_average in Numba CUDA: one warp per series, a running sum carried by warp scans.

The window sum obeys ``S[i] = S[i-1] + x[i] - x[i-w]`` (x[j] = 0 for j < 0), the CPU
versions' running sum. A warp walks its row in tiles of 32 consecutive elements: each
lane loads ``d = x[i] - x[i-w]`` (both loads coalesced; the second is usually an L1/L2
hit, read w elements earlier), an inclusive scan over the warp's 32 lanes
(``shfl_up_sync``, 5 steps) gives the partial sums, adding the carry from the previous
tile gives S, and lane 31 hands the new carry on (``shfl_sync``). Work is O(1) per
element whatever the window, and no shared memory is needed. Sums are float64 (float32
rows are widened on load), as in the CPU versions; the output is in the case's dtype.

Why this and not the two obvious kernels (one run on an H100, float32, L = 1024; median of
30 launches timed with CUDA events, launch included):

=============================================  ==========  ==========  ===========
kernel                                         2**20, w16  2**24, w16  2**24, w128
=============================================  ==========  ==========  ===========
one thread per element, loop over the window       56 us      462 us     2560 us
one thread per row, running sum                   275 us      357 us      357 us
one warp per row, scanned running sum (this)       44 us      152 us      181 us
=============================================  ==========  ==========  ===========

The per-element loop costs O(window) instructions per element and is compute-bound
(the same with the window staged in shared memory); the per-row loop has only
rows = n / L threads, each a serial chain whose loads are L elements apart across a
warp (uncoalesced). Launch: blocks of 256 threads (8 warps, 8 rows at a time), as many
as the rows need up to one full wave (:func:`gpubench.backends.numba.gpu.grid_1d`);
warps loop over further rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factory below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None

WARP = 32
FULL_MASK = 0xFFFFFFFF


@functools.cache
def _kernel() -> Any:
    """The moving-average kernel; Numba compiles one version per dtype on first launch."""
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()

    @cuda.jit
    def moving_average(x, w, out):
        rows, length = x.shape
        lane = cuda.threadIdx.x % WARP
        warps_per_block = cuda.blockDim.x // WARP
        warp = cuda.blockIdx.x * warps_per_block + cuda.threadIdx.x // WARP
        for r in range(warp, rows, cuda.gridDim.x * warps_per_block):
            carry = 0.0
            for base in range(0, length, WARP):  # warp-uniform: every lane shuffles
                i = base + lane
                d = 0.0
                if i < length:
                    d = x[r, i]
                    if i >= w:
                        d -= x[r, i - w]
                step = 1
                while step < WARP:
                    t = cuda.shfl_up_sync(FULL_MASK, d, step)
                    if lane >= step:
                        d += t
                    step *= 2
                s = carry + d
                if i < length:
                    out[r, i] = s / min(i + 1, w)
                carry = cuda.shfl_sync(FULL_MASK, s, WARP - 1)

    return moving_average


@implementation("moving_average", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import grid_1d

    x, out = ctx.inputs["x"], ctx.out("out")
    w = int(ctx.case.params["window"])
    launch = _kernel()[grid_1d(x.shape[0] * WARP)]  # one warp per row

    def call() -> None:
        launch(x, w, out)

    return call
