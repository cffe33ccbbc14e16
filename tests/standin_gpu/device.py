"""The stand-in GPU's "device": host memory behind an allocator that counts its bytes,
and events that read the host clock. Every other module of the package builds on it
(the adapter, the memory probe, the several-device and ceiling hooks, the kernel)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpubench.memory import LiveBytes
from gpubench.timing import EventPair

#: the stand-in device's allocator: bytes allocated and not yet garbage, and their peak
ALLOCATED = LiveBytes()
#: where its persistent compilation cache lives (set by the step: compile_cache_vars)
CACHE_ENV = "GPUBENCH_STANDIN_GPU_CACHE_DIR"


def device_empty(shape: Any, dtype: Any) -> np.ndarray:
    """An array of the stand-in device: counted until it is garbage."""
    array = np.empty(shape, dtype=dtype)
    ALLOCATED.add(array, int(array.nbytes))
    return array


def host_events() -> EventPair:
    """The stand-in device's event pair: each event holds the host clock's reading when
    recorded (a real framework's events are read by the device)."""
    return EventPair([0.0], [0.0], lambda a, b: b[0] - a[0],
                     done=lambda ev: True,
                     record=lambda ev: ev.__setitem__(0, time.perf_counter()),
                     wait=lambda ev: None)
