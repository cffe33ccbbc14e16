"""The comparison sections: best framework per size class, speedup, ceilings and roofline,
CPU/GPU crossover, first-call cost and code size.

Each ``*_html`` function returns one section (figures are queued on a
:class:`~gpubench.report.figures.FigureQueue`); the matching ``*_table`` functions feed
summary.md. They read only the prepared timings frame, the attached samples and the
probe's ceilings; code size alone reads the implementations' source in this checkout.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gpubench.plausibility import is_device_timer
from gpubench.report import figures, stats
from gpubench.report.base import (
    BASELINE_FRAMEWORK,
    KERNELS,
    _finite,
    _kernel_spec,
    _ordered,
    consolidate,
    esc,
    fmt_int,
    fmt_sig,
    fmt_speedup,
    fmt_time,
    img,
)
from gpubench.report.render import text_table

#: the seeds' rule of thumb: "the GPU loses below about 10,000 elements"
SEED_CROSSOVER = 10_000
TRANSFERS_SUFFIX = "+transfers"
CLASS_NAMES = ("small", "medium", "large")


def primary_mode(df: pd.DataFrame) -> str:
    """The mode the cross-framework sections use: ``hot`` (the CPU rows' mode) if present."""
    modes = sorted(set(df["mode"]))
    return "hot" if "hot" in modes else (modes[0] if modes else "")


def _group(rows: pd.DataFrame) -> pd.Series:
    """The competitor a row belongs to: its backend, with end-to-end (+transfers)
    implementations as a competitor of their own."""
    extra = rows["implementation"].map(lambda s: " +transfers" if str(s).endswith(
        TRANSFERS_SUFFIX) else "")
    return rows["backend"] + extra


def best_per(rows: pd.DataFrame, keys: Sequence[str], by: str = "median_s") -> pd.DataFrame:
    """The fastest ok row per ``keys`` on the clock column ``by`` (ties broken by name,
    so the choice is stable); rows without a time on that clock do not compete.

    Rows come in :func:`canonical_order` (fastest on the device clock first), so for
    ``median_s`` the first of each group wins without sorting again: this runs a thousand
    times per report, so it works on positions and takes the rows once. Other clocks sort
    first (stable, so names still break ties)."""
    t = rows[by].to_numpy(dtype=float, na_value=np.nan)
    pos = np.flatnonzero((rows["status"].to_numpy() == "ok") & (t > 0))
    if by != "median_s":
        pos = pos[np.argsort(t[pos], kind="stable")]
    # positions, not boolean masks and sorts of the frame: one take of the rows at the end
    return rows.iloc[pos[first_of_each(rows, keys, pos)]]


def first_of_each(rows: pd.DataFrame, keys: Sequence[str], pos: np.ndarray) -> np.ndarray:
    """Indices into ``pos`` of the first row of each distinct ``keys`` value, in order
    (``DataFrame.duplicated`` on positions, without copying the frame)."""
    if not len(pos):
        return np.zeros(0, dtype=np.int64)
    combined = np.zeros(len(pos), dtype=np.int64)
    for key in keys:
        codes, uniques = pd.factorize(rows[key].to_numpy()[pos], use_na_sentinel=False)
        combined = pd.factorize(combined * max(len(uniques), 1) + codes)[0]
    return np.sort(np.unique(combined, return_index=True)[1])


#: the columns the verdicts, crossovers and the launch floor read
ANALYSIS_COLUMNS = ("framework", "device", "backend", "implementation", "kernel", "variant",
                    "size_key", "dtype", "mode", "status", "timer", "median_s", "q1_s", "q3_s",
                    "caller_s", "caller_q1", "caller_q3", "sync_s", "bytes")


def narrow(df: pd.DataFrame) -> pd.DataFrame:
    """Only :data:`ANALYSIS_COLUMNS` (same index): every filter of the thousand the
    analyses make then copies 19 columns, not 75. Text columns become one object block
    (:func:`~gpubench.report.base.consolidate`): a filter then copies three blocks, not
    nineteen."""
    return consolidate(df[[c for c in ANALYSIS_COLUMNS if c in df.columns]])


def canonical_order(df: pd.DataFrame) -> pd.DataFrame:
    """Fastest first, then every key column: a total order the sections can rely on."""
    keys = ["median_s", "backend", "implementation", "threads_key", "kernel", "variant",
            "dtype", "size_key", "mode", "framework", "device"]
    return df.sort_values(keys, kind="mergesort", na_position="last")


def _cases(df: pd.DataFrame) -> list[tuple[str, str, str, pd.DataFrame]]:
    """(kernel, variant, dtype, rows) in the report's order."""
    if df.empty:
        return []
    groups = {key: g for key, g in df.groupby(["kernel", "variant", "dtype"], sort=True)}
    out = []
    for kernel in _ordered({k for k, _, _ in groups}, KERNELS):
        spec = _kernel_spec(kernel)
        variants = _ordered({v for k, v, _ in groups if k == kernel},
                            spec.variants if spec else ())
        for variant in variants:
            dtypes = _ordered({d for k, v, d in groups if k == kernel and v == variant},
                              spec.dtypes if spec else ())
            out.extend((kernel, variant, d, groups[(kernel, variant, d)]) for d in dtypes)
    return out


def size_classes(sizes: Sequence[int]) -> list[tuple[str, int]]:
    """Small, medium and large: the smallest, middle and largest size measured."""
    s = sorted(set(int(x) for x in sizes))
    if not s:
        return []
    if len(s) == 1:
        return [("large", s[0])]
    if len(s) == 2:
        return [("small", s[0]), ("large", s[1])]
    return [("small", s[0]), ("medium", s[(len(s) - 1) // 2]), ("large", s[-1])]


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
#: the column a clock ranks, its quartiles, and the samples' clock
_RANK_COLUMNS = {"caller": ("caller_s", "caller_q1", "caller_q3", "pipelined"),
                  "device": ("median_s", "q1_s", "q3_s", "device")}


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
        times = fmt_clocks(w) if self.clock == "caller" else fmt_time(w[col])
        head = f"{w['backend']} {w['implementation']} ({times})"
        if self.runner is None:
            return f"{head}; no other backend"
        ratio = fmt_speedup(self.verdict.ratio if self.verdict else math.nan)
        other = self.runner["backend"]
        if self.clock == "caller":
            other = f"{other} ({fmt_time(self.runner[col])})"
        if self.clocks_differ:
            return (f"{head}; no verdict against {self.runner['backend']} ({ratio}): "
                    f"{self.winner.get('timer', '')} vs {self.runner.get('timer', '')}, "
                    f"less than {CLOCK_MARGIN_S * 1e6:.0f} µs apart")
        if self.sure:
            return f"{head}; sure: {ratio} faster than {other}"
        return f"{head}; within noise of {other} ({ratio})"


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
    (rows with no time on that clock do not compete)."""
    col = _RANK_COLUMNS[clock][0]
    out = []
    df = narrow(df)
    timed = df[(df["mode"] == mode) & (df["status"] == "ok") & (df[col] > 0)]
    for kernel, variant, dtype, g in _cases(timed):
        per_size = g.groupby("size_key")["backend"].nunique()
        contested = per_size[per_size >= 2].index
        found = {name: pick(g, size, samples, clock) for name, size in
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
    """How often each backend wins a (case, size class), sure or within noise (no
    verdict between different clocks counts as within noise)."""
    tally: dict[str, list[int]] = {}
    for _k, _v, _d, found in picks:
        for name, p in found.items():
            t = tally.setdefault(str(p.winner["backend"]), [0, 0, 0, 0, 0, 0])
            i = CLASS_NAMES.index(name)
            t[2 * i + (0 if p.sure else 1)] += 1
    if not tally:
        return None
    rows = [[b] + [f"{t[2 * i]} sure, {t[2 * i + 1]} within noise" for i in range(3)]
            for b, t in sorted(tally.items(), key=lambda kv: (-sum(kv[1]), kv[0]))]
    return text_table(["backend", "small wins", "medium wins", "large wins"], rows)


def summary_html(df: pd.DataFrame, picks: Mapping[str, Picks],
                 device_picks: Picks | None = None) -> str:
    """``picks``: :func:`picks_for` per mode on the caller's clock; ``device_picks``: the
    primary mode's GPU rows on the device clock (what the hardware did)."""
    mode = primary_mode(df)
    parts = ['<h2 id="summary">Summary</h2>\n<p class="note">Per kernel, variant and dtype, '
             "the fastest backend (its best implementation) at the smallest, middle and "
             "largest size that two or more backends measured (else any size), in mode "
             f"<strong>{esc(mode)}</strong>, against the fastest other backend, ranked on "
             "the <strong>caller's clock</strong>: what a Python loop waits for per call, "
             "dispatch, launch and a device-wide wait included. GPU rows rank their "
             "<em>pipelined</em> time (k calls back to back, one wait, divided by k), with "
             "<em>sync</em> (one call, then wait) and the <em>device</em> time (what the "
             "GPU itself took, the basis of % of ceiling) beside it; CPU rows their wall "
             "time. <em>Sure</em> means a two-sided Mann–Whitney U test on the recorded "
             f"samples gives p &lt; {stats.ALPHA} <em>and</em> the medians differ by more "
             f"than {stats.MIN_EFFECT:.0%}; otherwise the two are <em>within noise</em>. "
             "Rows without samples use non-overlapping interquartile ranges instead. Only "
             "ok rows compete: wrong and implausible ones never do.</p>\n"]
    table = best_table(picks.get(mode, []))
    if table is None:
        return "".join(parts) + '<p class="alert">No successful measurements.</p>\n'
    wins = wins_table(picks.get(mode, []))
    if wins is not None:
        parts.append(f"<h3>Wins per backend ({esc(CLOCK_LABELS['caller'])})</h3>\n"
                     + wins.report.html())
    parts.append(f"<h3>Best per kernel and size class ({esc(CLOCK_LABELS['caller'])})</h3>\n"
                 + table.report.html())
    device = best_table(device_picks or [])
    if device is not None:
        parts.append("<details><summary>GPU backends on the device clock: what the hardware "
                     "did</summary>\n<p class=\"note\">The same choice among GPU rows only, "
                     "on each row's own timer (CUDA events; CUPTI kernel durations for JAX). "
                     "Two rows timed by different timers less than "
                     f"{CLOCK_MARGIN_S * 1e6:.0f} µs apart get <em>no verdict</em>: the "
                     "timers' floors differ by a few µs (on an H100 the same small kernel "
                     "reads about 3.4 µs between CUDA events, 1.1 µs as a CUPTI kernel "
                     "duration).</p>\n" + device.report.html() + "</details>\n")
    for other in sorted(m for m in picks if m != mode):
        t = best_table(picks[other])
        if t is not None:
            parts.append(f"<details><summary>Mode {esc(other)}</summary>\n{t.report.html()}"
                         "</details>\n")
    return "".join(parts)


# -- speedup over NumPy -------------------------------------------------------------------


def speedup_table(df: pd.DataFrame, mode: str) -> pd.DataFrame | None:
    """Speedup of each backend's best implementation at the largest size with a baseline,
    on the caller's clock (NumPy's wall time over the backend's pipelined caller time)."""
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["speedup"].notna()]
    if ok.empty:
        return None
    groups = _ordered(_group(ok), (f"{BASELINE_FRAMEWORK}-cpu",))
    rows = []
    for kernel, variant, dtype, g in _cases(ok):
        size = int(g["size_key"].max())
        at = g[g["size_key"] == size].assign(_g=_group(g[g["size_key"] == size]))
        best = best_per(at, ["_g"], by="caller_s").set_index("_g")
        rows.append([kernel, variant, dtype, fmt_int(size)] + [
            fmt_speedup(best.loc[c, "speedup"]) if c in best.index else "—" for c in groups])
    return text_table(["kernel", "variant", "dtype", "size", *groups], rows,
                 frozenset({"size", *groups}))


def speedup_figure(rows: pd.DataFrame, title: str, size_meaning: str, seed_line: bool) -> str:
    """Speedup over NumPy against size, one line per backend (best implementation)."""
    fig = figures.new_figure(4.6)
    fig.subplots_adjust(left=0.08, right=0.72, top=0.9, bottom=0.13)
    ax = fig.subplots()
    groups = sorted(set(rows["group"]))
    cmap = figures.colors(len(groups))
    for i, grp in enumerate(groups):
        s = rows[rows["group"] == grp].sort_values("size_key")
        ax.plot(s["size_key"].to_numpy(float), s["speedup"].to_numpy(float),
                color=cmap(i % cmap.N), marker=figures.MARKERS[i % len(figures.MARKERS)],
                markersize=4, linewidth=1.3,
                linestyle="--" if grp.endswith(TRANSFERS_SUFFIX) else "-", label=grp)
    ax.axhline(1.0, color="black", linewidth=0.8)
    if seed_line:
        ax.axvline(SEED_CROSSOVER, color="grey", linestyle=":", linewidth=1.2,
                   label="seeds' 10,000 elements")
    figures.log_scale(ax, "x", rows["size_key"].to_numpy(float))
    figures.log_scale(ax, "y", np.r_[rows["speedup"].to_numpy(float), 1.0])
    figures.size_limits(ax, rows["size_key"].to_numpy(float))
    figures.grid(ax)
    ax.set_xlabel(f"problem size ({size_meaning}, log scale)" if size_meaning else "size")
    ax.set_ylabel("speedup over NumPy, caller's clock (log)")
    ax.set_title(title, fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figures.png(fig)


def speedup_html(df: pd.DataFrame, figs: figures.FigureQueue) -> str:
    mode = primary_mode(df)
    parts = ['<h2 id="speedup">Speedup over NumPy</h2>\n<p class="note">On the '
             "<strong>caller's clock</strong>: the median wall time of the fastest NumPy "
             "implementation divided by each backend's fastest median time per call as a "
             "caller waits for it (GPU: pipelined, dispatch and a device-wide wait "
             "included; CPU: wall), same kernel, variant, size and dtype, mode "
             f"{esc(mode)}. Above 1× the backend is faster than NumPy; the size where a GPU "
             "line crosses 1× is its crossover (next section). Dashed: end-to-end "
             "implementations that copy inputs from and results to the host. One figure "
             "per kernel (its first variant and dtype); the table has every case.</p>\n"]
    table = speedup_table(df, mode)
    if table is None:
        return "".join(parts) + ("<p>No speedup can be computed: no ok NumPy rows to "
                                 "compare with.</p>\n")
    parts.append("<h3>At the largest size with a NumPy baseline (caller's clock)</h3>\n"
                 + table.report.html())
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["speedup"].notna()]
    drawn: set[str] = set()
    for kernel, variant, dtype, g in _cases(ok):
        # one figure per kernel (its first variant and dtype with a curve): the table
        # above has every case, and drawing dominates the report's run time
        if kernel in drawn:
            continue
        g = g.assign(group=_group(g))
        best = best_per(g, ["group", "size_key"], by="caller_s")
        best = best[best["framework"] != BASELINE_FRAMEWORK]
        if best.empty or best["size_key"].nunique() < 2:
            continue
        drawn.add(kernel)
        spec = _kernel_spec(kernel)
        meaning = spec.size_meaning if spec else ""
        title = f"{kernel} · {variant} · {dtype}: speedup over NumPy (caller's clock)"
        frame = best[["group", "size_key", "speedup"]].reset_index(drop=True)
        top = best.sort_values(["size_key", "speedup"], ascending=[False, False]).iloc[0]
        alt = (f"Log-log plot of speedup over NumPy on the caller's clock against problem "
               f"size for {kernel}, "
               f"{variant}, {dtype}; {frame['group'].nunique()} backend(s): "
               f"{', '.join(sorted(set(frame['group'])))}. At the largest size "
               f"{int(top['size_key']):,} the fastest is {top['group']} at "
               f"{fmt_speedup(top['speedup'])}.")
        parts.append(img(figs, alt, speedup_figure, frame, title, meaning,
                         meaning.startswith("elements"), cls="speedup"))
    return "".join(parts)


# -- ceilings and roofline ----------------------------------------------------------------


CEILING_LABELS = {
    "d2d_copy_gbps": ("GPU device-to-device copy", "GB/s"),
    "sgemm_gflops": ("GPU SGEMM (TF32 off)", "GFLOP/s"),
    "dgemm_gflops": ("GPU DGEMM", "GFLOP/s"),
    "h2d_pinned_gbps": ("host-to-device, pinned", "GB/s"),
    "h2d_pageable_gbps": ("host-to-device, pageable", "GB/s"),
    "cpu_copy_gbps": ("CPU memory copy", "GB/s"),
    "cpu_sgemm_gflops": ("CPU SGEMM (BLAS)", "GFLOP/s"),
    "cpu_dgemm_gflops": ("CPU DGEMM (BLAS)", "GFLOP/s"),
}


def ceilings_of(env_data: Mapping[str, Any]) -> dict[str, float]:
    raw = env_data.get("ceilings")
    if not isinstance(raw, Mapping):
        return {}
    return {k: float(v) for k, v in raw.items() if k in CEILING_LABELS and _finite(v)
            and float(v) > 0}


def ceiling_table(env_data: Mapping[str, Any]) -> pd.DataFrame | None:
    c = ceilings_of(env_data)
    if not c:
        return None
    raw = env_data.get("ceilings") or {}
    rows = [[CEILING_LABELS[k][0], fmt_sig(c[k], 4), CEILING_LABELS[k][1], k]
            for k in CEILING_LABELS if k in c]
    note = f"measured with {raw.get('measured_with')}" if raw.get("measured_with") else ""
    if note:
        rows.append(["(GPU ceilings)", "", "", note])
    return text_table(["ceiling", "value", "unit", "key"], rows, frozenset({"value"}))


def pct_table(df: pd.DataFrame, mode: str) -> pd.DataFrame | None:
    """Per kernel and implementation, the best % of its ceiling at the largest size (where
    the arrays are several times the caches, so % of memory bandwidth is honest)."""
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["pct_of_ceiling"].notna()]
    if ok.empty:
        return None
    largest = ok.groupby(["kernel", "variant", "dtype"])["size_key"].transform("max")
    at = ok[ok["size_key"] == largest]
    at = at.sort_values(["pct_of_ceiling", "variant", "dtype"], ascending=[False, True, True],
                        kind="mergesort")
    best = at.drop_duplicates(["kernel", "backend", "implementation"])
    order = {k: i for i, k in enumerate(KERNELS)}
    best = best.assign(_k=best["kernel"].map(lambda k: order.get(k, len(order))))
    best = best.sort_values(["_k", "kernel", "pct_of_ceiling", "backend", "implementation"],
                            ascending=[True, True, False, True, True], kind="mergesort")
    rows = [[r["kernel"], r["backend"], r["implementation"], f"{r['variant']} / {r['dtype']}",
             fmt_int(r["size_key"]), f"{float(r['pct_of_ceiling']):.1f} %", r["ceiling"]]
            for _, r in best.iterrows()]
    return text_table(["kernel", "backend", "implementation", "best variant / dtype", "size",
                  "% of ceiling", "ceiling"], rows, frozenset({"size", "% of ceiling"}))


#: The GPU targets the project holds itself to (issue 3): at the largest size, the best
#: implementation of every GPU framework reaches this share of its ceiling.
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("vector_add", "copy bandwidth", 85.0),
    ("elementwise", "copy bandwidth", 85.0),
    ("matmul", "cuBLAS GEMM (library matmul)", 90.0),
)


def targets_table(df: pd.DataFrame, mode: str) -> pd.DataFrame | None:
    """Per GPU backend and target kernel: the weakest case of its best implementations.

    For each (kernel, variant, dtype) at its largest size the backend's best
    implementation counts; the table shows the lowest of those, so one slow dtype or
    variant is not hidden behind a fast one. Matmul counts library calls only
    (hand-written naive and tiled kernels are reported as % of cuBLAS elsewhere).
    """
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & (df["device"] == "gpu")
            & df["pct_of_ceiling"].notna()]
    rows = []
    for kernel, ceiling, target in TARGETS:
        k = ok[ok["kernel"] == kernel]
        k = k[~k["implementation"].str.contains(r"naive|tiled|\+transfers", regex=True)]
        if k.empty:
            continue
        largest = k.groupby(["kernel", "variant", "dtype"])["size_key"].transform("max")
        k = k[k["size_key"] == largest]
        best = k.groupby(["backend", "variant", "dtype"])["pct_of_ceiling"].max().reset_index()
        for backend, g in best.groupby("backend", sort=True):
            worst = g.sort_values(["pct_of_ceiling", "variant", "dtype"],
                                  kind="mergesort").iloc[0]
            pct = float(worst["pct_of_ceiling"])
            rows.append([kernel, backend, f"{worst['variant']} / {worst['dtype']}",
                         f"{pct:.1f} %", f"≥ {target:.0f} % of {ceiling}",
                         "met" if pct >= target else "MISSED"])
    if not rows:
        return None
    return text_table(["kernel", "backend", "weakest case (variant / dtype)",
                  "its best implementation", "target", "verdict"], rows,
                 frozenset({"its best implementation"}))


