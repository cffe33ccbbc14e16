"""moving_average in Numba CUDA: one thread per output element, summing its window.

Why not one thread per row with a running sum (O(1) per element, as the CPU versions
do)? A row is a thread's serial chain of L dependent steps, and there are only
rows = size / L threads (16384 at 2**24 elements, L = 1024: about 6% of an H100's
thread slots; a single thread for sizes <= L); the threads of a warp read addresses L
elements apart, so no load is coalesced. One thread per element has n-way parallelism,
coalesced loads (a warp reads 32 consecutive elements per window step) and reads each
input element ``window`` times, but from L1/L2: after the first touch the window's
neighbours are cache hits, so DRAM traffic stays near one read and one write per
element. The O(window) work (16 adds at the default) is cheap next to that traffic;
for windows in the hundreds the row-wise running sum would win.

Sums are float64 (the literal ``0.0``), as in the CPU versions; the output is written
in the case's dtype. Launch: a 1-D grid-stride loop over rows * L elements with at most
one full wave of 256-thread blocks (:func:`gpubench.backends.numba_gpu.grid_1d`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@functools.cache
def _kernel() -> Any:
    """The windowed-mean kernel; Numba compiles one version per dtype on first launch."""
    from gpubench.backends.numba_gpu import import_cuda

    cuda = import_cuda()

    @cuda.jit
    def moving_average(x, w, out):
        length = x.shape[1]
        n = x.shape[0] * length
        for idx in range(cuda.grid(1), n, cuda.gridsize(1)):
            r = idx // length
            i = idx - r * length
            lo = max(0, i - w + 1)
            s = 0.0
            for k in range(lo, i + 1):
                s += x[r, k]
            out[r, i] = s / (i + 1 - lo)

    return moving_average


@implementation("moving_average", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba_gpu import grid_1d

    x, out = ctx.inputs["x"], ctx.out("out")
    w = int(ctx.case.params["window"])
    launch = _kernel()[grid_1d(x.shape[0] * x.shape[1])]

    def call() -> None:
        launch(x, w, out)

    return call
