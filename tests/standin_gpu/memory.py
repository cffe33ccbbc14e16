"""The stand-in GPU's memory probe: its allocator's live bytes around one call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.memory import Probe
from standin_gpu.device import ALLOCATED


class StandinProbe(Probe):
    meter = "standin_live_bytes"

    def in_use(self) -> int:
        return ALLOCATED.live

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        start = ALLOCATED.high = ALLOCATED.live
        result = call()
        self.wait(result)
        return result, max(0, ALLOCATED.high - start)
