"""The launch floor: what one call costs a caller before any work, set against the
device time of ``vector_add``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpubench.plausibility import is_device_timer
from gpubench.report.base import (
    _ordered,
    fmt_int,
    fmt_time,
)
from gpubench.report.render import text_table
from gpubench.report.sections.common import (
    TRANSFERS_SUFFIX,
    best_per,
    primary_mode,
)
from gpubench.report.sections.crossover import (
    crossover,
)
from gpubench.spec import kernel_specs

# -- the launch floor ---------------------------------------------------------------------


def floor_kernels() -> tuple[str, str]:
    """The kernel whose rows give the cost of one call (the first latency-bound kernel
    timed on the device, not the host), and the one it is set against (the first
    memory-bound kernel: the least work per element); '' where none is declared."""
    specs = kernel_specs()
    floor = next((s.name for s in specs if s.bound == "latency" and not s.host_timed), "")
    work = next((s.name for s in specs if s.bound == "memory"), "")
    return floor, work


def launch_floor_table(df: pd.DataFrame) -> pd.DataFrame | None:
    """Per backend, the fixed cost of one call (``launch_overhead`` at its smallest size,
    best implementation by the pipelined caller's clock) and how many ``vector_add``
    elements, data on the device, it takes before the device time of the work exceeds
    that cost: below that size a call is all overhead, whatever the device does."""
    floor_kernel, work_kernel = floor_kernels()
    mode = primary_mode(df)
    ok = df[(df["status"] == "ok") & (df["mode"] == mode)]
    floor = ok[(ok["kernel"] == floor_kernel) & (ok["caller_s"] > 0)]
    if floor.empty:
        return None
    floor = floor[floor["size_key"] == floor.groupby("backend")["size_key"].transform("min")]
    best = best_per(floor, ["backend"], by="caller_s")
    work = ok[(ok["kernel"] == work_kernel)
              & ~ok["implementation"].str.endswith(TRANSFERS_SUFFIX)]
    dtypes = _ordered(work["dtype"], ("float32", "float64"))
    rows = []
    for _, r in best.sort_values(["device", "backend"], kind="mergesort").iterrows():
        cells = [r["backend"], r["implementation"], fmt_int(r["size_key"]),
                 fmt_time(r["caller_s"]), fmt_time(r["sync_s"]),
                 f"{fmt_time(r['median_s'])} ({r['timer']})"]
        for dtype in dtypes:
            w = best_per(work[(work["backend"] == r["backend"]) & (work["dtype"] == dtype)],
                         ["size_key"])
            w = w[w["timer"].map(is_device_timer)]
            if w.empty:
                cells.append("not measured" if r["device"] == "gpu" else
                             "— (one clock: the wall time includes the call)")
                continue
            cells.append(_floor_text(w["size_key"].to_numpy(float), float(r["caller_s"]),
                                     w["median_s"].to_numpy(float)))
        rows.append(cells)
    return text_table(["backend", "implementation", "size", "per call, pipelined (caller)",
                  "per call, sync (caller)", "device clock",
                  *(f"{work_kernel} {d}: elements before the device time exceeds "
                    "the pipelined call" for d in dtypes)], rows,
                 frozenset({"size", "per call, pipelined (caller)", "per call, sync (caller)"}))


def _floor_text(sizes: np.ndarray, overhead: float, device: np.ndarray) -> str:
    """From which size the device time stays above the cost of one call."""
    order = np.argsort(sizes)
    s, d = sizes[order], device[order]
    found = crossover(s, np.full(s.shape, overhead), d)
    if not math.isfinite(found[1]):
        return f"> {int(s[-1]):,} (the call costs more at every measured size)"
    if found[1] <= s[0] and d[0] > overhead:
        return f"≤ {int(s[0]):,} (the work costs more at every measured size)"
    return found[0]


@dataclass
class LaunchFloor:
    """The launch-floor section: its table (None: not measured)."""

    table: pd.DataFrame | None
    kernel: str = field(default_factory=lambda: floor_kernels()[0])
    work_kernel: str = field(default_factory=lambda: floor_kernels()[1])


def build(df: pd.DataFrame) -> LaunchFloor:
    return LaunchFloor(launch_floor_table(df))
