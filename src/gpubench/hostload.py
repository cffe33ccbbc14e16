"""Host conditions around a benchmark step: load, CPU steal and other processes' CPU.

On a shared machine the same step can be several times slower while others compute,
and a virtual machine's hypervisor can take CPU time from it (steal). The step's
workers read these before and after they measure (:func:`snapshot`,
:func:`conditions`), so every row says what the host was doing while it was taken and
the report can flag comparisons between rows taken under different conditions
(:mod:`gpubench.report.conditions`).

Only the standard library and ``/proc/stat`` are used: a framework's environment need
not have psutil. Where ``/proc/stat`` is absent (macOS, Windows) the shares are NaN;
where ``os.getloadavg`` is absent, the loads are.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

#: the row columns this module fills (gpubench.results declares them)
COLUMNS = ("host_load_start", "host_load_end", "host_steal_pct", "host_other_cpu_pct")

#: /proc/stat's aggregate ``cpu`` line: user nice system idle iowait irq softirq steal
#: (guest and guest_nice are already inside user and nice)
_BUSY = (0, 1, 2, 5, 6)
_STEAL = 7
_FIELDS = 8


@dataclass(frozen=True)
class Snapshot:
    """One reading: monotonic time, 1-minute load, the host's CPU ticks (busy, steal,
    total; None without /proc/stat) and this process tree's CPU seconds."""

    wall_s: float
    load1: float
    ticks: tuple[int, int, int] | None
    own_cpu_s: float


def load1() -> float:
    """The 1-minute load average (runnable and uninterruptible tasks), NaN if unknown."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return math.nan


def proc_stat_ticks(path: str | os.PathLike[str] = "/proc/stat") -> tuple[int, int, int] | None:
    """(busy, steal, total) clock ticks of all CPUs since boot from ``path``'s ``cpu``
    line; None where the file is absent or unreadable."""
    try:
        with Path(path).open(encoding="ascii") as fh:
            first = fh.readline().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(first) < 1 + _FIELDS or first[0] != "cpu":
        return None
    try:
        values = [int(v) for v in first[1:1 + _FIELDS]]
    except ValueError:
        return None
    return sum(values[i] for i in _BUSY), values[_STEAL], sum(values)


def own_cpu_s() -> float:
    """CPU seconds of this process and of its children it has waited for (a worker
    counts once the runner has reaped it)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def snapshot(stat_path: str | os.PathLike[str] = "/proc/stat") -> Snapshot:
    """The host's conditions now (cheap: one small file and two system calls)."""
    return Snapshot(time.monotonic(), load1(), proc_stat_ticks(stat_path), own_cpu_s())


def conditions(start: Snapshot, end: Snapshot) -> dict[str, float]:
    """The row columns (:data:`COLUMNS`) for the time between two snapshots of the same
    process: the loads at both ends; the steal and the other processes' busy CPU time
    (the host's busy time less this process tree's), each as % of all CPUs' time over
    the interval. The shares are NaN without /proc/stat or where no tick passed; the
    other share is at least 0 (ticks and ``os.times`` are counted at 10 ms)."""
    out = {"host_load_start": start.load1, "host_load_end": end.load1,
           "host_steal_pct": math.nan, "host_other_cpu_pct": math.nan}
    if start.ticks is None or end.ticks is None:
        return out
    busy, steal, total = (b - a for a, b in zip(start.ticks, end.ticks, strict=True))
    if total <= 0:
        return out
    hz = _clock_ticks()
    own = (end.own_cpu_s - start.own_cpu_s) * hz
    out["host_steal_pct"] = 100.0 * max(steal, 0) / total
    out["host_other_cpu_pct"] = 100.0 * min(max(busy - own, 0.0), total) / total
    return out


def describe(got: dict[str, float]) -> str:
    """:func:`conditions` in words, for a step's log."""
    def num(key: str, fmt: str, unit: str = "") -> str:
        v = got.get(key, math.nan)
        return "unknown" if math.isnan(v) else format(v, fmt) + unit

    return (f"load {num('host_load_start', '.2f')} -> {num('host_load_end', '.2f')}, "
            f"other processes {num('host_other_cpu_pct', '.0f', ' %')} of the CPUs' "
            f"time, stolen {num('host_steal_pct', '.0f', ' %')}")


def _clock_ticks() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100.0


def run_level(seconds: float = 1.0,
              stat_path: str | os.PathLike[str] = "/proc/stat") -> dict[str, float | None]:
    """The host's conditions over ``seconds`` from now, for a record made once per run
    (host.json): the three load averages, and the steal and busy shares of all CPUs
    (busy: every process's, this one idle while it waits); None where unknown (JSON has
    no NaN)."""
    try:
        loads = [float(v) for v in os.getloadavg()]
    except (AttributeError, OSError):
        loads = [math.nan] * 3
    start = snapshot(stat_path)
    time.sleep(seconds)
    got = conditions(start, snapshot(stat_path))
    values = {"load_1min": loads[0], "load_5min": loads[1], "load_15min": loads[2],
              "steal_pct": got["host_steal_pct"], "busy_pct": got["host_other_cpu_pct"],
              "window_s": float(seconds)}
    return {k: (None if math.isnan(v) else v) for k, v in values.items()}
