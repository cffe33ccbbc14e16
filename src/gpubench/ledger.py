"""Where a step's time goes: seconds per stage of a worker's items.

A step's wall time is mostly not its timed samples: inputs and references, first calls
(compilation), result checks, warm-up, the energy windows and the spread rounds add to
them. The worker credits every second to one stage and prints the totals at its end, so
a user can see which stage to cut, and a change can be
shown to have cut that stage and not the measurement.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Ledger:
    """Seconds per stage, from a running clock: :meth:`enter` credits the time since
    the last call to the stage then current and makes ``stage`` current."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.totals: dict[str, float] = {}
        self.current: str | None = None
        self.since = 0.0

    def enter(self, stage: str | None) -> None:
        """Credit the current stage up to now; then time ``stage`` (None: nothing)."""
        now = self.clock()
        if self.current is not None:
            self.totals[self.current] = self.totals.get(self.current, 0.0) + now - self.since
        self.current, self.since = stage, now

    def total(self) -> float:
        return sum(self.totals.values())

    def line(self) -> str:
        """The totals, largest first, with their shares: one line for the step's log."""
        whole = self.total()
        parts = sorted(self.totals.items(), key=lambda kv: (-kv[1], kv[0]))
        return ", ".join(f"{name} {secs:.1f} s ({100 * secs / whole:.0f} %)" if whole > 0
                         else f"{name} {secs:.1f} s" for name, secs in parts)