def roofline_points(df: pd.DataFrame, device: str, mode: str) -> pd.DataFrame:
    """One point per (backend, implementation, kernel, variant, dtype): its largest size."""
    ok = df[(df["status"] == "ok") & (df["device"] == device) & (df["mode"] == mode)
            & (df["flops"] > 0) & (df["bytes"] > 0)]
    if ok.empty:
        return ok
    ok = ok.sort_values("size_key", ascending=False, kind="mergesort")
    pts = ok.drop_duplicates(["backend", "implementation", "kernel", "variant", "dtype"])
    gflops = pts["gflops"].fillna(pts["flops"] / pts["median_s"] / 1e9)
    out = pd.DataFrame({"kernel": pts["kernel"], "framework": pts["framework"],
                        "dtype": pts["dtype"], "ai": pts["flops"] / pts["bytes"],
                        "gflops": gflops, "label": pts["series"]})
    return out.sort_values(["kernel", "framework", "label", "dtype"],
                           kind="mergesort").reset_index(drop=True)


def roofline_figure(points: pd.DataFrame, title: str, bw_gbps: float,
                    compute: Sequence[tuple[str, float]]) -> str:
    """Achieved GFLOP/s against arithmetic intensity, under the measured roofs."""
    fig = figures.new_figure(5.2)
    fig.subplots_adjust(left=0.08, right=0.74, top=0.92, bottom=0.11)
    ax = fig.subplots()
    kernels = sorted(set(points["kernel"]), key=lambda k: (KERNELS.index(k)
                                                           if k in KERNELS else 99, k))
    frameworks = sorted(set(points["framework"]))
    cmap = figures.colors(len(kernels))
    for (kernel, framework, dtype), grp in points.groupby(["kernel", "framework", "dtype"],
                                                           sort=True):
        ki, fi = kernels.index(kernel), frameworks.index(framework)
        ax.plot(grp["ai"].to_numpy(float), grp["gflops"].to_numpy(float), linestyle="none",
                marker=figures.MARKERS[fi % len(figures.MARKERS)], markersize=6,
                color=cmap(ki % cmap.N), markerfacecolor="none" if dtype == "float64"
                else cmap(ki % cmap.N), alpha=0.85)
    ai = points["ai"].to_numpy(float)
    lo = min(ai.min(), 0.05) / 2
    top_c = max([c for _, c in compute] or [points["gflops"].max()])
    hi = max(ai.max() * 2, (top_c / bw_gbps * 4) if bw_gbps else ai.max() * 2)
    xs = np.geomspace(lo, hi, 200)
    handles: list[Any] = []
    if bw_gbps:
        for j, (name, peak) in enumerate(compute):
            roof = np.minimum(xs * bw_gbps, peak)
            (h,) = ax.plot(xs, roof, color="black", linewidth=1.2,
                           linestyle=("-", "--", ":")[j % 3],
                           label=f"roof: {name} {peak:,.0f} GFLOP/s")
            handles.append(h)
        if not compute:
            (h,) = ax.plot(xs, xs * bw_gbps, color="black", linewidth=1.2,
                           label=f"bandwidth {bw_gbps:,.0f} GB/s")
            handles.append(h)
    for ki, k in enumerate(kernels):
        handles.append(Line2D([], [], linestyle="none", marker="s", color=cmap(ki % cmap.N),
                              label=k))
    for fi, f in enumerate(frameworks):
        handles.append(Line2D([], [], linestyle="none", color="black",
                              marker=figures.MARKERS[fi % len(figures.MARKERS)], label=f))
    handles.append(Line2D([], [], linestyle="none", marker="o", color="grey",
                          markerfacecolor="none", label="open: float64"))
    figures.log_scale(ax, "x", np.r_[xs[0], xs[-1]])
    figures.log_scale(ax, "y", np.r_[points["gflops"].to_numpy(float), top_c])
    ax.set_xlim(lo, hi)
    figures.grid(ax)
    ax.set_xlabel("arithmetic intensity (counted flops / counted bytes, log scale)")
    ax.set_ylabel("achieved GFLOP/s (log scale)")
    ax.set_title(title, fontsize=11)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)
    return figures.png(fig)


