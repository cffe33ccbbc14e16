"""Energy per call, read from the hardware's own energy counters.

On a GPU: NVML's total-energy counter (``nvmlDeviceGetTotalEnergyConsumption``, mJ
since the driver loaded; the whole board). On a CPU: RAPL through
``/sys/class/powercap`` (µJ, the CPU packages), where the files are readable (they are
root-only on most kernels since 2020). Elsewhere: ``not measured`` with the reason.

Why a window aligned to the counter's updates: the counters count in mJ or µJ but are
refreshed only every so often (NVML on an H100: every 100 ms), so a reading around a
short run of calls is mostly quantisation. :func:`energy_window` keeps the calls running
back to back, starts at an observed update of the counter and stops at the first update
``min_time_s`` or more later: the energy between two updates divided by the calls
completed between them. The updates are seen by a polling thread within one read
(NVML: about 4 ms), and the window's length is put on the counter's own grid of
updates (:func:`snap`). On the H100, 0.2 s windows (two updates) still read DGEMM at
up to 840 W against the board's 700 W limit: the default window is 0.45 s (five
updates). The figure includes the board's (or package's) idle power: it is what
running that loop costs, not the kernel's share.
"""

from __future__ import annotations

import bisect
import glob
import itertools
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Meter:
    """A monotone energy counter: :meth:`read` in joules; ``reason`` says why it cannot
    be used (then :meth:`read` is never called)."""

    name = "none"
    reason = ""
    #: seconds between the counter's updates, once :func:`update_period` has seen them
    period_s: float | None = None

    def read(self) -> float:
        raise NotImplementedError

    def clock_mhz(self) -> float:
        """The SM clock while the window runs (GPUs); NaN where there is none."""
        return math.nan

    def power_limit_w(self) -> float:
        """The power the board's limiter holds on average, watts; NaN where unknown. A
        window reading more than this is no true reading of the board (see
        :func:`energy_reading`)."""
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

    def power_limit_w(self) -> float:
        try:
            return float(self._nvml.nvmlDeviceGetEnforcedPowerLimit(self._handle)) / 1e3
        except Exception:  # noqa: BLE001 - telemetry only: no re-read without it
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


class _Poller(threading.Thread):
    """Reads the counter in a loop and keeps (time, joules, SM clock) at each change.

    A thread, because a read is slow (about 3.7 ms for NVML on an H100): read between
    the calls, it would leave the device idle a large part of the window and stretch the
    calls it divides by. The read is a foreign call that releases the GIL, so the thread
    that launches the calls is barely held up."""

    def __init__(self, meter: Meter, clock: Callable[[], float]) -> None:
        super().__init__(daemon=True)
        self.meter, self.clock = meter, clock
        self.ticks: list[tuple[float, float, float]] = []
        self.stop = threading.Event()
        self.error = ""

    def run(self) -> None:
        try:
            last = self.meter.read()
            while not self.stop.is_set():
                e = self.meter.read()
                if e != last:
                    self.ticks.append((self.clock(), e, self.meter.clock_mhz()))
                    last = e
        except Exception as exc:  # noqa: BLE001 - a counter that fails mid-way: say so
            self.error = f"{type(exc).__name__}: {exc}"[:200]


def _calls_at(t: float, progress: list[tuple[float, int]]) -> float:
    """Calls completed by time ``t``, interpolated between batch completions."""
    times = [p[0] for p in progress]
    i = bisect.bisect_right(times, t)
    if i == 0:
        return float(progress[0][1]) if progress else 0.0
    if i >= len(progress):
        return float(progress[-1][1])
    (t0, c0), (t1, c1) = progress[i - 1], progress[i]
    return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else float(c1)


