"""Summary: the fastest backend per kernel, variant, dtype and size class, and how sure
the samples make it (the noise-aware test of :mod:`gpubench.report.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpubench.report import stats
from gpubench.report.base import (
    _finite,
    _kernel_spec,
    consolidate,
    fmt_speedup,
    fmt_time,
)
from gpubench.report.render import text_table
from gpubench.report.sections.common import (
    ANALYSIS_COLUMNS,
    CLASS_NAMES,
    _cases,
    best_per,
    primary_mode,
    size_classes,
)

# -- summary: the best framework per kernel and size class --------------------------------


#: Two rows timed by different clocks (``timer``) get no verdict on the *device* clock
#: when their medians are closer than this: the clocks' own floors differ by a few µs. On
#: the H100 the same 1024-element vector_add reads 3.3-3.6 µs between CUDA events and
#: 1.1 µs as a CUPTI kernel duration. The caller's clock is one clock (the host's
#: perf_counter and a device-wide wait) for every row, so this rule is not needed there.
CLOCK_MARGIN_S = 5e-6

#: what each clock of the report is called on the page
CLOCK_LABELS = {"caller": "caller's clock (pipelined; CPU: wall)",
                "device": "device clock (GPU events or CUPTI; CPU: wall)"}
#: the column a clock ranks, its quartiles, and the samples' clock. "sync" is the
#: caller's clock of the kernels whose spec ranks them on it (:func:`rank_clock`)
_RANK_COLUMNS = {"caller": ("caller_s", "caller_q1", "caller_q3", "pipelined"),
                  "sync": ("sync_s", "sync_q1_s", "sync_q3_s", "sync"),
                  "device": ("median_s", "q1_s", "q3_s", "device")}


def rank_clock(kernel: str, clock: str = "caller") -> str:
    """The clock a kernel's rows are ranked on when the report ranks ``clock``: on the
    caller's clock, the one its spec declares (``KernelSpec.rank_clock``: "sync" for
    transfers, whose asynchronous copies overlap when pipelined); pipelined for the
    rest and for kernels this code does not know; the device clock stays itself."""
    if clock != "caller":
        return clock
    spec = _kernel_spec(kernel)
    return "sync" if getattr(spec, "rank_clock", "pipelined") == "sync" else "caller"


def caller_clock_label(kernels: list[str]) -> str:
    """The caller's clock's label, naming the kernels ranked on the sync clock."""
    synced = sorted({k for k in kernels if rank_clock(k) == "sync"})
    if not synced:
        return CLOCK_LABELS["caller"]
    return f"caller's clock (pipelined; {', '.join(synced)}: sync; CPU: wall)"


def fmt_clocks(row: pd.Series) -> str:
    """A row's times, each named by its clock: what a caller waits for first."""
    if row.get("device") != "gpu":
        return f"{fmt_time(row['caller_s'])} wall"
    if not _finite(row.get("caller_s")):
        return f"device {fmt_time(row['median_s'])}, no caller's clock"
    return (f"{fmt_time(row['caller_s'])} pipelined, {fmt_time(row['sync_s'])} sync; "
            f"device {fmt_time(row['median_s'])}")


@dataclass
class Pick:
    """The winner of one (case, size) on one clock, and how sure the data make it."""

    size: int
    winner: pd.Series
    runner: pd.Series | None
    verdict: stats.Verdict | None
    clock: str = "caller"

    @property
    def clocks_differ(self) -> bool:
        """On the device clock: winner and runner-up timed by different timers, too close
        to tell apart."""
        if self.runner is None or self.clock != "device":
            return False
        timers = {str(self.winner.get("timer", "")), str(self.runner.get("timer", ""))}
        gap = abs(float(self.runner["median_s"]) - float(self.winner["median_s"]))
        return len(timers) > 1 and gap < CLOCK_MARGIN_S

    @property
    def sure(self) -> bool:
        if self.clocks_differ:
            return False
        return self.runner is None or bool(self.verdict and self.verdict.differs)

    def text(self) -> str:
        w = self.winner
        col = _RANK_COLUMNS[self.clock][0]
        caller = self.clock in ("caller", "sync")
        times = fmt_clocks(w) if caller else fmt_time(w[col])
        head = f"{w['backend']} {w['implementation']} ({times})"
        if self.runner is None:
            return f"{head}; no other backend"
        ratio = fmt_speedup(self.verdict.ratio if self.verdict else math.nan)
        other = self.runner["backend"]
        if caller:
            other = f"{other} ({fmt_time(self.runner[col])}"
            other += " sync)" if self.clock == "sync" else ")"
        if self.clocks_differ:
            return (f"{head}; no verdict against {self.runner['backend']} ({ratio}): "
                    f"{self.winner.get('timer', '')} vs {self.runner.get('timer', '')}, "
                    f"less than {CLOCK_MARGIN_S * 1e6:.0f} µs apart")
        if self.sure:
            return f"{head}; sure: {ratio} faster than {other}"
        if self.verdict is not None and self.verdict.equivalent:
            return (f"{head}; within ±{stats.MIN_EFFECT:.0%} of {other} ({ratio}): either "
                    "will do")
        return f"{head}; unresolved against {other} ({ratio}): too few or too noisy samples"