def ceilings_html(df: pd.DataFrame, env_data: Mapping[str, Any],
                  figs: figures.FigureQueue) -> str:
    mode = primary_mode(df)
    parts = ['<h2 id="ceilings">Measured ceilings and roofline</h2>\n<p class="note">The '
             "probe measures, on the same machine and day, what memory and the vendor "
             "libraries reach (device copy, SGEMM/DGEMM with TF32 off, host-device copies); "
             "each row's <em>% of ceiling</em> relates its throughput to the one that bounds "
             "its kernel (memory-bound kernels to the copy bandwidth, matmul to GEMM, "
             "transfers to the host link). Every number here is on the <strong>device "
             "clock</strong> (each row's own timer: CUDA events or CUPTI on GPUs, wall time "
             "on CPUs): it is what the hardware did, not what a caller waits for. A little "
             "over 100 % is possible (the probe's copy is one library call, not the "
             "hardware's limit); more than 10 % over, on data past twice the L2 cache, is "
             "not, and such rows are <em>implausible</em>, listed under Failures and never "
             "ranked.</p>\n"]
    c = ceilings_of(env_data)
    table = ceiling_table(env_data)
    parts.append(table.report.html() if table is not None else '<p class="banner">No '
                 "ceilings in the environment record: the probe did not measure them, so no "
                 "% of ceiling and no roofs are drawn.</p>\n")
    targets = targets_table(df, mode)
    if targets is not None:
        parts.append(f"<h3>Targets (mode {esc(mode)}, largest size, device clock)</h3>\n"
                     "<p class=\"note\">"
                     "For each GPU backend, the weakest (variant, dtype) of its best "
                     "implementations, against the share of the ceiling the project "
                     "expects of a good implementation.</p>\n" + targets.report.html())
    pct = pct_table(df, mode)
    if pct is not None:
        parts.append(f"<h3>% of ceiling at the largest size (mode {esc(mode)}, device "
                     "clock)</h3>\n"
                     + pct.report.html())
    for device, bw_key, s_key, d_key in (("gpu", "d2d_copy_gbps", "sgemm_gflops",
                                          "dgemm_gflops"),
                                         ("cpu", "cpu_copy_gbps", "cpu_sgemm_gflops",
                                          "cpu_dgemm_gflops")):
        pts = roofline_points(df, device, mode)
        if pts.empty:
            continue
        bw = c.get(bw_key, 0.0)
        compute = [(n, c[k]) for n, k in (("SGEMM", s_key), ("DGEMM", d_key)) if k in c]
        title = (f"Roofline, {device.upper()}, device clock: memory roof {bw:,.0f} GB/s "
                 f"(mode {mode}, largest size per implementation)" if bw else
                 f"Roofline, {device.upper()}, device clock (mode {mode}; no measured roofs)")
        best = pts.sort_values("gflops", ascending=False, kind="mergesort").iloc[0]
        roofs = (f"bandwidth roof {bw:,.0f} GB/s, compute roofs "
                 + ", ".join(f"{n} {v:,.0f} GFLOP/s" for n, v in compute)) if bw else (
            "no measured roofs")
        alt = (f"Roofline plot for the {device.upper()}: achieved GFLOP/s against arithmetic "
               f"intensity (flops per byte, log-log) for {len(pts)} implementation(s) of "
               f"{', '.join(sorted(set(pts['kernel'])))}; {roofs}. Highest: {best['label']} "
               f"({best['kernel']}, {best['dtype']}) at {best['gflops']:,.0f} GFLOP/s.")
        parts.append(f"<h3>Roofline: {device.upper()}</h3>\n"
                     + img(figs, alt, roofline_figure, pts, title, bw, compute,
                           cls="roofline"))
    return "".join(parts)


