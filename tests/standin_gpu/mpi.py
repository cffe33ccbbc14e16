"""The stand-in GPU driven several at a time by one process (the ``multi_gpu`` job)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.backends.hooks import MultiDevice
from standin_gpu.device import device_empty


def standin_devices(ctx: Any, parts: list[np.ndarray]) -> Callable[[], float]:
    """One stand-in device per part: each part copied to its own, summed there."""
    on_device = []
    for part in parts:
        on_device.append(device_empty(part.shape, part.dtype))
        on_device[-1][...] = part
    return lambda: float(sum(np.vdot(p, p) for p in on_device))


STEPS = {"standin_devices": standin_devices}


class StandinMulti(MultiDevice):
    """The stand-in's several-device step."""

    @classmethod
    def steps(cls) -> dict[str, Callable[[Any, list[np.ndarray]], Callable[[], float]]]:
        return STEPS
