"""First-call and compilation cost: what the first call of each measurement costs
beyond a warm call.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpubench.report import figures, verdicts
from gpubench.report.base import (
    fmt_speedup,
    fmt_time,
)
from gpubench.report.render import Figure, text_table

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
    """Per backend, the matrix's statistic (building and the first call less a steady
    call, at each case's first size, cold caches) beside the same at each later size of
    a case: the cost of a first call at a new shape, which the source documents teach
    for JAX (a trace and compile per shape) and Numba (a compile per type)."""
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    if ok.empty:
        return None
    rows = []
    for backend, g in ok.groupby("backend", sort=True):
        first = verdicts.first_call_rows(df, str(backend))
        later = verdicts.first_call_rows(df, str(backend), new_shape=True)
        rows.append([backend, str(len(first)),
                     fmt_time(first["extra"].median()) if len(first) else "—",
                     fmt_time(first["extra"].max()) if len(first) else "—",
                     str(len(later)),
                     fmt_time(later["extra"].median()) if len(later) else "—",
                     fmt_time(later["extra"].max()) if len(later) else "—",
                     fmt_time(g["first_call_s"].sum()), fmt_time(g["setup_s"].sum())])
    cols = ["backend", "cases", "first size: extra (median)", "first size: extra (max)",
            "new sizes", "new size: extra (median)", "new size: extra (max)",
            "first calls (total)", "setup (total)"]
    return text_table(cols, rows, frozenset(cols[1:]))


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


@dataclass
class FirstCall:
    """The first-call section: per backend, its figure, and per implementation."""

    per_backend: pd.DataFrame | None
    figure: Figure | None
    per_implementation: pd.DataFrame | None
    #: which rows were left out because their first call met a warm compilation cache
    #: ('' when none was)
    note: str = ""


def cold_only(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows whose first call can show compilation: all but those whose first call
    met a warm persistent compilation cache (``cache_state`` warm: a re-run that found
    what an earlier one compiled); and the note saying what was left out, naming the
    backends left with no cold-cache row."""
    if "cache_state" not in df.columns:
        return df, ""
    ok = (df["status"] == "ok") & df["first_call_s"].notna()
    warm = ok & (df["cache_state"].fillna("").astype(str) == "warm")
    if not warm.any():
        return df, ""
    kept = df[~warm]
    kept_ok = kept[(kept["status"] == "ok") & kept["first_call_s"].notna()]
    gone = sorted(set(df.loc[warm, "backend"]) - set(kept_ok["backend"]))
    note = (f"{int(warm.sum())} rows whose first call met a warm compilation cache (an "
            "earlier run had compiled them) are left out: their first call shows no "
            "compilation.")
    if kept_ok.empty:
        note += (" No cold-cache rows exist, so no first-call or compilation cost can be "
                 "read; delete the results' cache/compile folder and re-run for them.")
    elif gone:
        note += f" No cold-cache rows for {', '.join(gone)}."
    return kept, note


def build(df: pd.DataFrame) -> FirstCall:
    df, note = cold_only(df)
    per_backend = first_call_backend_table(df)
    if per_backend is None:
        return FirstCall(None, None, None, note)
    ok = df[(df["status"] == "ok") & df["first_call_s"].notna()]
    data = ok[["backend", "first_call_s", "median_s"]].sort_values(
        ["backend", "first_call_s", "median_s"], kind="mergesort").reset_index(drop=True)
    worst = ok.sort_values("first_call_s", ascending=False, kind="mergesort").iloc[0]
    alt = (f"Box plots per backend ({', '.join(sorted(set(data['backend'])))}) of first-call "
           f"time and timed-call median, log scale. Longest first call: {worst['backend']} "
           f"{worst['implementation']} on {worst['kernel']} at "
           f"{fmt_time(worst['first_call_s'])}.")
    return FirstCall(per_backend, Figure(alt, first_call_figure, (data,), "first-call"),
                     first_call_table(df), note)