def pick(rows: pd.DataFrame, size: int, samples: stats.Samples,
         clock: str = "caller") -> Pick | None:
    """Fastest backend at ``size`` on ``clock``, compared with the fastest other backend."""
    col, q1, q3, sample_clock = _RANK_COLUMNS[clock]
    at = best_per(rows[rows["size_key"] == size], ["backend"], by=col)
    if at.empty:
        return None
    winner = at.iloc[0]
    if len(at) == 1:
        return Pick(size, winner, None, None, clock)
    runner = at.iloc[1]
    verdict = stats.compare(
        float(winner[col]), float(runner[col]),
        samples.get(int(winner.name), sample_clock), samples.get(int(runner.name), sample_clock),
        (winner[q1], winner[q3]), (runner[q1], runner[q3]))
    return Pick(size, winner, runner, verdict, clock)


Picks = list[tuple[str, str, str, dict[str, Pick]]]


def picks_for(df: pd.DataFrame, samples: stats.Samples, mode: str,
              clock: str = "caller") -> Picks:
    """Per (kernel, variant, dtype), the pick at each size class in ``mode`` on ``clock``
    (rows with no time on that clock do not compete). On the caller's clock each kernel
    is ranked on the clock its spec declares (:func:`rank_clock`)."""
    out = []
    # the analysis columns and the sync clock's quartiles (the kernels ranked on it)
    df = consolidate(df[[c for c in (*ANALYSIS_COLUMNS, "sync_q1_s", "sync_q3_s")
                         if c in df.columns]])
    here = df[(df["mode"] == mode) & (df["status"] == "ok")]
    clocks = {k: rank_clock(str(k), clock) for k in here["kernel"].unique()}
    cols = here["kernel"].map(lambda k: _RANK_COLUMNS[clocks[k]][0]).to_numpy()
    times = np.full(len(here), np.nan)
    for c in set(cols):
        at = cols == c
        times[at] = pd.to_numeric(here[c], errors="coerce").to_numpy(float)[at]
    timed = here[times > 0]
    for kernel, variant, dtype, g in _cases(timed):
        per_size = g.groupby("size_key")["backend"].nunique()
        contested = per_size[per_size >= 2].index
        found = {name: pick(g, size, samples, clocks[kernel]) for name, size in
                 size_classes(contested if len(contested) else g["size_key"])}
        out.append((kernel, variant, dtype, {k: v for k, v in found.items() if v}))
    return out


def best_table(picks: Picks) -> pd.DataFrame | None:
    """Per kernel, variant and dtype: the winner at the small, medium and large size."""
    rows = []
    for kernel, variant, dtype, found in picks:
        cells = [f"n={found[n].size:,}: {found[n].text()}" if n in found else "—"
                 for n in CLASS_NAMES]
        rows.append([kernel, variant, dtype, *cells])
    if not rows:
        return None
    return text_table(["kernel", "variant", "dtype", "small", "medium", "large"], rows)


def wins_table(picks: Picks) -> pd.DataFrame | None:
    """How often each backend wins a (case, size class): sure, tied (the runner-up within
    ±5 %, shown by the samples) or unresolved (neither shown; no verdict between
    different clocks counts as unresolved)."""
    tally: dict[str, list[int]] = {}
    for _k, _v, _d, found in picks:
        for name, p in found.items():
            t = tally.setdefault(str(p.winner["backend"]), [0] * 9)
            i = CLASS_NAMES.index(name)
            tied = not p.sure and p.verdict is not None and p.verdict.equivalent
            t[3 * i + (0 if p.sure else 1 if tied else 2)] += 1
    if not tally:
        return None
    rows = [[b] + [f"{t[3 * i]} sure, {t[3 * i + 1]} within ±{stats.MIN_EFFECT:.0%}, "
                   f"{t[3 * i + 2]} unresolved" for i in range(3)]
            for b, t in sorted(tally.items(), key=lambda kv: (-sum(kv[1]), kv[0]))]
    return text_table(["backend", "small wins", "medium wins", "large wins"], rows)


@dataclass
class Summary:
    """The summary section: per-case winners of the primary mode on the caller's clock,
    wins per backend, the GPU rows on the device clock, and the other modes."""

    mode: str
    best: pd.DataFrame | None
    wins: pd.DataFrame | None
    device: pd.DataFrame | None
    other_modes: list[tuple[str, pd.DataFrame]]
    clock_label: str = CLOCK_LABELS["caller"]
    margin_s: float = CLOCK_MARGIN_S


def build(df: pd.DataFrame, picks: Mapping[str, Picks],
          device_picks: Picks | None = None) -> Summary:
    """``picks``: :func:`picks_for` per mode on the caller's clock; ``device_picks``: the
    primary mode's GPU rows on the device clock (what the hardware did)."""
    mode = primary_mode(df)
    others = [(m, best_table(picks[m])) for m in sorted(m for m in picks if m != mode)]
    return Summary(mode, best_table(picks.get(mode, [])), wins_table(picks.get(mode, [])),
                   best_table(device_picks or []),
                   [(m, t) for m, t in others if t is not None],
                   caller_clock_label([k for k, _v, _d, _f in picks.get(mode, [])]))
