"""Launch geometry shared by every framework that launches the ``.cu`` kernels itself:
the CUDA Python backend and the CuPy RawKernel rows size their grids by one rule here,
so neither kind of implementation imports the other's backend."""

from __future__ import annotations

import math
from typing import Any

#: Threads per block of every 1D launch, in the CUDA Python and the CuPy RawKernel rows
#: (the ``.cu`` files' launch bounds assume it).
THREADS = 256


def grid_blocks(items: int, blocks_per_sm: int, sm_count: int, threads: int = THREADS) -> int:
    """Blocks for a grid-stride kernel: enough for ``items`` work items, at most one wave.

    One wave (every block resident at once, ``blocks_per_sm`` from the occupancy API)
    leaves no half-empty second wave; the kernels loop over what is left. Shared by the
    CUDA Python backend and the CuPy RawKernel rows so both launch the same geometry.
    """
    needed = max(1, math.ceil(items / threads))
    return max(1, min(needed, max(1, blocks_per_sm) * max(1, sm_count)))


def cupy_raw_grid(function: Any, items: int, shmem: int = 0, threads: int = THREADS) -> int:
    """:func:`grid_blocks` for a CuPy RawKernel, with CuPy's own occupancy and SM count."""
    import cupy

    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        function.kernel.ptr, threads, shmem)
    sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return grid_blocks(items, int(per_sm), int(sm_count), threads)