def update_period(meter: Meter, max_s: float = 1.5,
                  clock: Callable[[], float] = time.perf_counter) -> float | None:
    """The counter's update period: the median gap between 4 changes read back to back
    (once per process; NaN-free or None when it did not move 4 times in ``max_s``)."""
    if meter.period_s is None:
        times: list[float] = []
        last, t0 = meter.read(), clock()
        while len(times) < 4 and clock() - t0 < max_s:
            e = meter.read()
            if e != last:
                times.append(clock())
                last = e
        gaps = sorted(b - a for a, b in itertools.pairwise(times))
        meter.period_s = gaps[len(gaps) // 2] if len(gaps) == 3 else math.nan
    return meter.period_s if meter.period_s and math.isfinite(meter.period_s) else None


def snap(span: float, period: float | None) -> float:
    """``span`` between two observed updates, put on the counter's own grid: a whole
    number of periods when it is within a quarter period of one (the updates are seen a
    few ms late, by a thread; the counter's increments are whole periods)."""
    if not period:
        return span
    n = max(1, round(span / period))
    return n * period if abs(span - n * period) < 0.25 * period else span


def energy_window(run_batch: Callable[[], Any], calls_per_batch: int, meter: Meter,
                  min_time_s: float, max_wait_s: float,
                  clock: Callable[[], float] = time.perf_counter) -> tuple[dict[str, Any], Any]:
    """Energy per call of ``run_batch`` (``calls_per_batch`` calls, then a wait for them):
    (row fields, the last batch's result). See the module doc for the method.

    The batches run back to back while :class:`_Poller` watches the counter. The window
    runs from the first update of the counter to the first at least ``min_time_s``
    later; the calls completed in it are interpolated between the batches' ends. Gives
    up, as ``not measured``, when the counter does not move for ``max_wait_s``."""
    if meter.reason:
        return not_measured(meter.reason), None
    period = update_period(meter, clock=clock)
    poller = _Poller(meter, clock)
    progress: list[tuple[float, int]] = [(clock(), 0)]
    result = None
    poller.start()
    try:
        while True:
            result = run_batch()
            t = clock()
            progress.append((t, progress[-1][1] + calls_per_batch))
            ticks = list(poller.ticks)
            if poller.error:
                return not_measured(f"{meter.name} failed: {poller.error}"), result
            if ticks and ticks[-1][0] - ticks[0][0] >= min_time_s:
                break
            last_change = ticks[-1][0] if ticks else progress[0][0]
            if t - last_change > max_wait_s:
                return not_measured(f"{meter.name} did not change in {t - last_change:.2f} s "
                                    "of calls"), result
    finally:
        poller.stop.set()
        poller.join()
    (t_a, e_a, _), (t_b, e_b, _) = ticks[0], ticks[-1]
    joules, span = e_b - e_a, snap(t_b - t_a, period)
    calls = _calls_at(t_b, progress) - _calls_at(t_a, progress)
    if not (joules > 0 and calls > 0):
        return not_measured(f"{meter.name} rose {joules:.3f} J over {calls:.1f} calls"), result
    clocks = [m for _, _, m in ticks[1:] if math.isfinite(m)]
    # per call: the window's energy over the calls seen in it; the power over the
    # counter's own time between the two updates
    return {"energy_j": joules / calls, "energy_power_w": joules / span,
            "energy_sm_mhz": sum(clocks) / len(clocks) if clocks else math.nan,
            "energy_calls": calls, "energy_window_s": span,
            "energy_meter": meter.name, "energy_reason": ""}, result


#: a window whose mean power is above the board's enforced limit is read again over this
#: many times its length, and at least :data:`REREAD_MIN_S`: the limiter holds its limit
#: as an average, so a short window can catch a peak above it (six 0.45 s windows read
#: 735-778 W on a 700 W H100), and a longer one averages over the limiter's own window
REREAD_FACTOR = 4.0
REREAD_MIN_S = 2.0


def energy_reading(run_batch: Callable[[], Any], calls_per_batch: int, meter: Meter,
                   min_time_s: float, max_wait_s: float,
                   clock: Callable[[], float] = time.perf_counter
                   ) -> tuple[dict[str, Any], Any]:
    """:func:`energy_window`, read again over a longer window when its mean power is
    above the meter's power limit. The longer reading is the row's (its
    ``energy_window_s`` says how long); if it too is above the limit, the report calls
    the figure unresolved. A failed re-read keeps the first reading."""
    fields, result = energy_window(run_batch, calls_per_batch, meter, min_time_s,
                                   max_wait_s, clock)
    limit = meter.power_limit_w() if not meter.reason else math.nan
    power = float(fields.get("energy_power_w", math.nan))
    if not (math.isfinite(limit) and limit > 0 and power > limit):
        return fields, result
    longer, again = energy_window(run_batch, calls_per_batch, meter,
                                  max(REREAD_FACTOR * min_time_s, REREAD_MIN_S),
                                  max_wait_s, clock)
    if "energy_j" not in longer:
        return fields, result
    return longer, again


def crosscheck(run_batch: Callable[[], Any], calls_per_batch: int, meter: Meter,
               short_s: float, long_s: float, max_wait_s: float = 1.0,
               clock: Callable[[], float] = time.perf_counter) -> dict[str, Any]:
    """The same calls read over the rows' short window and over a long one: the
    relative difference of the energy per call (``rel_diff``, long as reference) is the
    uncertainty the report states beside work per joule. A long window averages over
    many counter updates and over a power limiter's own averaging, so it is the better
    reading; the rows cannot afford one each."""
    short, _ = energy_window(run_batch, calls_per_batch, meter, short_s, max_wait_s, clock)
    long_, _ = energy_window(run_batch, calls_per_batch, meter, long_s, max_wait_s, clock)
    out: dict[str, Any] = {"short_window_s": short.get("energy_window_s", math.nan),
                           "long_window_s": long_.get("energy_window_s", math.nan),
                           "short_j": short.get("energy_j", math.nan),
                           "long_j": long_.get("energy_j", math.nan),
                           "meter": meter.name}
    reason = short.get("energy_reason") or long_.get("energy_reason")
    if reason or not (out["long_j"] > 0 and out["short_j"] > 0):
        out["reason"] = reason or "no reading"
        out["rel_diff"] = math.nan
    else:
        out["rel_diff"] = out["short_j"] / out["long_j"] - 1.0
    return out
