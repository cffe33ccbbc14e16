"""moving_average in CUDA Python with a sliding window in registers:
``moving_average_warp<T, W, V>`` of ``moving_average.cu``, compiled by NVRTC for this
case's window, launched by cuda.core.

The ``nvrtc`` row's tiled kernel is instruction-bound at float32 (its time follows the
element count, not the bytes). This one keeps the data in registers: each lane of a
warp loads V consecutive elements in one 16-byte access, takes the window before them
from the lanes before it by warp shuffles (their sums, then one add and one subtract
per output as it slides) and stores its V outputs in one access: no shared memory, no
barrier, 32-bit indices. The window and V are template arguments (an NVRTC name
expression, one compile per dtype and window) so shuffle distances and register
indices are constants. Grid: 256 threads, a warp per 32 V elements, at most one wave.

Rows must start on a lane's first element: V shrinks to 2 or 1 (8- or 4-byte
accesses) where L is not a multiple of 16 bytes. Where the window reaches past the
previous warp's elements (W > 32 V + 1: 129 float, 65 double) or rows * L needs more
than 32 bits, the row launches the tiled ``nvrtc`` kernel instead: the same results,
that row's speed.

Unroll: ``moving_average_warp<T, W, V, U>`` takes U chunks per warp per grid-stride step
(each lane issues the loads of all U before any shuffle). U is :data:`DEFAULT_UNROLL`
unless the environment variable ``GPUBENCH_UNROLL`` (1, 2 or 4; anything else is a
ValueError) overrides it when the row is built, for a script measuring each U
(tools/unroll_check.py). The kernel has U = 1 and 2 only: :func:`warp_kernel`
takes U = 2 where the request is 2 or more and (dtype, V, W) is within
:data:`UNROLL2_MAX_WINDOW` (ptxas spills past it), else U = 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation

#: C type of each dtype in the kernel's template argument
CTYPES = {"float32": "float", "float64": "double"}
#: elements (rows * L) the kernel's 32-bit indices reach
MAX_ELEMENTS = 2**31 - 1
#: unroll factor asked for unless $GPUBENCH_UNROLL says otherwise (1 or 2 run; 4 asks 2)
DEFAULT_UNROLL = 1
#: (dtype, V) -> the largest window with U = 2 (its launch bounds, 6 blocks per SM for
#: float and 5 for double, compile without spills for every window up to it on sm_90;
#: ptxas -v spills from 35 / 27 / 22 (float V = 4 / 2 / 1), 18 / 19 (double V = 2 / 1))
UNROLL2_MAX_WINDOW = {("float32", 4): 33, ("float32", 2): 16, ("float32", 1): 16,
                      ("float64", 2): 16, ("float64", 1): 16}


def warp_kernel(rows: int, length: int, window: int, dtype: str,
                pointers: tuple[int, ...] = (), unroll: int = 1) -> tuple[str, int] | None:
    """(name expression, V) of the ``moving_average_warp`` instantiation for the case, or
    None where it cannot run (then the tiled kernel does).

    V: the most elements of 16 bytes' worth, halved until it divides L (a lane's
    elements in one row) and every pointer is aligned to V elements. U: 2 where
    ``unroll`` >= 2 and the window is within :data:`UNROLL2_MAX_WINDOW`, else 1 (then
    the expression has no U: the template's default, 1).
    """
    itemsize = np.dtype(dtype).itemsize
    v = 16 // itemsize
    while v > 1 and (length % v or any(int(p) % (v * itemsize) for p in pointers)):
        v //= 2
    if not 1 <= window <= 32 * v + 1 or rows * length > MAX_ELEMENTS:
        return None
    u = 2 if unroll >= 2 and window <= UNROLL2_MAX_WINDOW[(dtype, v)] else 1
    return f"moving_average_warp<{CTYPES[dtype]}, {window}, {v}{', 2' if u == 2 else ''}>", v


def warp_threads(n: int, v: int) -> int:
    """Threads that cover ``n`` elements at V per lane: whole warps."""
    return -(-n // (32 * v)) * 32


@implementation("moving_average", "cuda_python", "nvrtc_sliding", devices=("gpu",))
def nvrtc_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS, unroll_factor
    from gpubench.kernels.moving_average.with_cuda_python import nvrtc

    be = ctx.backend
    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    warp = warp_kernel(rows, length, int(ctx.case.params["window"]), ctx.case.dtype,
                       (x.ptr, out.ptr), unroll_factor(DEFAULT_UNROLL))
    if warp is None:
        return nvrtc(ctx)
    name, v = warp
    kernel = be.kernel(cuda_sources.source("moving_average"), name, (name,))
    grid = be.grid_for(kernel, warp_threads(rows * length, v))
    args = (x.ptr, out.ptr, np.int32(rows * length), np.int32(length))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args)

    return call
