"""CuPy's device events: its backend's timer and its ceiling measurements'."""

from __future__ import annotations

from typing import Any

from gpubench.timing import EventPair


def cupy_events(cupy: Any) -> EventPair:
    """CuPy's event pair on the current stream (the CuPy backend's and the ceilings')."""
    return EventPair(cupy.cuda.Event(), cupy.cuda.Event(),
                     lambda a, b: cupy.cuda.get_elapsed_time(a, b) / 1e3,
                     done=lambda ev: bool(ev.done))
