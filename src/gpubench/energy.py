"""Energy per call, read from the hardware's own energy counters.

On a GPU: NVML's total-energy counter (``nvmlDeviceGetTotalEnergyConsumption``, mJ
since the driver loaded; the whole board). On a CPU: RAPL through
``/sys/class/powercap`` (µJ, the CPU packages), where the files are readable (they are
root-only on most kernels since 2020). Elsewhere: ``not measured`` with the reason.

Why a window aligned to the counter's updates: the counters count in mJ or µJ but are
refreshed only every few to hundreds of milliseconds, so a reading around a short run
of calls is mostly quantisation. :func:`energy_window` keeps the calls running back to
back, starts at an observed update of the counter and stops at the first update after
``min_time_s``: the energy between two updates divided by the calls completed between
them. The error at each end is at most one batch of calls (about 2 ms) against a
window of ``min_time_s`` or more. The figure includes the board's (or package's) idle
power: it is what running that loop costs, not the kernel's share alone.
"""

from __future__ import annotations

import glob
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the row fields this module fills (the results schema declares them)
FIELDS = ("energy_j", "energy_power_w", "energy_sm_mhz", "energy_calls", "energy_window_s",
          "energy_meter", "energy_reason")


class Meter:
    """A monotone energy counter: :meth:`read` in joules; ``reason`` says why it cannot
    be used (then :meth:`read` is never called)."""

    name = "none"
    reason = ""

    def read(self) -> float:
        raise NotImplementedError

    def clock_mhz(self) -> float:
        """The SM clock while the window runs (GPUs); NaN where there is none."""
        return math.nan


class Unmetered(Meter):
    """No usable counter on this machine; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def nvml_handle(pynvml: Any) -> Any:
    """The step's GPU: the first of CUDA_VISIBLE_DEVICES (index or UUID), else index 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    if visible.isdigit():
        return pynvml.nvmlDeviceGetHandleByIndex(int(visible))
    return pynvml.nvmlDeviceGetHandleByUUID(visible)


class NvmlMeter(Meter):
    """The board's energy since the driver loaded, through NVML (Volta and newer)."""

    name = "nvml_total_energy"

    def __init__(self) -> None:
        try:
            import pynvml
        except ImportError as exc:
            self.reason = f"nvidia-ml-py is not installed ({exc})"
            return
        try:
            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = nvml_handle(pynvml)
            pynvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except Exception as exc:  # noqa: BLE001 - no driver, no GPU, or no energy counter
            self.reason = f"NVML energy counter unreadable: {type(exc).__name__}: {exc}"[:300]

    def read(self) -> float:
        return float(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)) / 1e3

    def clock_mhz(self) -> float:
        try:
            return float(self._nvml.nvmlDeviceGetClockInfo(self._handle,
                                                           self._nvml.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001 - telemetry only
            return math.nan


@dataclass
class _Zone:
    path: Path
    wrap: float  # joules at which the counter wraps to 0


@dataclass
class RaplMeter(Meter):
    """The CPU packages' energy through the powercap interface (Intel and AMD RAPL)."""

    root: str = "/sys/class/powercap"
    zones: list[_Zone] = field(default_factory=list)
    name: str = "rapl_package"
    reason: str = ""

    def __post_init__(self) -> None:
        tops = sorted(p for p in glob.glob(os.path.join(self.root, "intel-rapl:*"))
                      if p.count(":") == 1)
        if not tops:
            self.reason = f"no RAPL package counters under {self.root}"
            return
        for top in tops:
            path = Path(top)
            try:
                (path / "energy_uj").read_text()
                wrap = float((path / "max_energy_range_uj").read_text()) / 1e6
            except OSError as exc:
                self.reason = (f"RAPL counter {path / 'energy_uj'} unreadable "
                               f"({exc.strerror or exc}; root-only on most kernels)")
                self.zones = []
                return
            self.zones.append(_Zone(path, wrap))
        self._last = [0.0] * len(self.zones)
        self._offset = [0.0] * len(self.zones)

    def read(self) -> float:
        total = 0.0
        for i, zone in enumerate(self.zones):
            raw = float((zone.path / "energy_uj").read_text()) / 1e6
            if raw < self._last[i]:  # wrapped since the last read
                self._offset[i] += zone.wrap
            self._last[i] = raw
            total += raw + self._offset[i]
        return total


_METERS: dict[str, Meter] = {}


def meter_for(device: str) -> Meter:
    """The counter for ``device`` (``gpu`` or ``cpu``), opened once per process."""
    if device not in _METERS:
        _METERS[device] = NvmlMeter() if device == "gpu" else RaplMeter()
    return _METERS[device]


def not_measured(reason: str) -> dict[str, Any]:
    return {"energy_reason": f"not measured: {reason}"}


def energy_window(run_batch: Callable[[], Any], calls_per_batch: int, meter: Meter,
                  min_time_s: float, max_wait_s: float,
                  clock: Callable[[], float] = time.perf_counter) -> tuple[dict[str, Any], Any]:
    """Energy per call of ``run_batch`` (``calls_per_batch`` calls, then a wait for them):
    (row fields, the last batch's result). See the module doc for the method.

    Gives up, as ``not measured``, when the counter does not move within ``max_wait_s``
    of the calls (first update) or of ``min_time_s`` (the closing update)."""
    if meter.reason:
        return not_measured(meter.reason), None
    result = None
    t0 = clock()
    e_last = meter.read()
    start: tuple[float, float] | None = None
    calls = 0
    mhz: list[float] = []
    while True:
        result = run_batch()
        e, t = meter.read(), clock()
        ticked = e != e_last
        e_last = e
        if start is None:
            if ticked:
                start, calls = (t, e), 0
            elif t - t0 > max_wait_s:
                return not_measured(f"{meter.name} did not change in {t - t0:.2f} s of "
                                    "calls"), result
            continue
        calls += calls_per_batch
        if ticked:
            mhz.append(meter.clock_mhz())
        span = t - start[0]
        if ticked and span >= min_time_s:
            joules = e - start[1]
            if not joules > 0:
                return not_measured(f"{meter.name} went from {start[1]:.3f} J to {e:.3f} J"
                                    ), result
            clocks = [m for m in mhz if math.isfinite(m)]
            return {"energy_j": joules / calls, "energy_power_w": joules / span,
                    "energy_sm_mhz": sum(clocks) / len(clocks) if clocks else math.nan,
                    "energy_calls": calls, "energy_window_s": span,
                    "energy_meter": meter.name, "energy_reason": ""}, result
        if span > min_time_s + max_wait_s:
            return not_measured(f"{meter.name} did not change in the {max_wait_s:.2f} s "
                                "after the window's length was reached"), result
