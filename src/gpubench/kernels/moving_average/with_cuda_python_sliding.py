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
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation

#: C type of each dtype in the kernel's template argument
CTYPES = {"float32": "float", "float64": "double"}
#: elements (rows * L) the kernel's 32-bit indices reach
MAX_ELEMENTS = 2**31 - 1


def warp_kernel(rows: int, length: int, window: int, dtype: str,
                pointers: tuple[int, ...] = ()) -> tuple[str, int] | None:
    """(name expression, V) of the ``moving_average_warp`` instantiation for the case, or
    None where it cannot run (then the tiled kernel does).

    V: the most elements of 16 bytes' worth, halved until it divides L (a lane's
    elements in one row) and every pointer is aligned to V elements.
    """
    itemsize = np.dtype(dtype).itemsize
    v = 16 // itemsize
    while v > 1 and (length % v or any(int(p) % (v * itemsize) for p in pointers)):
        v //= 2
    if not 1 <= window <= 32 * v + 1 or rows * length > MAX_ELEMENTS:
        return None
    return f"moving_average_warp<{CTYPES[dtype]}, {window}, {v}>", v


def warp_threads(n: int, v: int) -> int:
    """Threads that cover ``n`` elements at V per lane: whole warps."""
    return -(-n // (32 * v)) * 32


@implementation("moving_average", "cuda_python", "nvrtc_sliding", devices=("gpu",))
def nvrtc_sliding(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS
    from gpubench.kernels.moving_average.with_cuda_python import nvrtc

    be = ctx.backend
    x, out = ctx.inputs["x"], ctx.out("out")
    rows, length = x.shape
    warp = warp_kernel(rows, length, int(ctx.case.params["window"]), ctx.case.dtype,
                       (x.ptr, out.ptr))
    if warp is None:
        return nvrtc(ctx)
    name, v = warp
    kernel = be.kernel(cuda_sources.source("moving_average"), name, (name,))
    grid = be.grid_for(kernel, warp_threads(rows * length, v))
    args = (x.ptr, out.ptr, np.int32(rows * length), np.int32(length))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args)

    return call
