"""Launch geometry shared by every framework that launches the ``.cu`` kernels itself:
the CUDA Python backend and the CuPy RawKernel rows size their grids by one rule here,
so neither kind of implementation imports the other's backend."""

from __future__ import annotations

import math
import os
from typing import Any

#: Threads per block of every 1D launch, in the CUDA Python and the CuPy RawKernel rows
#: (the ``.cu`` files' launch bounds assume it).
THREADS = 256

#: environment variable that overrides the launchers' unroll factor (packs per thread
#: per grid-stride step of the memory-bound ``.cu`` kernels), read when a row is built,
#: for scripts that compare them; a benchmark step's workers run without it
#: (:func:`gpubench.runner.worker_environment`)
UNROLL_ENV = "GPUBENCH_UNROLL"
#: unroll factors the ``.cu`` files export (``<entry>``, ``<entry>_u2``, ``<entry>_u4``)
UNROLLS = (1, 2, 4)


def unroll_factor(default: int) -> int:
    """The unroll factor U a launcher builds with: ``$GPUBENCH_UNROLL`` if set (for a
    measuring script comparing U, e.g. tools/unroll_check.py), else the kernel
    family's ``default``. Raises ValueError unless it is one of 1, 2, 4."""
    raw = os.environ.get(UNROLL_ENV, "").strip()
    value: Any = raw or default
    try:
        u = int(value)
    except (TypeError, ValueError):
        u = None
    if u not in UNROLLS or str(value).strip() != str(u):
        source = f"{UNROLL_ENV}={raw!r}" if raw else f"default unroll {default!r}"
        raise ValueError(f"{source}: the unroll factor must be one of "
                         f"{', '.join(map(str, UNROLLS))}")
    return u


def unrolled(name: str, u: int) -> str:
    """Entry point of ``name`` (the U = 1 kernel) unrolled U times: ``name_u<U>``."""
    if u not in UNROLLS:
        raise ValueError(f"unroll factor {u!r}: must be one of {UNROLLS}")
    return name if u == 1 else f"{name}_u{u}"


def grid_blocks(items: int, blocks_per_sm: int, sm_count: int, threads: int = THREADS) -> int:
    """Blocks for a grid-stride kernel: enough for ``items`` work items, at most one wave.

    One wave (every block resident at once, ``blocks_per_sm`` from the occupancy API)
    leaves no half-empty second wave; the kernels loop over what is left. Shared by the
    CUDA Python backend and the CuPy RawKernel rows so both launch the same geometry.
    """
    needed = max(1, math.ceil(items / threads))
    return max(1, min(needed, max(1, blocks_per_sm) * max(1, sm_count)))
