"""Theoretical occupancy per row: how full a launch keeps each SM, from the occupancy API.

Rows whose threads per block are what is measured (the ``launch_config`` kernel's
variants) record it, so a block size's time can be read beside what it lets the SM hold.
A builder hands :func:`attach` a function that asks its framework's occupancy API for the
compiled kernel; the harness calls it after the first call (a JIT framework has compiled
by then) and writes :data:`COLUMNS`. Where no API answers (Numba's CUDA simulator, an old
cuda-core), ``occupancy_reason`` says why and ``occupancy`` stays empty.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: the row columns this module fills
COLUMNS = ("occupancy", "occupancy_reason")


def theoretical(blocks_per_sm: int, threads: int, max_threads_per_sm: int) -> float:
    """Resident threads per SM (blocks the occupancy API allows x threads each) over the
    SM's most: 1.0 when the launch fills the SM's thread slots. ValueError on a count the
    API cannot have given (the row would carry a wrong figure, not a missing one)."""
    if blocks_per_sm < 0 or threads <= 0 or max_threads_per_sm <= 0:
        raise ValueError(f"occupancy of {blocks_per_sm} blocks of {threads} threads on an "
                         f"SM of {max_threads_per_sm} threads")
    if blocks_per_sm == 0:
        raise ValueError(f"the occupancy API gives 0 resident blocks of {threads} threads: "
                         "the kernel cannot launch at that block size")
    return min(1.0, blocks_per_sm * threads / max_threads_per_sm)


def attach(ctx: Any, occupancy: Callable[[], float]) -> None:
    """Give the harness ``occupancy`` (a no-argument function returning the row's
    theoretical occupancy, or raising with the reason there is none) for ``ctx``'s row."""
    ctx.occupancy = occupancy


def fields(ctx: Any) -> dict[str, Any]:
    """The row's :data:`COLUMNS` from what its builder attached; none where it attached
    nothing (every kernel but the block-size sweep)."""
    occupancy = getattr(ctx, "occupancy", None)
    if occupancy is None:
        return {}
    try:
        value = float(occupancy())
    except Exception as exc:  # noqa: BLE001 - a missing figure is a reason, never a failure
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
        return {"occupancy": math.nan, "occupancy_reason": f"not measured: {text}"[:300]}
    if not 0 < value <= 1:
        return {"occupancy": math.nan,
                "occupancy_reason": f"not measured: the occupancy API gave {value!r}"}
    return {"occupancy": value, "occupancy_reason": ""}
