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

from gpubench.report import figures, stats
from gpubench.report.base import (
    BASELINE_FRAMEWORK,
    KERNELS,
    Table,
    _finite,
    _kernel_spec,
    _ordered,
    esc,
    fmt_int,
    fmt_sig,
    fmt_speedup,
    fmt_time,
    img,
)

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


def best_per(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """The fastest ok row per ``keys`` (ties broken by name, so the choice is stable).

    Rows come in :func:`canonical_order` (fastest first), so the first of each group wins
    without sorting again: this runs a thousand times per report."""
    ok = rows[rows["status"] == "ok"]
    return ok.drop_duplicates(list(keys), keep="first")


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


#: Two rows timed by different clocks (``timer``) get no verdict when their medians are
#: closer than this: the clocks' own floors differ by a few µs. On the H100 the same
#: 1024-element vector_add reads 3.3-3.6 µs between CUDA events and 1.1 µs as a CUPTI
#: kernel duration; a host clock adds the Python call instead.
CLOCK_MARGIN_S = 5e-6


@dataclass
class Pick:
    """The winner of one (case, size) and how sure the data make it."""

    size: int
    winner: pd.Series
    runner: pd.Series | None
    verdict: stats.Verdict | None

    @property
    def clocks_differ(self) -> bool:
        """Winner and runner-up timed by different clocks, too close to tell apart."""
        if self.runner is None:
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
        head = f"{w['backend']} {w['implementation']} ({fmt_time(w['median_s'])})"
        if self.runner is None:
            return f"{head}; no other backend"
        ratio = fmt_speedup(self.verdict.ratio if self.verdict else math.nan)
        if self.clocks_differ:
            return (f"{head}; no verdict against {self.runner['backend']} ({ratio}): "
                    f"{self.winner.get('timer', '')} vs {self.runner.get('timer', '')}, "
                    f"less than {CLOCK_MARGIN_S * 1e6:.0f} µs apart")
        if self.sure:
            return f"{head}; sure: {ratio} faster than {self.runner['backend']}"
        return f"{head}; within noise of {self.runner['backend']} ({ratio})"


def pick(rows: pd.DataFrame, size: int, samples: stats.Samples) -> Pick | None:
    """Fastest backend at ``size``, compared with the fastest other backend."""
    at = best_per(rows[rows["size_key"] == size], ["backend"])
    if at.empty:
        return None
    winner = at.iloc[0]
    if len(at) == 1:
        return Pick(size, winner, None, None)
    runner = at.iloc[1]
    verdict = stats.compare(
        float(winner["median_s"]), float(runner["median_s"]),
        samples.get(int(winner.name)), samples.get(int(runner.name)),
        (winner["q1_s"], winner["q3_s"]), (runner["q1_s"], runner["q3_s"]))
    return Pick(size, winner, runner, verdict)


Picks = list[tuple[str, str, str, dict[str, Pick]]]


def picks_for(df: pd.DataFrame, samples: stats.Samples, mode: str) -> Picks:
    """Per (kernel, variant, dtype), the pick at each size class in ``mode``."""
    out = []
    for kernel, variant, dtype, g in _cases(df[(df["mode"] == mode) & (df["status"] == "ok")]):
        per_size = g.groupby("size_key")["backend"].nunique()
        contested = per_size[per_size >= 2].index
        found = {name: pick(g, size, samples) for name, size in
                 size_classes(contested if len(contested) else g["size_key"])}
        out.append((kernel, variant, dtype, {k: v for k, v in found.items() if v}))
    return out


def best_table(picks: Picks) -> Table | None:
    """Per kernel, variant and dtype: the winner at the small, medium and large size."""
    rows = []
    for kernel, variant, dtype, found in picks:
        cells = [f"n={found[n].size:,}: {found[n].text()}" if n in found else "—"
                 for n in CLASS_NAMES]
        rows.append([kernel, variant, dtype, *cells])
    if not rows:
        return None
    return Table(["kernel", "variant", "dtype", "small", "medium", "large"], rows)


def wins_table(picks: Picks) -> Table | None:
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
    return Table(["backend", "small wins", "medium wins", "large wins"], rows)


def summary_html(df: pd.DataFrame, picks: Mapping[str, Picks]) -> str:
    """``picks``: :func:`picks_for` per mode."""
    mode = primary_mode(df)
    parts = ['<h2 id="summary">Summary</h2>\n<p class="note">Per kernel, variant and dtype, '
             "the fastest backend (its best implementation) at the smallest, middle and "
             "largest size that two or more backends measured (else any size), in mode "
             f"<strong>{esc(mode)}</strong>, against the "
             "fastest other backend. <em>Sure</em> means a two-sided Mann–Whitney U test on "
             f"the recorded samples gives p &lt; {stats.ALPHA} <em>and</em> the medians "
             f"differ by more than {stats.MIN_EFFECT:.0%}; otherwise the two are "
             "<em>within noise</em>. Rows without samples use non-overlapping "
             "interquartile ranges instead. Two rows timed by different clocks "
             f"(<code>timer</code>) less than {CLOCK_MARGIN_S * 1e6:.0f} µs apart get "
             "<em>no verdict</em>: the clocks' own floors differ by a few µs (on an H100 "
             "the same small kernel reads about 3.4 µs between CUDA events, 1.1 µs as a "
             "CUPTI kernel duration). Only ok rows compete.</p>\n"]
    table = best_table(picks.get(mode, []))
    if table is None:
        return "".join(parts) + '<p class="alert">No successful measurements.</p>\n'
    wins = wins_table(picks.get(mode, []))
    if wins:
        parts.append("<h3>Wins per backend</h3>\n" + wins.html())
    parts.append("<h3>Best per kernel and size class</h3>\n" + table.html())
    for other in sorted(m for m in picks if m != mode):
        t = best_table(picks[other])
        if t:
            parts.append(f"<details><summary>Mode {esc(other)}</summary>\n{t.html()}"
                         "</details>\n")
    return "".join(parts)


# -- speedup over NumPy -------------------------------------------------------------------


def speedup_table(df: pd.DataFrame, mode: str) -> Table | None:
    """Speedup of each backend's best implementation at the largest size with a baseline."""
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["speedup"].notna()]
    if ok.empty:
        return None
    groups = _ordered(_group(ok), (f"{BASELINE_FRAMEWORK}-cpu",))
    rows = []
    for kernel, variant, dtype, g in _cases(ok):
        size = int(g["size_key"].max())
        at = g[g["size_key"] == size].assign(_g=_group(g[g["size_key"] == size]))
        best = best_per(at, ["_g"]).set_index("_g")
        rows.append([kernel, variant, dtype, fmt_int(size)] + [
            fmt_speedup(best.loc[c, "speedup"]) if c in best.index else "—" for c in groups])
    return Table(["kernel", "variant", "dtype", "size", *groups], rows,
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
    ax.set_ylabel("speedup over the fastest NumPy (log scale)")
    ax.set_title(title, fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figures.png(fig)


def speedup_html(df: pd.DataFrame, figs: figures.FigureQueue) -> str:
    mode = primary_mode(df)
    parts = ['<h2 id="speedup">Speedup over NumPy</h2>\n<p class="note">Median time of the '
             "fastest NumPy implementation divided by the median time of each backend's "
             f"fastest implementation, same kernel, variant, size and dtype, mode {esc(mode)}. "
             "Above 1× the backend is faster than NumPy; the size where a GPU line crosses "
             "1× is its crossover (next section). Dashed: end-to-end implementations that "
             "copy inputs from and results to the host. One figure per kernel (its first "
             "variant and dtype); the table has every case.</p>\n"]
    table = speedup_table(df, mode)
    if table is None:
        return "".join(parts) + ("<p>No speedup can be computed: no ok NumPy rows to "
                                 "compare with.</p>\n")
    parts.append("<h3>At the largest size with a NumPy baseline</h3>\n" + table.html())
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["speedup"].notna()]
    drawn: set[str] = set()
    for kernel, variant, dtype, g in _cases(ok):
        # one figure per kernel (its first variant and dtype with a curve): the table
        # above has every case, and drawing dominates the report's run time
        if kernel in drawn:
            continue
        g = g.assign(group=_group(g))
        best = best_per(g, ["group", "size_key"])
        best = best[best["framework"] != BASELINE_FRAMEWORK]
        if best.empty or best["size_key"].nunique() < 2:
            continue
        drawn.add(kernel)
        spec = _kernel_spec(kernel)
        meaning = spec.size_meaning if spec else ""
        title = f"{kernel} · {variant} · {dtype}: speedup over NumPy"
        frame = best[["group", "size_key", "speedup"]].reset_index(drop=True)
        top = best.sort_values(["size_key", "speedup"], ascending=[False, False]).iloc[0]
        alt = (f"Log-log plot of speedup over NumPy against problem size for {kernel}, "
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


def ceiling_table(env_data: Mapping[str, Any]) -> Table | None:
    c = ceilings_of(env_data)
    if not c:
        return None
    raw = env_data.get("ceilings") or {}
    rows = [[CEILING_LABELS[k][0], fmt_sig(c[k], 4), CEILING_LABELS[k][1], k]
            for k in CEILING_LABELS if k in c]
    note = f"measured with {raw.get('measured_with')}" if raw.get("measured_with") else ""
    if note:
        rows.append(["(GPU ceilings)", "", "", note])
    return Table(["ceiling", "value", "unit", "key"], rows, frozenset({"value"}))


def pct_table(df: pd.DataFrame, mode: str) -> Table | None:
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
    return Table(["kernel", "backend", "implementation", "best variant / dtype", "size",
                  "% of ceiling", "ceiling"], rows, frozenset({"size", "% of ceiling"}))


#: The GPU targets the project holds itself to (issue 3): at the largest size, the best
#: implementation of every GPU framework reaches this share of its ceiling.
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("vector_add", "copy bandwidth", 85.0),
    ("elementwise", "copy bandwidth", 85.0),
    ("matmul", "cuBLAS GEMM (library matmul)", 90.0),
)


def targets_table(df: pd.DataFrame, mode: str) -> Table | None:
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
    return Table(["kernel", "backend", "weakest case (variant / dtype)",
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
             "transfers to the host link). Over 100 % is possible: the probe's copy is one "
             "library call, not the hardware's limit.</p>\n"]
    c = ceilings_of(env_data)
    table = ceiling_table(env_data)
    parts.append(table.html() if table else '<p class="banner">No ceilings in the '
                 "environment record: the probe did not measure them, so no % of ceiling and "
                 "no roofs are drawn.</p>\n")
    targets = targets_table(df, mode)
    if targets:
        parts.append(f"<h3>Targets (mode {esc(mode)}, largest size)</h3>\n<p class=\"note\">"
                     "For each GPU backend, the weakest (variant, dtype) of its best "
                     "implementations, against the share of the ceiling the project "
                     "expects of a good implementation.</p>\n" + targets.html())
    pct = pct_table(df, mode)
    if pct:
        parts.append(f"<h3>% of ceiling at the largest size (mode {esc(mode)})</h3>\n"
                     + pct.html())
    for device, bw_key, s_key, d_key in (("gpu", "d2d_copy_gbps", "sgemm_gflops",
                                          "dgemm_gflops"),
                                         ("cpu", "cpu_copy_gbps", "cpu_sgemm_gflops",
                                          "cpu_dgemm_gflops")):
        pts = roofline_points(df, device, mode)
        if pts.empty:
            continue
        bw = c.get(bw_key, 0.0)
        compute = [(n, c[k]) for n, k in (("SGEMM", s_key), ("DGEMM", d_key)) if k in c]
        title = (f"Roofline, {device.upper()}: memory roof {bw:,.0f} GB/s (mode {mode}, "
                 "largest size per implementation)" if bw else
                 f"Roofline, {device.upper()} (mode {mode}; no measured roofs)")
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
    kernel: str
    variant: str
    dtype: str
    backend: str
    device_resident: tuple[str, float]
    measured_transfers: tuple[str, float] | None
    estimated_transfers: tuple[str, float] | None
    elements: bool


def crossings(df: pd.DataFrame, env_data: Mapping[str, Any]) -> list[Crossing]:
    """Every GPU backend against the best CPU row, per kernel, variant and dtype."""
    mode = primary_mode(df)
    link = ceilings_of(env_data).get("h2d_pageable_gbps")
    ok = df[(df["status"] == "ok") & (df["mode"] == mode)]
    out = []
    for kernel, variant, dtype, g in _cases(ok):
        cpu = best_per(g[g["device"] == "cpu"], ["size_key"]).set_index("size_key")
        gpu_rows = g[g["device"] == "gpu"]
        if cpu.empty or gpu_rows.empty:
            continue
        spec = _kernel_spec(kernel)
        elements = bool(spec and spec.size_meaning.startswith("elements"))
        for backend in sorted(set(gpu_rows["backend"])):
            b = gpu_rows[gpu_rows["backend"] == backend]
            e2e = b["implementation"].str.endswith(TRANSFERS_SUFFIX)

            def cross(rows: pd.DataFrame, extra: bool = False,
                      cpu: pd.DataFrame = cpu) -> tuple[str, float] | None:
                best = best_per(rows, ["size_key"])
                cs = cpu.index.to_numpy(float)
                sizes = best["size_key"].to_numpy(float)
                inside = (sizes >= cs.min()) & (sizes <= cs.max())
                best = best[inside]
                if best.empty:
                    return None
                t = best["median_s"].to_numpy(float)
                if extra:
                    t = t + best["bytes"].to_numpy(float) / (link * 1e9)
                if not np.isfinite(t).all():
                    return None
                gs = best["size_key"].to_numpy(float)
                order = np.argsort(cs)
                cpu_t = np.exp(np.interp(np.log(gs), np.log(cs[order]),
                                         np.log(cpu["median_s"].to_numpy(float)[order])))
                return crossover(gs, t, cpu_t)

            dev = cross(b[~e2e])
            if dev is None:
                continue
            meas = cross(b[e2e]) if e2e.any() else None
            est = None
            if link and (b.loc[~e2e, "bytes"] > 0).all():
                est = cross(b[~e2e], extra=True)
            out.append(Crossing(kernel, variant, dtype, backend, dev, meas, est, elements))
    return out


def crossover_table(found: list[Crossing]) -> Table | None:
    if not found:
        return None
    rows = [[c.kernel, c.variant, c.dtype, c.backend, c.device_resident[0],
             c.measured_transfers[0] if c.measured_transfers else "—",
             c.estimated_transfers[0] if c.estimated_transfers else "—"] for c in found]
    return Table(["kernel", "variant", "dtype", "GPU backend", "data on the device",
                  "with transfers (measured +transfers)", "with transfers (estimated)"], rows)


def crossover_headline(found: list[Crossing]) -> list[str]:
    """One sentence per GPU backend on element-sized kernels, against the seeds' claim."""
    lines = []
    for backend in sorted({c.backend for c in found}):
        mine = [c for c in found if c.backend == backend and c.elements]
        if not mine:
            continue
        dev = [c.device_resident[1] for c in mine]
        never = sum(1 for x in dev if not math.isfinite(x))
        fin = sorted(x for x in dev if math.isfinite(x))
        est = [c.estimated_transfers[1] for c in mine if c.estimated_transfers]
        est_f = sorted(x for x in est if math.isfinite(x))
        text = (f"{backend}: on {len(mine)} element-sized case(s), data on the device, the "
                "GPU wins from a median of "
                + (f"about {_sig2(np.median(fin))} elements (range {fin[0]:,.0f} to "
                   f"{fin[-1]:,.0f})" if fin else "— (never)")
                + (f", never in {never}" if never else ""))
        if est:
            text += ("; with host transfers (estimated) from a median of "
                     + (f"about {_sig2(np.median(est_f))}" if est_f else "— (never)")
                     + (f", never in {len(est) - len(est_f)}" if len(est) > len(est_f)
                        else ""))
        lines.append(text + ".")
    return lines


def _sig2(x: float) -> str:
    """Two significant digits with thousands separators: 1,612 -> 1,600."""
    return f"{float(f'{x:.2g}'):,.0f}"


def crossover_html(df: pd.DataFrame, found: list[Crossing]) -> str:
    """``found``: :func:`crossings` of the frame."""
    mode = primary_mode(df)
    parts = ['<h2 id="crossover">CPU/GPU crossover</h2>\n<p class="note">For each GPU '
             "backend (its fastest implementation at each size) against the fastest CPU "
             f"row of any framework (mode {esc(mode)}): the smallest size from which the GPU "
             "is faster at every larger measured size, interpolated log-log between the two "
             "sizes around it. Where the CPU was measured at other sizes, its time is "
             "interpolated log-log between its measured sizes (never extrapolated), so only "
             "sizes inside the CPU's range are compared. <em>Measured with "
             "transfers</em> uses the end-to-end implementations (host arrays in, host "
             "result out); <em>estimated with "
             "transfers</em> adds the kernel's counted bytes at the probe's pageable "
             "host-to-device rate to the device time, an estimate for backends without an "
             f"end-to-end implementation. The seeds say the GPU loses below about "
             f"{SEED_CROSSOVER:,} elements; here is where it crosses on this machine.</p>\n"]
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
    if table:
        parts.append(table.html())
    return "".join(parts)


# -- first-call and compilation cost ------------------------------------------------------


def first_call_table(df: pd.DataFrame) -> Table | None:
    """Per backend and implementation: what the first call costs beyond a timed call."""
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    if ok.empty:
        return None
    ok = ok.assign(excess=(ok["first_call_s"] - ok["median_s"]).clip(lower=0))
    rows = []
    for (backend, impl), g in ok.groupby(["backend", "implementation"], sort=True):
        rows.append([backend, impl, str(len(g)), fmt_time(g["first_call_s"].median()),
                     fmt_time(g["first_call_s"].max()), fmt_time(g["excess"].median()),
                     fmt_speedup((g["first_call_s"] / g["median_s"]).median()),
                     fmt_time(g["setup_s"].median())])
    return Table(["backend", "implementation", "cases", "first call (median)",
                  "first call (max)", "first call − median", "first call / median",
                  "setup (median)"], rows,
                 frozenset({"cases", "first call (median)", "first call (max)",
                            "first call − median", "first call / median", "setup (median)"}))


def first_call_backend_table(df: pd.DataFrame) -> Table | None:
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    if ok.empty:
        return None
    rows = []
    for backend, g in ok.groupby("backend", sort=True):
        rows.append([backend, str(len(g)), fmt_time(g["first_call_s"].median()),
                     fmt_time(g["first_call_s"].max()), fmt_time(g["first_call_s"].sum()),
                     fmt_time(g["setup_s"].sum())])
    return Table(["backend", "cases", "first call (median)", "first call (max)",
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
    ax.set_title("first call (orange, includes compilation) vs timed call median (blue)",
                 fontsize=10)
    return figures.png(fig)


def first_call_html(df: pd.DataFrame, figs: figures.FigureQueue) -> str:
    parts = ['<h2 id="first-call">First-call and compilation cost</h2>\n<p class="note">The '
             "first call of each measurement is timed alone: it includes JIT compilation "
             "(Numba, JAX, CuPy kernels, NVRTC, torch.compile), lazy initialisation and "
             "cache misses. <em>first call − median</em> is what a user pays once per shape "
             "and dtype beyond a warm call; <em>setup</em> is building the implementation "
             "(tracing, allocation) before that.</p>\n"]
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
    parts.append(per_backend.html())
    parts.append(img(figs, alt, first_call_figure, data, cls="first-call"))
    table = first_call_table(df)
    if table:
        parts.append("<details><summary>Per implementation</summary>\n" + table.html()
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


def code_size_tables(df: pd.DataFrame) -> tuple[Table | None, Table | None]:
    sizes = code_size(df)
    if sizes.empty:
        return None, None
    total = sizes["python"] + sizes["cuda_c"]
    per_fw = []
    for fw, g in sizes.assign(total=total).groupby("framework", sort=True):
        per_fw.append([fw, str(len(g)), f"{g['total'].median():.0f}", str(int(g["total"].min())),
                       str(int(g["total"].max())), str(int((g["cuda_c"] > 0).sum()))])
    fw_table = Table(["framework", "implementations", "lines (median)", "fewest", "most",
                      "with CUDA C"], per_fw,
                     frozenset({"implementations", "lines (median)", "fewest", "most",
                                "with CUDA C"}))
    rows = [[r["kernel"], r["framework"], r["implementation"], str(r["python"]),
             str(r["cuda_c"]) if r["cuda_c"] else "—", r["module"]]
            for _, r in sizes.iterrows()]
    impl_table = Table(["kernel", "framework", "implementation", "Python lines",
                        "CUDA C lines", "file"], rows, frozenset({"Python lines",
                                                                  "CUDA C lines"}))
    return fw_table, impl_table


def code_size_html(tables: tuple[Table | None, Table | None]) -> str:
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
    return "".join(parts) + fw_table.html() + (
        "<details><summary>Per implementation</summary>\n" + impl_table.html()
        + "</details>\n")
