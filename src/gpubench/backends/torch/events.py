"""PyTorch's device events: its backend's timer and its ceiling measurements'."""

from __future__ import annotations

from typing import Any

from gpubench.timing import EventPair


def torch_events(torch: Any) -> EventPair:
    """PyTorch's event pair on the current stream (the PyTorch backend's and the
    ceilings')."""
    return EventPair(torch.cuda.Event(enable_timing=True),
                     torch.cuda.Event(enable_timing=True),
                     lambda a, b: a.elapsed_time(b) / 1e3,
                     done=lambda ev: bool(ev.query()))