# -- CPU/GPU crossover --------------------------------------------------------------------


def crossover(sizes: np.ndarray, gpu: np.ndarray, cpu: np.ndarray) -> tuple[str, float]:
    """(text, size) where the GPU starts to win for good: the smallest size from which it
    is faster at every larger measured size, interpolated log-log between the last size
    it loses and the first it wins. NaN when it never wins at the largest size."""
    order = np.argsort(sizes)
    s, g, c = sizes[order], gpu[order], cpu[order]
    if s.size == 0:
        return "—", math.nan
    wins = g < c
    if not wins[-1]:
        return f"> {int(s[-1]):,} (slower at the largest size compared)", math.nan
    k = s.size - 1
    while k > 0 and wins[k - 1]:
        k -= 1
    if k == 0:
        return f"≤ {int(s[0]):,} (faster at every size)", float(s[0])
    r_lo, r_hi = math.log(g[k - 1] / c[k - 1]), math.log(g[k] / c[k])
    frac = r_lo / (r_lo - r_hi) if r_lo != r_hi else 0.5
    x = math.exp(math.log(s[k - 1]) + frac * (math.log(s[k]) - math.log(s[k - 1])))
    x = float(f"{x:.2g}")
    return f"≈ {x:,.0f} (between {int(s[k - 1]):,} and {int(s[k]):,})", x


