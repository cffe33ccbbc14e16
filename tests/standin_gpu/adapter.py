"""The stand-in GPU's adapter: host NumPy arrays behind a counting allocator."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends.base import Backend, Facts
from standin_gpu.ceilings import StandinCeilings
from standin_gpu.device import CACHE_ENV, device_empty, host_events
from standin_gpu.mpi import StandinMulti


class StandinGPU(Backend):
    """Host memory standing in for a GPU's."""

    framework = "standin_gpu"
    device = "gpu"
    facts = Facts(
        environment="numpy", display_name="Stand-in GPU", order=110,
        version_keys=("standin_gpu",), key_packages=("numpy",), probe_packages=("numpy",),
        multi_device=("standin_devices",), memory_probe="standin_gpu.memory:StandinProbe",
        compile_cache_vars={CACHE_ENV: "standin_gpu"}, compiling=frozenset({"add"}),
        device_probe_rank=99,  # after every real framework
        timer="standin_event", host_memory=False)
    multi = StandinMulti
    ceilings = StandinCeilings

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
