"""Speedup over NumPy, on the caller's clock: a table of every case per size band (small,
medium, large, bounds stated) at the largest size of the band that NumPy and the most
frameworks measured, and one figure per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpubench.backends import backend_id
from gpubench.report import figures, verdicts
from gpubench.report.base import (
    BASELINE_FRAMEWORK,
    _kernel_spec,
    _ordered,
    fmt_int,
    fmt_speedup,
)
from gpubench.report.render import Figure, text_table
from gpubench.report.sections.common import (
    ANALYSIS_COLUMNS,
    BOOK_CROSSOVER,
    TRANSFERS_SUFFIX,
    _cases,
    _group,
    best_per,
    primary_mode,
)

# -- speedup over NumPy -------------------------------------------------------------------


def speedup_table(df: pd.DataFrame, mode: str, device: str = "gpu") -> pd.DataFrame | None:
    """Speedup of each backend's best implementation per case and size band, on the
    caller's clock (NumPy's wall time over the backend's pipelined caller time), at the
    band's comparison size: the largest size of the band measured by NumPy and by the
    most other backends (:mod:`gpubench.report.verdicts`), so a band's numbers compare
    like with like. ``device``: "gpu", NumPy and the GPU backends (with their
    +transfers columns); "cpu", the other CPU frameworks (None without any): one table
    of every backend is wider than a page."""
    # the columns it reads only: each of the thousand filters below copies every column
    ok = df.loc[(df["status"] == "ok") & (df["mode"] == mode) & df["speedup"].notna(),
                [*ANALYSIS_COLUMNS, "speedup"]]
    if ok.empty:
        return None
    base = backend_id(BASELINE_FRAMEWORK, "cpu")
    named = _group(ok)
    on_gpu = ok["device"].eq("gpu").groupby(named).all()
    groups = [g for g in _ordered(named, (base,))
              if (g == base or bool(on_gpu[g])) == (device == "gpu")]
    if not groups:
        return None
    rows = []
    for kernel, variant, dtype, g in _cases(ok):
        bands = [verdicts.band_of(kernel, s) for s in g["size_key"]]
        g = g.assign(_band=bands)
        for band in verdicts.BAND_NAMES:
            inband = g[g["_band"] == band]
            if inband.empty:
                continue
            count = inband.groupby("size_key")["backend"].nunique()
            size = int(max(count[count == count.max()].index))
            at = inband[inband["size_key"] == size]
            at = at.assign(_g=_group(at))
            best = best_per(at, ["_g"], by="caller_s").set_index("_g")
            rows.append([kernel, variant, dtype,
                         f"{band} ({verdicts.band_bounds(kernel, band)})", fmt_int(size)] + [
                fmt_speedup(best.loc[c, "speedup"]) if c in best.index else "—"
                for c in groups])
    return text_table(["kernel", "variant", "dtype", "band", "size", *groups], rows,
                      frozenset({"size", *groups}))


def speedup_figure(rows: pd.DataFrame, title: str, size_meaning: str, book_line: bool) -> str:
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
    if book_line:
        ax.axvline(BOOK_CROSSOVER, color="grey", linestyle=":", linewidth=1.2,
                   label="10,000 elements (workshop book)")
    figures.log_scale(ax, "x", rows["size_key"].to_numpy(float))
    figures.log_scale(ax, "y", np.r_[rows["speedup"].to_numpy(float), 1.0])
    figures.size_limits(ax, rows["size_key"].to_numpy(float))
    figures.grid(ax)
    ax.set_xlabel(f"problem size ({size_meaning}, log scale)" if size_meaning else "size")
    ax.set_ylabel("speedup over NumPy, caller's clock (log)")
    ax.set_title(title, fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figures.png(fig)


@dataclass
class Speedup:
    """The speedup section: every case at its largest size, one figure per kernel."""

    mode: str
    table: pd.DataFrame | None
    figures: list[Figure]
    #: the CPU frameworks other than NumPy, over NumPy (None: none measured)
    cpu_table: pd.DataFrame | None = None
    #: each figure's case, "kernel · variant · dtype" (the page's selector names them)
    labels: list[str] = field(default_factory=list)


def build(df: pd.DataFrame) -> Speedup:
    mode = primary_mode(df)
    table = speedup_table(df, mode)
    if table is None:
        return Speedup(mode, None, [])
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["speedup"].notna()]
    drawn: dict[str, Figure] = {}
    labels: list[str] = []
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
        drawn[kernel] = Figure(alt, speedup_figure, (frame, title, meaning,
                                                     meaning.startswith("elements")), "speedup")
        labels.append(f"{kernel} · {variant} · {dtype}")
    return Speedup(mode, table, list(drawn.values()), speedup_table(df, mode, "cpu"),
                   labels)