@dataclass
class Crossing:
    """Where one GPU backend starts to beat the best CPU row for one case, per clock.

    Each field is (text, size) from :func:`crossover`. All but ``device_clock`` are on
    the caller's clock (the CPU's wall time against what a caller of the GPU waits for);
    ``device_clock`` puts the GPU's device time against the CPU's wall time, which is
    what the hardware did and not a verdict a user can act on."""

    kernel: str
    variant: str
    dtype: str
    backend: str
    device_resident: tuple[str, float]
    measured_transfers: tuple[str, float] | None
    estimated_transfers: tuple[str, float] | None
    elements: bool
    device_resident_sync: tuple[str, float] | None = None
    device_clock: tuple[str, float] | None = None


#: the crossover cell of a GPU backend whose rows have no caller's clock (schema 1)
NO_CALLER_CLOCK = "— (no caller's clock)"


def _loglog(xs: np.ndarray, ys: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``ys`` at ``at``, interpolated linearly in log-log between the measured ``xs``."""
    order = np.argsort(xs)
    return np.exp(np.interp(np.log(at), np.log(xs[order]), np.log(ys[order])))


def cross_curves(g_sizes: np.ndarray, g_times: np.ndarray, c_sizes: np.ndarray,
                 c_times: np.ndarray) -> tuple[str, float] | None:
    """:func:`crossover` of two measured curves, compared at every size either measured
    inside the range both cover (each interpolated log-log between its own sizes, never
    extrapolated); None when the ranges do not overlap or a time is missing."""
    if not (np.isfinite(g_times).all() and np.isfinite(c_times).all()) or (
            (g_times <= 0).any() or (c_times <= 0).any()):
        return None
    lo = max(g_sizes.min(), c_sizes.min())
    hi = min(g_sizes.max(), c_sizes.max())
    if lo > hi:
        return None
    sizes = np.unique(np.r_[g_sizes, c_sizes])
    sizes = sizes[(sizes >= lo) & (sizes <= hi)]
    return crossover(sizes, _loglog(g_sizes, g_times, sizes),
                     _loglog(c_sizes, c_times, sizes))


def crossings(df: pd.DataFrame, env_data: Mapping[str, Any]) -> list[Crossing]:
    """Every GPU backend against the best CPU row (wall time), per kernel, variant and
    dtype: on the caller's clock (pipelined, and sync), with transfers measured and
    estimated, and the device clock for reference."""
    mode = primary_mode(df)
    link = ceilings_of(env_data).get("h2d_pageable_gbps")
    df = narrow(df)
    ok = df[(df["status"] == "ok") & (df["mode"] == mode)]
    out = []
    for kernel, variant, dtype, g in _cases(ok):
        cpu = best_per(g[g["device"] == "cpu"], ["size_key"], by="caller_s")
        gpu_rows = g[g["device"] == "gpu"]
        if cpu.empty or gpu_rows.empty:
            continue
        c_sizes = cpu["size_key"].to_numpy(float)
        c_times = cpu["caller_s"].to_numpy(float)
        spec = _kernel_spec(kernel)
        elements = bool(spec and spec.size_meaning.startswith("elements"))
        for backend in sorted(set(gpu_rows["backend"])):
            b = gpu_rows[gpu_rows["backend"] == backend]
            e2e = b["implementation"].str.endswith(TRANSFERS_SUFFIX)

            def cross(rows: pd.DataFrame, col: str, extra: bool = False,
                      c_sizes: np.ndarray = c_sizes, c_times: np.ndarray = c_times
                      ) -> tuple[str, float] | None:
                best = best_per(rows, ["size_key"], by=col)
                if best.empty:
                    return None
                t = best[col].to_numpy(float)
                if extra:
                    t = t + best["bytes"].to_numpy(float) / (link * 1e9)
                return cross_curves(best["size_key"].to_numpy(float), t, c_sizes, c_times)

            resident = b[~e2e]
            dev = cross(resident, "caller_s")
            hardware = cross(resident, "median_s")
            if dev is None and hardware is None:
                continue
            if dev is None:
                dev = (NO_CALLER_CLOCK, math.nan)
            meas = cross(b[e2e], "caller_s") if e2e.any() else None
            est = None
            if link and (resident["bytes"] > 0).all():
                est = cross(resident, "caller_s", extra=True)
            out.append(Crossing(kernel, variant, dtype, backend, dev, meas, est, elements,
                                cross(resident, "sync_s"), hardware))
    return out


def crossover_table(found: list[Crossing]) -> pd.DataFrame | None:
    if not found:
        return None

    def cell(x: tuple[str, float] | None) -> str:
        return x[0] if x else "—"

    rows = [[c.kernel, c.variant, c.dtype, c.backend, cell(c.device_resident),
             cell(c.device_resident_sync), cell(c.measured_transfers),
             cell(c.estimated_transfers), cell(c.device_clock)] for c in found]
    return text_table(["kernel", "variant", "dtype", "GPU backend",
                  "data on the device (caller, pipelined)", "data on the device (caller, sync)",
                  "with transfers, measured +transfers (caller, pipelined)",
                  "with transfers, estimated (caller, pipelined)",
                  "device clock (hardware only, not a verdict)"], rows)


def crossover_headline(found: list[Crossing]) -> list[str]:
    """One sentence per GPU backend on element-sized kernels, on the caller's clock (rows
    without one, from a schema-1 file, are not counted as "never")."""
    lines = []
    for backend in sorted({c.backend for c in found}):
        mine = [c for c in found if c.backend == backend and c.elements
                and c.device_resident[0] != NO_CALLER_CLOCK]
        if not mine:
            continue
        dev = [c.device_resident[1] for c in mine]
        never = sum(1 for x in dev if not math.isfinite(x))
        fin = sorted(x for x in dev if math.isfinite(x))
        text = (f"{backend}: on {len(mine)} element-sized case(s), data on the device, a "
                "caller waiting for the GPU (pipelined calls) is served faster than by the "
                "best CPU row from a median of "
                + (f"about {_sig2(np.median(fin))} elements (range {fin[0]:,.0f} to "
                   f"{fin[-1]:,.0f})" if fin else "— (never)")
                + (f", never in {never}" if never else ""))
        trans = [c.measured_transfers or c.estimated_transfers for c in mine]
        trans = [t for t in trans if t]
        if trans:
            t_fin = sorted(x for _, x in trans if math.isfinite(x))
            text += ("; with host transfers from a median of "
                     + (f"about {_sig2(np.median(t_fin))}" if t_fin else "— (never)")
                     + (f", never in {len(trans) - len(t_fin)}" if len(trans) > len(t_fin)
                        else ""))
        lines.append(text + ".")
    return lines


def _sig2(x: float) -> str:
    """Two significant digits with thousands separators: 1,612 -> 1,600."""
    return f"{float(f'{x:.2g}'):,.0f}"


def crossover_html(df: pd.DataFrame, found: list[Crossing]) -> str:
    """``found``: :func:`crossings` of the frame."""
    mode = primary_mode(df)
    parts = ['<h2 id="crossover">CPU/GPU crossover</h2>\n<p class="note">On the '
             "<strong>caller's clock</strong>: for each GPU backend (its fastest "
             "implementation at each size, by what a caller waits for per call) against the "
             f"fastest CPU row of any framework by wall time (mode {esc(mode)}), the "
             "smallest size from which the GPU is faster at every larger compared size, "
             "interpolated log-log between the two sizes around it. Both curves are compared "
             "at every size either measured, inside the range both cover, each interpolated "
             "log-log between its own sizes (never extrapolated). <em>Pipelined</em> is the "
             "headline (calls back to back, one device-wide wait); <em>sync</em> waits after "
             "every call. <em>Measured with transfers</em> uses the end-to-end "
             "implementations (host arrays in, host result out); <em>estimated with "
             "transfers</em> adds the kernel's counted bytes at the probe's pageable "
             "host-to-device rate to the pipelined time, for backends without an end-to-end "
             "implementation. The last column puts the GPU's device time against the CPU's "
             "wall time: what the hardware did, which no caller sees. The seeds say the GPU "
             f"loses below about {SEED_CROSSOVER:,} elements; here is where it crosses on "
             "this machine.</p>\n"]
    if not found:
        have_gpu = bool((df["device"] == "gpu").any() and (
            (df["device"] == "gpu") & (df["status"] == "ok")).any())
        why = ("no CPU rows to compare with" if have_gpu else
               "no successful GPU measurements in this result set")
        return "".join(parts) + f'<p class="banner">No crossover: {esc(why)}.</p>\n'
    head = crossover_headline(found)
    if head:
        parts.append("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in head) + "</ul>\n")
    table = crossover_table(found)
    if table is not None:
        parts.append(table.report.html())
    return "".join(parts)


# -- the launch floor ---------------------------------------------------------------------


#: the kernel whose rows give the cost of one call, and the one it is set against
FLOOR_KERNEL, FLOOR_WORK_KERNEL = "launch_overhead", "vector_add"


def launch_floor_table(df: pd.DataFrame) -> pd.DataFrame | None:
    """Per backend, the fixed cost of one call (``launch_overhead`` at its smallest size,
    best implementation by the pipelined caller's clock) and how many ``vector_add``
    elements, data on the device, it takes before the device time of the work exceeds
    that cost: below that size a call is all overhead, whatever the device does."""
    mode = primary_mode(df)
    ok = df[(df["status"] == "ok") & (df["mode"] == mode)]
    floor = ok[(ok["kernel"] == FLOOR_KERNEL) & (ok["caller_s"] > 0)]
    if floor.empty:
        return None
    floor = floor[floor["size_key"] == floor.groupby("backend")["size_key"].transform("min")]
    best = best_per(floor, ["backend"], by="caller_s")
    work = ok[(ok["kernel"] == FLOOR_WORK_KERNEL)
              & ~ok["implementation"].str.endswith(TRANSFERS_SUFFIX)]
    dtypes = _ordered(work["dtype"], ("float32", "float64"))
    rows = []
    for _, r in best.sort_values(["device", "backend"], kind="mergesort").iterrows():
        cells = [r["backend"], r["implementation"], fmt_int(r["size_key"]),
                 fmt_time(r["caller_s"]), fmt_time(r["sync_s"]),
                 f"{fmt_time(r['median_s'])} ({r['timer']})"]
        for dtype in dtypes:
            w = best_per(work[(work["backend"] == r["backend"]) & (work["dtype"] == dtype)],
                         ["size_key"])
            w = w[w["timer"].map(is_device_timer)]
            if w.empty:
                cells.append("not measured" if r["device"] == "gpu" else
                             "— (one clock: the wall time includes the call)")
                continue
            cells.append(_floor_text(w["size_key"].to_numpy(float), float(r["caller_s"]),
                                     w["median_s"].to_numpy(float)))
        rows.append(cells)
    return text_table(["backend", "implementation", "size", "per call, pipelined (caller)",
                  "per call, sync (caller)", "device clock",
                  *(f"{FLOOR_WORK_KERNEL} {d}: elements before the device time exceeds "
                    "the pipelined call" for d in dtypes)], rows,
                 frozenset({"size", "per call, pipelined (caller)", "per call, sync (caller)"}))


def _floor_text(sizes: np.ndarray, overhead: float, device: np.ndarray) -> str:
    """From which size the device time stays above the cost of one call."""
    order = np.argsort(sizes)
    s, d = sizes[order], device[order]
    found = crossover(s, np.full(s.shape, overhead), d)
    if not math.isfinite(found[1]):
        return f"> {int(s[-1]):,} (the call costs more at every measured size)"
    if found[1] <= s[0] and d[0] > overhead:
        return f"≤ {int(s[0]):,} (the work costs more at every measured size)"
    return found[0]


def launch_floor_html(df: pd.DataFrame) -> str:
    parts = ['<h2 id="launch-floor">The launch floor</h2>\n<p class="note">What one call '
             f"costs a caller before any work: the <code>{FLOOR_KERNEL}</code> kernel "
             "(out = a + 1 on one element) on the caller's clock, pipelined (a loop that "
             "does not wait for each result) and sync (a wait after every call), beside its "
             "device time. The last columns set that cost against the device time of "
             f"<code>{FLOOR_WORK_KERNEL}</code> with data on the device: from that many "
             "elements on, the device's work takes longer than the call that starts it. "
             "Below it, a faster kernel changes nothing a caller sees; the framework's "
             "dispatch is the floor.</p>\n"]
    table = launch_floor_table(df)
    if table is None:
        return "".join(parts) + (f"<p>Not measured: no ok <code>{FLOOR_KERNEL}</code> rows "
                                 "with a caller's clock.</p>\n")
    return "".join(parts) + table.report.html()


# -- first-call and compilation cost ------------------------------------------------------


def first_call_table(df: pd.DataFrame) -> pd.DataFrame | None:
    """Per backend and implementation: what the first call costs beyond a timed call."""
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    if ok.empty:
        return None
    # the first call is a host-clock wait for one call: compare it with the same clock
    warm = ok["sync_s"].where(ok["sync_s"] > 0, ok["median_s"])
    ok = ok.assign(excess=(ok["first_call_s"] - warm).clip(lower=0), warm=warm)
    rows = []
    for (backend, impl), g in ok.groupby(["backend", "implementation"], sort=True):
        rows.append([backend, impl, str(len(g)), fmt_time(g["first_call_s"].median()),
                     fmt_time(g["first_call_s"].max()), fmt_time(g["excess"].median()),
                     fmt_speedup((g["first_call_s"] / g["warm"]).median()),
                     fmt_time(g["setup_s"].median())])
    return text_table(["backend", "implementation", "cases", "first call (median)",
                  "first call (max)", "first call − warm sync call", "first call / warm",
                  "setup (median)"], rows,
                 frozenset({"cases", "first call (median)", "first call (max)",
                            "first call − warm sync call", "first call / warm",
                            "setup (median)"}))


def first_call_backend_table(df: pd.DataFrame) -> pd.DataFrame | None:
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    if ok.empty:
        return None
    rows = []
    for backend, g in ok.groupby("backend", sort=True):
        rows.append([backend, str(len(g)), fmt_time(g["first_call_s"].median()),
                     fmt_time(g["first_call_s"].max()), fmt_time(g["first_call_s"].sum()),
                     fmt_time(g["setup_s"].sum())])
    return text_table(["backend", "cases", "first call (median)", "first call (max)",
                  "first calls (total)", "setup (total)"], rows,
                 frozenset({"cases", "first call (median)", "first call (max)",
                            "first calls (total)", "setup (total)"}))


def first_call_figure(data: pd.DataFrame) -> str:
    """Per backend, the spread of first-call times and of timed-call medians (boxes)."""
    backends = sorted(set(data["backend"]))
    fig = figures.new_figure(0.45 * len(backends) + 1.4)
    fig.subplots_adjust(left=0.2, right=0.97, top=1 - 0.45 / (0.45 * len(backends) + 1.4),
                        bottom=0.7 / (0.45 * len(backends) + 1.4))
    ax = fig.subplots()
    first = [data.loc[data["backend"] == b, "first_call_s"].to_numpy(float) for b in backends]
    med = [data.loc[data["backend"] == b, "median_s"].to_numpy(float) for b in backends]
    pos = np.arange(len(backends), dtype=float)
    # matplotlib 3.10 replaced vert=False by orientation="horizontal"
    horizontal = ({"orientation": "horizontal"} if "orientation" in
                  inspect.signature(ax.boxplot).parameters else {"vert": False})
    kw = {**horizontal, "widths": 0.32, "showfliers": True, "flierprops": {"markersize": 2}}
    ax.boxplot(first, positions=pos + 0.18, patch_artist=True,
               boxprops={"facecolor": "#f4a582"}, **kw)
    ax.boxplot(med, positions=pos - 0.18, patch_artist=True,
               boxprops={"facecolor": "#92c5de"}, **kw)
    ax.set_yticks(pos, backends)
    figures.log_scale(ax, "x", np.concatenate(first + med))
    figures.grid(ax)
    ax.set_xlabel("seconds (log scale)")
    ax.set_title("first call (orange, host clock, includes compilation) vs timed-call "
                 "median on each row's own timer (blue)", fontsize=10)
    return figures.png(fig)


def first_call_html(df: pd.DataFrame, figs: figures.FigureQueue) -> str:
    parts = ['<h2 id="first-call">First-call and compilation cost</h2>\n<p class="note">The '
             "first call of each measurement is timed alone: it includes JIT compilation "
             "(Numba, JAX, CuPy kernels, NVRTC, torch.compile), lazy initialisation and "
             "cache misses, on the host clock and a wait. <em>first call − warm sync "
             "call</em> is what a user pays once per shape and dtype beyond a warm call on "
             "the same clock (the sync caller's clock; CPU: wall); <em>setup</em> is "
             "building the implementation (tracing, allocation) before that.</p>\n"]
    per_backend = first_call_backend_table(df)
    if per_backend is None:
        return "".join(parts) + "<p>No first calls were recorded.</p>\n"
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    data = ok[["backend", "first_call_s", "median_s"]].sort_values(
        ["backend", "first_call_s", "median_s"], kind="mergesort").reset_index(drop=True)
    worst = ok.sort_values("first_call_s", ascending=False, kind="mergesort").iloc[0]
    alt = (f"Box plots per backend ({', '.join(sorted(set(data['backend'])))}) of first-call "
           f"time and timed-call median, log scale. Longest first call: {worst['backend']} "
           f"{worst['implementation']} on {worst['kernel']} at "
           f"{fmt_time(worst['first_call_s'])}.")
    parts.append(per_backend.report.html())
    parts.append(img(figs, alt, first_call_figure, data, cls="first-call"))
    table = first_call_table(df)
    if table is not None:
        parts.append("<details><summary>Per implementation</summary>\n" + table.report.html()
                     + "</details>\n")
    return "".join(parts)


# -- code size ----------------------------------------------------------------------------


_CU_CALL = re.compile(r"cuda_sources\.source\(\s*[\"']([A-Za-z0-9_]+)[\"']")


def _code_lines(text: str) -> int:
    """Lines that are code: not blank, not only a comment, not a docstring."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return sum(1 for ln in text.splitlines() if ln.strip() and not
                   ln.strip().startswith("#"))
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(
                body[0].value.value, str):
            doc_lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return sum(1 for i, ln in enumerate(text.splitlines(), 1)
               if ln.strip() and not ln.strip().startswith("#") and i not in doc_lines)


