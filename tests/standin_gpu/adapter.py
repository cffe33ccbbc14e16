"""The stand-in GPU's adapter: host NumPy arrays behind a counting allocator."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends.base import Backend
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


class StandinGPU(Backend):
    """Host memory standing in for a GPU's."""

    framework = "standin_gpu"
    device = "gpu"
    environment = "numpy"
    display_name = "Stand-in GPU"
    order = 110
    version_keys = ("standin_gpu",)
    key_packages = ("numpy",)
    probe_packages = ("numpy",)
    multi_device = ("standin_devices",)
    memory_probe = "standin_gpu.memory:StandinProbe"
    compile_cache_vars = {CACHE_ENV: "standin_gpu"}
    compiling = frozenset({"add"})
    device_probe_rank = 99  # after every real framework
    timer = "standin_event"
    host_memory = False

    def start(self, threads: int) -> dict[str, str]:
        self.event_pair = host_events()
        return {"standin_gpu": "0.1", "numpy": np.__version__}

    def device_name(self) -> str:
        return "stand-in GPU (host memory)"

    def to_device(self, array: np.ndarray) -> Any:
        out = device_empty(array.shape, array.dtype)
        out[...] = array
        return out

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return device_empty(shape, dtype)

    def compile_cache_dirs(self) -> list[Path]:
        where = os.environ.get(CACHE_ENV)
        return [Path(where)] if where else []

    @classmethod
    def multi_device_steps(cls) -> dict[str, Any]:
        from standin_gpu.mpi import STEPS

        return STEPS

    @classmethod
    def measure_ceilings(cls, copy_bytes: int, gemm_n: int, transfer_bytes: list[int],
                         more_copies: Any) -> dict[str, Any]:
        from standin_gpu.ceilings import standin_ceilings

        return standin_ceilings(copy_bytes, gemm_n, more_copies)

    @classmethod
    def steady_copy(cls, elements: int) -> tuple[Any, Any]:
        src = device_empty(elements, np.float32)
        src[...] = 1.0
        dst = device_empty(elements, np.float32)
        return (lambda: np.copyto(dst, src)), (lambda: None)
