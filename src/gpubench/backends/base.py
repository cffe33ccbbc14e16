"""The adapter interface every framework implements."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np


class Unavailable(Exception):
    """The framework cannot run here; the message says why (recorded, never raised on)."""


def cpu_memory_available() -> int:
    """Bytes of host memory available now (MemAvailable), falling back to psutil."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import psutil

    return int(psutil.virtual_memory().available)


class Backend:
    """A framework on a device. Subclasses override what differs from host NumPy."""

    framework: str = ""
    device: str = "cpu"
    #: what measures a sample: a host clock here, device events on GPUs
    timer: str = "perf_counter"

    def start(self, threads: int) -> dict[str, str]:
        """Import the framework and pin its thread count; return its versions.

        Raises :class:`Unavailable` with a reason if it cannot run here.
        """
        raise NotImplementedError

    @property
    def backend_id(self) -> str:
        return f"{self.framework}-{self.device}"

    def device_name(self) -> str:
        from gpubench.provenance import cpu_model

        return cpu_model()

    def free_memory(self) -> int | None:
        """Bytes free where this backend's arrays live (host RAM for CPU backends)."""
        return cpu_memory_available()

    # -- data movement -----------------------------------------------------------------
    def to_device(self, array: np.ndarray) -> Any:
        return np.array(array, copy=True)

    def to_host(self, value: Any) -> Any:
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return np.empty(shape, dtype=dtype)

    def poison(self, buffer: Any) -> None:
        """Fill an output buffer with NaN so an unwritten element can never pass."""
        buffer[...] = np.nan

    # -- timing ------------------------------------------------------------------------
    #: whether flush_cache() really evicts the device cache (enables the cold mode)
    supports_cold: bool = False

    def flush_cache(self) -> None:
        """Evict the device's last-level cache before a cold sample (GPUs: write > L2)."""

    def hide_launch(self) -> None:
        """Queue a short busy kernel before a hot GPU sample (nvbench's blocking kernel).

        While the GPU spins, the host finishes launching the timed call, so the events
        bracket the device work, not Python's launch latency; the latter is what the
        launch_overhead kernel measures. The cold mode's flush does the same job.
        """

    def before_sample(self, cold: bool) -> None:
        """Prepare the device for one timed sample (outside the timed region)."""
        if cold:
            self.flush_cache()
        else:
            self.hide_launch()

    def block(self, result: Any) -> None:
        """Wait until the work that produced ``result`` has finished."""

    def time_call(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``fn`` once to completion and return (result, seconds)."""
        clock = time.perf_counter
        t0 = clock()
        result = fn()
        self.block(result)
        return result, clock() - t0


def pin_threads_env(threads: int) -> dict[str, str]:
    """Environment variables that cap every threading runtime we know of at ``threads``."""
    t = str(threads)
    return {
        "OMP_NUM_THREADS": t,
        "MKL_NUM_THREADS": t,
        "OPENBLAS_NUM_THREADS": t,
        "BLIS_NUM_THREADS": t,
        "VECLIB_MAXIMUM_THREADS": t,
        "NUMEXPR_NUM_THREADS": t,
        "NUMBA_NUM_THREADS": t,
        "XLA_FLAGS": (
            os.environ.get("XLA_FLAGS", "")
            + f" --xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
            + f" intra_op_parallelism_threads={t}"
        ).strip(),
    }