def _cu_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("//"))


def implementation_source(impl: Any) -> tuple[str, list[str]]:
    """The builder's source plus the module-level helpers it uses (transitively), and the
    CUDA C files it loads. Shared imports are not counted."""
    module = sys.modules.get(impl.builder.__module__)
    if module is None:
        return inspect.getsource(impl.builder), []
    msource = inspect.getsource(module)
    tree = ast.parse(msource)
    defs = {n.name: n for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    lines = msource.splitlines()
    todo, seen = [impl.builder.__name__], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        for node in ast.walk(defs[name]):
            if isinstance(node, ast.Name) and node.id in defs and node.id not in seen:
                if not _is_registered(defs[node.id]):
                    todo.append(node.id)
    chunks = []
    for name in sorted(seen, key=lambda n: defs[n].lineno):
        node = defs[name]
        start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        chunks.append("\n".join(lines[start - 1:node.end_lineno]))
    text = "\n\n".join(chunks)
    return text, sorted(set(_CU_CALL.findall(text)))


def _is_registered(node: ast.AST) -> bool:
    for d in getattr(node, "decorator_list", []):
        f = d.func if isinstance(d, ast.Call) else d
        if isinstance(f, ast.Name) and f.id == "implementation":
            return True
    return False


def code_size(df: pd.DataFrame) -> pd.DataFrame:
    """Lines of code of every implementation that has rows, from the registry."""
    from gpubench import cuda_sources, spec

    present = df[["kernel", "framework", "implementation"]].drop_duplicates()
    out = []
    for kernel in _ordered(present["kernel"], KERNELS):
        try:
            impls = spec.implementations(kernel)
        except Exception:  # noqa: BLE001 - unknown kernel: no source to measure
            continue
        want = present[present["kernel"] == kernel]
        pairs = set(zip(want["framework"], want["implementation"], strict=True))
        for impl in impls:
            if (impl.framework, impl.name) not in pairs:
                continue
            try:
                text, cus = implementation_source(impl)
            except (OSError, TypeError, SyntaxError):
                continue
            cu = 0
            for name in cus:
                try:
                    cu += _cu_lines(cuda_sources.source(name))
                except OSError:
                    pass
            out.append({"kernel": kernel, "framework": impl.framework,
                        "implementation": impl.name, "python": _code_lines(text),
                        "cuda_c": cu, "module": impl.builder.__module__.rsplit(".", 1)[-1]})
    frame = pd.DataFrame(out, columns=["kernel", "framework", "implementation", "python",
                                       "cuda_c", "module"])
    return frame.drop_duplicates(["kernel", "framework", "implementation"])


def code_size_tables(df: pd.DataFrame) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    sizes = code_size(df)
    if sizes.empty:
        return None, None
    total = sizes["python"] + sizes["cuda_c"]
    per_fw = []
    for fw, g in sizes.assign(total=total).groupby("framework", sort=True):
        per_fw.append([fw, str(len(g)), f"{g['total'].median():.0f}", str(int(g["total"].min())),
                       str(int(g["total"].max())), str(int((g["cuda_c"] > 0).sum()))])
    fw_table = text_table(["framework", "implementations", "lines (median)", "fewest", "most",
                      "with CUDA C"], per_fw,
                     frozenset({"implementations", "lines (median)", "fewest", "most",
                                "with CUDA C"}))
    rows = [[r["kernel"], r["framework"], r["implementation"], str(r["python"]),
             str(r["cuda_c"]) if r["cuda_c"] else "—", r["module"]]
            for _, r in sizes.iterrows()]
    impl_table = text_table(["kernel", "framework", "implementation", "Python lines",
                        "CUDA C lines", "file"], rows, frozenset({"Python lines",
                                                                  "CUDA C lines"}))
    return fw_table, impl_table


def code_size_html(tables: tuple[pd.DataFrame | None, pd.DataFrame | None]) -> str:
    """``tables``: :func:`code_size_tables` of the frame."""
    parts = ['<h2 id="code-size">Code size</h2>\n<p class="note">The seeds\' "verbosity", '
             "measured: lines of code of each implementation's builder and the module-level "
             "helpers it calls, without blank lines, comments and docstrings, from the "
             "source of this checkout of gpubench (commit of the report, which may differ "
             "from the commit that measured). CUDA C lines count the whole "
             "<code>kernels/&lt;kernel&gt;/&lt;kernel&gt;.cu</code> file the implementation "
             "compiles (every variant and dtype in it).</p>\n"]
    fw_table, impl_table = tables
    if fw_table is None or impl_table is None:
        return "".join(parts) + "<p>No implementation in the data is known to this code.</p>\n"
    return "".join(parts) + fw_table.report.html() + (
        "<details><summary>Per implementation</summary>\n" + impl_table.report.html()
        + "</details>\n")
