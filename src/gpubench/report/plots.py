"""Interactive figures: one Plotly builder per matplotlib drawing function.

A builder takes the same arguments as its drawing function and returns a Plotly figure
spec made of plain dicts, lists, strings and rounded floats (no ``plotly.graph_objects``:
validating thousands of points costs more than the page build). The HTML page shows
these (a reader can read a point, hide a series by clicking its legend entry, zoom); the
PNGs stay for summary.md and ``snakemake --report``. The same data gives the same spec,
and :func:`dumps` writes it with sorted keys and fixed float precision, so the page stays
byte-identical from shuffled CSVs.

:data:`BUILDERS` maps a drawing function's ``__name__`` to its builder; a name two modules
share is told apart by the module's last component (``"mpi.scaling_figure"``), so the
builders keep working when the section code moves between modules.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import to_hex

from gpubench.report import stats
from gpubench.report.palette import colors as _colors
from gpubench.spec import kernel_order

Spec = dict[str, Any]
#: significant digits kept for every float in a spec: beyond what the axes resolve
DIGITS = 6
#: Plotly marker symbols in the order of :data:`palette.MARKERS` (o s ^ D v < > p h *)
SYMBOLS = ("circle", "square", "triangle-up", "diamond", "triangle-down", "triangle-left",
           "triangle-right", "pentagon", "hexagon", "star")
#: the dashes of matplotlib's "-", "--" and ":"
DASH = {"-": "solid", "--": "dash", ":": "dot"}
#: the same labels and colours as compare.LABEL_COLORS
LABEL_COLORS = {stats.SLOWER: "#b2182b", stats.FASTER: "#2166ac", stats.SAME: "#999999",
                stats.UNRESOLVED: "#e0a030"}
#: the workshop book's "< 10,000 elements" (sections.common.BOOK_CROSSOVER)
BOOK_CROSSOVER = 10_000
TRANSFERS_SUFFIX = "+transfers"
CONFIG = {"displaylogo": False, "responsive": True,
          "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


# -- numbers and JSON ----------------------------------------------------------------------


def num(x: Any) -> float | int | None:
    """A JSON number with :data:`DIGITS` significant digits; None (a gap) when not finite."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(v):
        return None
    if v == int(v) and abs(v) < 2**53:
        return int(v)
    return float(f"{v:.{DIGITS}g}")


def nums(values: Any) -> list[float | int | None]:
    return [num(v) for v in np.asarray(values, dtype=float).ravel()]


def dumps(spec: Spec) -> str:
    """Compact JSON, keys sorted, safe inside ``<script>``: the same spec, the same bytes."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def palette(n: int) -> list[str]:
    """The matplotlib figures' colours (tab10, tab20 past ten) as hex strings."""
    cmap = _colors(n)
    return [to_hex(cmap(i % cmap.N)) for i in range(max(n, 1))]


# -- layout helpers ------------------------------------------------------------------------


def _log_axis(title: str, values: Any = None, **extra: Any) -> Spec:
    axis: Spec = {"type": "log", "title": {"text": title}, "exponentformat": "power",
                  "showline": True, "linecolor": "#444", "mirror": True, "ticks": "outside",
                  "gridcolor": "#e3e3e3", "zeroline": False}
    if values is not None:
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v) & (v > 0)]
        decades = np.log10(v.max() / v.min()) if v.size else 0.0
        # as the PNGs: minor labels only where the data spans under two decades
        axis["dtick"] = "D1" if decades < 1 else "D2" if decades < 2 else 1
    axis.update(extra)
    return axis


def _size_axis(title: str, sizes: Any, **extra: Any) -> Spec:
    """x axis of problem sizes: log; one size alone is centred and labelled."""
    xs = np.unique(np.asarray(sizes, dtype=float))
    xs = xs[np.isfinite(xs) & (xs > 0)]
    axis = _log_axis(title, xs, **extra)
    if xs.size == 1:
        axis.update(range=[num(math.log10(xs[0] / 2)), num(math.log10(xs[0] * 2))],
                    tickvals=[num(xs[0])], ticktext=[f"{int(xs[0]):,}"])
        axis.pop("dtick", None)
    elif xs.size > 1:
        axis["range"] = [num(math.log10(xs[0] / 1.4)), num(math.log10(xs[-1] * 1.4))]
    return axis


def _layout(title: str, height: int, **extra: Any) -> Spec:
    out: Spec = {"title": {"text": title, "font": {"size": 15}, "x": 0.5},
                 "height": height, "autosize": True, "hovermode": "closest",
                 # a legend even for one series: it names it and can hide it
                 "showlegend": True,
                 "font": {"family": "system-ui, sans-serif", "size": 12},
                 "paper_bgcolor": "white", "plot_bgcolor": "white",
                 "margin": {"l": 70, "r": 20, "t": 70, "b": 60},
                 "legend": {"font": {"size": 11}, "itemclick": "toggle",
                            "itemdoubleclick": "toggleothers"}}
    out.update(extra)
    return out


def _bottom_legend(n: int) -> Spec:
    """A legend under the plot: side legends squeeze two panels on a narrow page."""
    return {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.22, "yanchor": "top",
            "font": {"size": 11}, "itemclick": "toggle", "itemdoubleclick": "toggleothers"}


def _annotation(text: str, x: float, xref: str = "paper", yref: str = "paper",
                size: int = 13) -> Spec:
    return {"text": text, "x": x, "y": 1.0, "xref": xref, "yref": yref, "xanchor": "center",
            "yanchor": "bottom", "showarrow": False, "font": {"size": size}}


#: keys whose strings Plotly renders as its HTML subset: names from the results go there
_TEXT_KEYS = frozenset({"name", "text", "ticktext"})


def _escape_text(node: Any, key: str = "") -> Any:
    """Names from the results as text: Plotly renders tags such as <b> or <a> in them."""
    if isinstance(node, dict):
        return {k: _escape_text(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_escape_text(v, key) for v in node]
    if isinstance(node, str) and key in _TEXT_KEYS:
        return node.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return node


def spec(data: list[Spec], layout: Spec) -> Spec:
    """The figure for ``Plotly.newPlot``: data, layout and the page's config."""
    return _escape_text({"data": data, "layout": layout, "config": CONFIG})


# -- per-kernel scaling (base.scaling_figure) ----------------------------------------------


def _series_order(rows: pd.DataFrame) -> list[str]:
    """Line labels ordered as in base._series_order (backend, implementation, threads)."""
    keys = rows[["backend", "implementation", "threads_key", "mode", "series"]]
    return list(dict.fromkeys(keys.sort_values(list(keys.columns), kind="mergesort")["series"]))


def scaling_figure(rows: pd.DataFrame, title: str, size_meaning: str, unit: str) -> Spec:
    """Time a caller waits (q1-q3 bars) and throughput against size, one legend entry per
    series in both panels; cold dotted with open markers."""
    series = _series_order(rows)
    colors = palette(len(series))
    # hot first: a series' legend entry shows its first trace's style
    modes = sorted(set(rows["mode"]), key=lambda m: (m != "hot", m))
    data: list[Spec] = []
    for i, name in enumerate(series):
        color, symbol = colors[i], SYMBOLS[i % len(SYMBOLS)]
        first = True
        for mode in modes:
            s = rows[(rows["series"] == name) & (rows["mode"] == mode)].sort_values("size_key")
            if s.empty:
                continue
            cold = mode == "cold"
            x = s["size_key"].to_numpy(float)
            med = s["caller_s"].to_numpy(float)
            lo = np.clip(np.nan_to_num(med - s["caller_q1"].to_numpy(float)), 0, med * 0.999)
            hi = np.clip(np.nan_to_num(s["caller_q3"].to_numpy(float) - med), 0, None)
            label = name if len(modes) == 1 else f"{name} ({mode})"
            # one legend entry per series: a click hides it in both panels and modes
            common = {"type": "scatter", "mode": "lines+markers", "name": name,
                      "legendgroup": name,
                      "line": {"color": color, "width": 1.6, "dash": "dot" if cold else
                               "solid"},
                      "marker": {"color": color, "size": 6,
                                 "symbol": symbol + ("-open" if cold else "")}}
            timed = np.isfinite(med)
            if timed.any():
                data.append({**common, "x": nums(x[timed]), "y": nums(med[timed]),
                             "xaxis": "x", "yaxis": "y", "showlegend": first,
                             "error_y": {"type": "data", "symmetric": False,
                                         "array": nums(hi[timed]),
                                         "arrayminus": nums(lo[timed]), "color": color,
                                         "thickness": 1, "width": 0},
                             "hovertemplate": f"{_h(label)}<br>size %{{x:,}}<br>median "
                             "%{y:.3s}s per call<extra></extra>"})
                first = False
            thr = s["throughput"].to_numpy(float)
            if np.isfinite(thr).any():
                data.append({**common, "x": nums(x), "y": nums(thr), "xaxis": "x2",
                             "yaxis": "y2", "showlegend": first,
                             "hovertemplate": f"{_h(label)}<br>size %{{x:,}}<br>"
                             f"%{{y:.4g}} {_h(unit)}<extra></extra>"})
                first = False
    sizes = rows["size_key"].to_numpy(float)
    xlabel = (f"problem size ({size_meaning}, log scale)" if size_meaning
              else "problem size (log scale)")
    times = np.concatenate([rows[c].to_numpy(float)
                            for c in ("caller_q1", "caller_q3", "caller_s")])
    thr_all = rows["throughput"].to_numpy(float)
    layout = _layout(title, 520 + 22 * ((len(series) + 2) // 3),
                     legend=_bottom_legend(len(series)))
    layout["margin"] = {"l": 70, "r": 20, "t": 80, "b": 40}
    layout["xaxis"] = _size_axis(xlabel, sizes, domain=[0, 0.45], anchor="y")
    layout["xaxis2"] = _size_axis(xlabel, sizes, domain=[0.55, 1], anchor="y2")
    layout["yaxis"] = _log_axis("median s per call a caller waits (log)", times, anchor="x")
    annotations = [
        _annotation("caller's clock: GPU pipelined, CPU wall (bars: q1–q3)", 0.225),
        _annotation(f"throughput on the device clock ({unit}, higher is better)", 0.775)]
    if len(modes) > 1:
        annotations.append({**_annotation("solid line, filled marker: hot; dotted, open: "
                                          "cold", 0.5, size=11), "y": 1.08})
    if np.isfinite(thr_all).any():
        layout["yaxis2"] = _log_axis(f"throughput ({unit}, log scale)", thr_all, anchor="x2")
    else:
        layout["yaxis2"] = {"anchor": "x2", "showticklabels": False, "showgrid": False,
                            "zeroline": False}
        annotations.append({"text": f"no {unit} counted for this kernel", "x": 0.775,
                            "y": 0.5, "xref": "paper", "yref": "paper",
                            "showarrow": False})
    layout["annotations"] = annotations
    return spec(data, layout)


def _h(text: Any) -> str:
    """A name inside a hover template: Plotly reads %{...} and tags there, so escape them."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("%{", "%\u200b{"))


# -- speedup over NumPy (sections/speedup.py: speedup_figure) ------------------------------


def speedup_figure(rows: pd.DataFrame, title: str, size_meaning: str,
                   book_line: bool) -> Spec:
    """Speedup over NumPy against size, one line per backend; dashed: with transfers."""
    groups = sorted(set(rows["group"]))
    colors = palette(len(groups))
    data: list[Spec] = []
    for i, grp in enumerate(groups):
        s = rows[rows["group"] == grp].sort_values("size_key")
        data.append({"type": "scatter", "mode": "lines+markers", "name": grp,
                     "x": nums(s["size_key"]), "y": nums(s["speedup"]),
                     "line": {"color": colors[i], "width": 1.6,
                              "dash": "dash" if grp.endswith(TRANSFERS_SUFFIX) else "solid"},
                     "marker": {"color": colors[i], "size": 6,
                                "symbol": SYMBOLS[i % len(SYMBOLS)]},
                     "hovertemplate": f"{_h(grp)}<br>size %{{x:,}}<br>%{{y:.3g}}× "
                     "NumPy's speed<extra></extra>"})
    sizes = rows["size_key"].to_numpy(float)
    speed = np.r_[rows["speedup"].to_numpy(float), 1.0]
    shapes = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": 1,
               "y1": 1, "line": {"color": "black", "width": 1}}]
    if book_line:
        fin = speed[np.isfinite(speed) & (speed > 0)]
        data.append({"type": "scatter", "mode": "lines", "name": "10,000 elements (workshop book)",
                     "x": [BOOK_CROSSOVER, BOOK_CROSSOVER],
                     "y": [num(fin.min()), num(fin.max())],
                     "line": {"color": "grey", "dash": "dot", "width": 1.4},
                     "hoverinfo": "name"})
    layout = _layout(title, 460, shapes=shapes)
    layout["xaxis"] = _size_axis(f"problem size ({size_meaning}, log scale)" if size_meaning
                                 else "size", sizes)
    layout["yaxis"] = _log_axis("speedup over NumPy, caller's clock (log)", speed)
    return spec(data, layout)


# -- the first screen's figure (headline.py: overview_figure) -------------------------------


def overview_series(lines: pd.DataFrame, crossovers: pd.DataFrame) -> Iterator[
        tuple[int, str, list[tuple[bool, pd.DataFrame]], pd.DataFrame]]:
    """The overview's frameworks, in order, each as (its index, its backend, its lines
    (with host transfers or not, sorted by size; the empty ones left out), its crossovers
    that have a size): what the PNG (:func:`gpubench.report.headline.overview_figure`)
    and the interactive figure draw alike."""
    for i, b in enumerate(dict.fromkeys(lines["backend"])):
        parts = []
        for transfers in (False, True):
            s = lines[(lines["backend"] == b) & (lines["transfers"] == transfers)]
            if not s.empty:
                parts.append((transfers, s.sort_values("size_key")))
        yield i, b, parts, crossovers[(crossovers["backend"] == b)
                                      & np.isfinite(crossovers["size"])]


def overview_figure(lines: pd.DataFrame, crossovers: pd.DataFrame, title: str,
                    reference: str) -> Spec:
    """Speedup over the case's CPU reference against size per GPU framework: solid on
    the device, dashed with host transfers (one legend group per framework), crossovers
    as markers on their curves; hover names the framework, the size and the speedup.
    Frameworks are named as the answer names them (:func:`gpubench.backends.reader_name`)."""
    from gpubench.backends import reader_name

    colors = palette(len(set(lines["backend"])))
    data: list[Spec] = []
    for i, backend, parts, c in overview_series(lines, crossovers):
        b = reader_name(backend)
        for transfers, s in parts:
            how = ("on the device" if not transfers else "+ transfers, measured"
                   if bool(s["measured"].all()) else "+ transfers, estimated")
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"{b}, {how}",
                         "legendgroup": b, "x": nums(s["size_key"]), "y": nums(s["speedup"]),
                         "line": {"color": colors[i], "width": 2.2 if not transfers else 1.5,
                                  "dash": "dash" if transfers else "solid"},
                         "marker": {"color": colors[i], "size": 6 if not transfers else 4,
                                    "symbol": SYMBOLS[i % len(SYMBOLS)]},
                         "hovertemplate": f"{_h(b)}, {_h(how)}<br>%{{x:,}} elements<br>"
                         f"%{{y:.3g}}× {_h(reference)}<extra></extra>"})
        if len(c):
            data.append({"type": "scatter", "mode": "markers", "legendgroup": b,
                         "showlegend": False, "name": f"{b} crossover",
                         "x": nums(c["size"]), "y": nums(c["speedup"]),
                         "text": [("with host transfers: " if t else "on the device: ")
                                  + str(x) for t, x in zip(c["transfers"], c["text"],
                                                           strict=True)],
                         "marker": {"color": colors[i], "size": 11, "symbol": "x",
                                    "line": {"color": "black", "width": 1}},
                         "hovertemplate": f"{_h(b)} crossover<br>%{{text}}<extra></extra>"})
    sizes = lines["size_key"].to_numpy(float)
    speed = np.r_[lines["speedup"].to_numpy(float), 1.0]
    shapes = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": 1,
               "y1": 1, "line": {"color": "black", "width": 1}}]
    layout = _layout(title, 400, shapes=shapes,
                     margin={"l": 60, "r": 10, "t": 34, "b": 46})
    layout["title"]["font"]["size"] = 13
    layout["title"]["x"] = 0.02
    layout["title"]["xanchor"] = "left"
    layout["legend"] = {"font": {"size": 10}, "itemclick": "toggle",
                        "itemdoubleclick": "toggleothers", "x": 1.01, "y": 1,
                        "xanchor": "left", "yanchor": "top", "tracegroupgap": 4}
    layout["xaxis"] = _size_axis("problem size (elements, log scale)", sizes)
    layout["yaxis"] = _log_axis(f"× {reference}, log scale", speed)
    return spec(data, layout)


# -- roofline (sections/ceilings.py: roofline_figure) --------------------------------------


def roofline_figure(points: pd.DataFrame, title: str, bw_gbps: float,
                    compute: Sequence[tuple[str, float]]) -> Spec:
    """Achieved GFLOP/s against arithmetic intensity under the measured roofs: one trace
    per kernel, framework and dtype (colour: kernel; marker: framework; open: float64)."""
    kernels = sorted(set(points["kernel"]), key=lambda k: (kernel_order(k), k))
    frameworks = sorted(set(points["framework"]))
    colors = palette(len(kernels))
    data: list[Spec] = []
    for (kernel, framework, dtype), grp in points.groupby(["kernel", "framework", "dtype"],
                                                           sort=True):
        ki, fi = kernels.index(kernel), frameworks.index(framework)
        symbol = SYMBOLS[fi % len(SYMBOLS)] + ("-open" if dtype == "float64" else "")
        data.append({"type": "scatter", "mode": "markers",
                     "name": f"{kernel} · {framework} · {dtype}",
                     "x": nums(grp["ai"]), "y": nums(grp["gflops"]),
                     "text": [str(t) for t in grp["label"]],
                     "marker": {"color": colors[ki], "size": 9, "symbol": symbol,
                                "opacity": 0.85, "line": {"color": colors[ki], "width": 1.5}},
                     "hovertemplate": f"%{{text}}<br>{_h(kernel)}, {_h(dtype)}<br>"
                     "%{x:.3g} flop/byte<br>%{y:,.4g} GFLOP/s<extra></extra>"})
    ai = points["ai"].to_numpy(float)
    lo = min(np.nanmin(ai), 0.05) / 2
    top_c = max([c for _, c in compute] or [points["gflops"].max()])
    hi = max(np.nanmax(ai) * 2, (top_c / bw_gbps * 4) if bw_gbps else np.nanmax(ai) * 2)
    if bw_gbps:
        # straight lines on log-log axes: the corners are enough
        for j, (name, peak) in enumerate(compute):
            ridge = min(max(peak / bw_gbps, lo), hi)
            xs = [lo, ridge, hi]
            data.append({"type": "scatter", "mode": "lines",
                         "name": f"roof: {name} {peak:,.0f} GFLOP/s", "x": nums(xs),
                         "y": nums([min(x * bw_gbps, peak) for x in xs]),
                         "line": {"color": "black", "width": 1.4,
                                  "dash": ("solid", "dash", "dot")[j % 3]},
                         "hovertemplate": f"{_h(name)} roof<br>%{{x:.3g}} flop/byte<br>"
                         "%{y:,.4g} GFLOP/s<extra></extra>"})
        if not compute:
            data.append({"type": "scatter", "mode": "lines",
                         "name": f"bandwidth {bw_gbps:,.0f} GB/s", "x": nums([lo, hi]),
                         "y": nums([lo * bw_gbps, hi * bw_gbps]),
                         "line": {"color": "black", "width": 1.4},
                         "hovertemplate": "%{x:.3g} flop/byte<br>%{y:,.4g} GFLOP/s"
                         "<extra>bandwidth roof</extra>"})
    layout = _layout(title, 560)
    layout["xaxis"] = _log_axis("arithmetic intensity (counted flops / counted bytes, log "
                                "scale)", [lo, hi],
                                range=[num(math.log10(lo)), num(math.log10(hi))])
    layout["yaxis"] = _log_axis("achieved GFLOP/s (log scale)",
                                np.r_[points["gflops"].to_numpy(float), top_c])
    return spec(data, layout)


# -- first call (sections/first_call.py: first_call_figure) --------------------------------


def first_call_figure(data: pd.DataFrame) -> Spec:
    """Per backend, box plots of first-call times and of timed-call medians."""
    backends = sorted(set(data["backend"]))
    traces = []
    for col, name, color in (("median_s", "timed-call median (own timer)", "#92c5de"),
                             ("first_call_s", "first call (host clock, with compilation)",
                              "#f4a582")):
        rows = data[data[col].notna()].sort_values(["backend", col], kind="mergesort")
        traces.append({"type": "box", "orientation": "h", "name": name,
                       "x": nums(rows[col]), "y": [str(b) for b in rows["backend"]],
                       "fillcolor": color, "line": {"color": "#333", "width": 1},
                       "marker": {"color": "#333", "size": 3}, "boxpoints": "outliers",
                       "hovertemplate": "%{y}<br>%{x:.3s}s<extra>" + _h(name)
                       + "</extra>"})
    layout = _layout("first call (orange, host clock, includes compilation) vs timed-call "
                     "median on each row's own timer (blue)", 40 * len(backends) + 170,
                     boxmode="group", legend=_bottom_legend(2))
    layout["title"]["font"]["size"] = 13
    layout["margin"] = {"l": 150, "r": 20, "t": 60, "b": 40}
    layout["xaxis"] = _log_axis("seconds (log scale)",
                                np.r_[data["first_call_s"].to_numpy(float),
                                      data["median_s"].to_numpy(float)])
    layout["yaxis"] = {"type": "category", "categoryorder": "array",
                       "categoryarray": backends[::-1], "showline": True,
                       "linecolor": "#444", "mirror": True}
    return spec(traces, layout)


# -- MPI (mpi.scaling_figure, mpi.message_figure) ------------------------------------------


def _mpi_lines(data: pd.DataFrame, x: str, ys: Sequence[tuple[str, str, str]],
               dashed: str = "") -> list[Spec]:
    """One trace per label and panel, the same colour and marker in both, one legend
    entry per label (it hides the label in both panels)."""
    labels = sorted(set(data["label"]))
    colors = palette(len(labels))
    out: list[Spec] = []
    for i, lab in enumerate(labels):
        s = data[data["label"] == lab].sort_values(x)
        dash = "dash" if dashed and dashed in lab else "solid"
        for j, (col, axis, hover) in enumerate(ys):
            out.append({"type": "scatter", "mode": "lines+markers", "name": lab,
                        "legendgroup": lab, "showlegend": j == 0,
                        "x": nums(s[x]), "y": nums(s[col]), "xaxis": f"x{axis}",
                        "yaxis": f"y{axis}",
                        "line": {"color": colors[i], "width": 1.6, "dash": dash},
                        "marker": {"color": colors[i], "size": 6,
                                   "symbol": SYMBOLS[i % len(SYMBOLS)]},
                        "hovertemplate": f"{_h(lab)}<br>{hover}<extra></extra>"})
    return out


def _two_panel_layout(title: str, left: str, right: str, n_labels: int) -> Spec:
    layout = _layout(title, 500 + 22 * ((n_labels + 1) // 2),
                     legend=_bottom_legend(n_labels),
                     annotations=[_annotation(left, 0.225), _annotation(right, 0.775)])
    layout["margin"] = {"l": 70, "r": 20, "t": 80, "b": 40}
    return layout


def mpi_scaling_figure(data: pd.DataFrame) -> Spec:
    """Speedup and parallel efficiency against ranks, one line per job/backend/mode."""
    traces = _mpi_lines(data, "ranks", [
        ("speedup", "", "%{x} ranks<br>speedup %{y:.3g}×"),
        ("efficiency", "2", "%{x} ranks<br>efficiency %{y:.3f}")])
    ranks = [int(r) for r in np.unique(data["ranks"].to_numpy(float))]
    traces.append({"type": "scatter", "mode": "lines", "name": "ideal", "x": ranks,
                   "y": ranks, "xaxis": "x", "yaxis": "y",
                   "line": {"color": "black", "width": 1, "dash": "dot"},
                   "hovertemplate": "ideal: %{y}× at %{x} ranks<extra></extra>"})
    layout = _two_panel_layout("MPI scaling at the largest size of each job",
                               "speedup (strong scaling; weak: time ratio)",
                               "efficiency (1 = ideal)", data["label"].nunique() + 1)
    for suffix, dom in (("", [0, 0.45]), ("2", [0.55, 1])):
        layout[f"xaxis{suffix}"] = _log_axis("MPI ranks (log scale)", None, domain=dom,
                                             anchor=f"y{suffix}", tickvals=ranks,
                                             ticktext=[str(r) for r in ranks])
    lin = {"showline": True, "linecolor": "#444", "mirror": True, "ticks": "outside",
           "gridcolor": "#e3e3e3"}
    layout["yaxis"] = {"title": {"text": "speedup over 1 rank"}, "anchor": "x", **lin}
    layout["yaxis2"] = {"title": {"text": "parallel efficiency"}, "anchor": "x2", **lin}
    layout["shapes"] = [{"type": "line", "xref": "x2 domain", "x0": 0, "x1": 1, "yref": "y2",
                         "y0": 1, "y1": 1, "line": {"color": "black", "width": 1,
                                                     "dash": "dot"}}]
    return spec(traces, layout)


def message_figure(data: pd.DataFrame) -> Spec:
    """Latency (p2p) and bandwidth (p2p algorithm, allreduce bus) against message size."""
    data = data.assign(
        lat=data["latency_us"].where(data["latency_us"].notna(), data["median_s"] * 1e6),
        bw=data["bus_gbps"].where(data["bus_gbps"].notna(), data["gbps"]))
    traces = _mpi_lines(data, "size", [
        ("lat", "", "%{x:,} bytes<br>latency %{y:.4g} µs"),
        ("bw", "2", "%{x:,} bytes<br>%{y:.4g} GB/s")], dashed="staged")
    sizes = data["size"].to_numpy(float)
    layout = _two_panel_layout("MPI point-to-point and allreduce (dashed: staged through the "
                               "host)", "latency (lower is better)",
                               "bandwidth (higher is better)", data["label"].nunique())
    layout["xaxis"] = _log_axis("message size (bytes, log scale)", sizes, domain=[0, 0.45],
                                anchor="y")
    layout["xaxis2"] = _log_axis("message size (bytes, log scale)", sizes,
                                 domain=[0.55, 1], anchor="y2")
    layout["yaxis"] = _log_axis("latency (µs, log scale)", data["lat"], anchor="x")
    bw = data["bw"].to_numpy(float)
    layout["yaxis2"] = (_log_axis("bandwidth (GB/s; allreduce: bus bandwidth)", bw,
                                  anchor="x2") if np.isfinite(bw).any() else
                        {"title": {"text": "bandwidth (GB/s; allreduce: bus bandwidth)"},
                         "anchor": "x2"})
    return spec(traces, layout)


# -- run-vs-run (compare.ratio_figure) -----------------------------------------------------


def ratio_figure(data: pd.DataFrame, base_label: str, new_label: str) -> Spec:
    """Ratio new/base per measurement, one column per backend, one trace per label."""
    backends = sorted(set(data["backend"]))
    xs = np.zeros(len(data))
    for bi, backend in enumerate(backends):
        idx = np.flatnonzero((data["backend"] == backend).to_numpy())
        offs = ((np.arange(len(idx)) / max(len(idx) - 1, 1) - 0.5) * 0.6
                if len(idx) > 1 else np.zeros(1))
        xs[idx] = bi + offs
    traces = []
    for lab in (stats.SLOWER, stats.FASTER, stats.SAME, stats.UNRESOLVED):
        sel = (data["label"] == lab).to_numpy()
        if not sel.any():
            continue
        traces.append({"type": "scatter", "mode": "markers", "name": lab,
                       "x": nums(xs[sel]), "y": nums(data.loc[sel, "ratio"]),
                       "text": [str(b) for b in data.loc[sel, "backend"]],
                       "marker": {"color": LABEL_COLORS[lab], "size": 6, "opacity": 0.7},
                       "hovertemplate": "%{text}<br>new/base %{y:.3g}<extra>" + lab
                       + "</extra>"})
    layout = _layout(f"{new_label} / {base_label}, every shared ok measurement (below 1: "
                     "new is faster)", 480,
                     shapes=[{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                              "y0": 1, "y1": 1, "line": {"color": "black", "width": 1}}])
    layout["title"]["font"]["size"] = 13
    layout["xaxis"] = {"tickvals": list(range(len(backends))), "ticktext": backends,
                       "range": [-0.6, len(backends) - 0.4], "tickangle": -20,
                       "showgrid": False, "zeroline": False, "showline": True,
                       "linecolor": "#444", "mirror": True}
    layout["yaxis"] = _log_axis("time new / base (log scale)",
                                np.r_[data["ratio"].to_numpy(float), 0.9, 1.1],
                                exponentformat="none")
    return spec(traces, layout)


#: the class figure's ticks (time ratios)
CLASS_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25,
               1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def class_xlim(data: pd.DataFrame) -> tuple[float, float]:
    """The class figure's x range: the middle halves, means and predictions (and 1),
    widened by a quarter; the full ranges may run past it (a few outliers would
    otherwise squeeze what the figure is for)."""
    cols = [c for c in ("q1", "q3", "geomean", "expected", "large") if c in data]
    v = np.r_[data[cols].to_numpy(float).ravel(), 0.9, 1.1]
    v = v[np.isfinite(v) & (v > 0)]
    return float(v.min() / 1.25), float(v.max() * 1.25)


def class_figure(data: pd.DataFrame, base_label: str, new_label: str) -> Spec:
    """Per class: GPU time new / base (geometric mean, middle half, range) and the ratio
    the measured ceilings predict (the twin of ``compare.class_figure``)."""
    n = len(data)
    y = list(range(n))[::-1]
    labels = [str(c) for c in data["cls"]]

    def segments(lo: str, hi: str) -> tuple[list[Any], list[Any]]:
        xs: list[Any] = []
        ys: list[Any] = []
        for yi, a, b in zip(y, data[lo], data[hi], strict=True):
            xs += [num(a), num(b), None]
            ys += [yi, yi, None]
        return xs, ys

    traces = []
    for name, (lo, hi), width, color in (("range", ("lo", "hi"), 1, "#bbbbbb"),
                                         ("middle half", ("q1", "q3"), 8, "#9fbddc")):
        xs, ys = segments(lo, hi)
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": xs, "y": ys,
                       "line": {"color": color, "width": width}, "hoverinfo": "skip"})
    traces.append({"type": "scatter", "mode": "markers", "name": "geometric mean",
                   "x": nums(data["geomean"]), "y": y, "text": labels,
                   "marker": {"color": "#2166ac", "size": 10},
                   "hovertemplate": "%{text}<br>new/base %{x:.3g}<extra></extra>"})
    traces.append({"type": "scatter", "mode": "markers", "name": "large sizes only",
                   "x": nums(data["large"]), "y": y, "text": labels,
                   "marker": {"color": "#1b7837", "size": 9, "symbol": "triangle-up"},
                   "hovertemplate": "%{text}<br>large sizes %{x:.3g}<extra></extra>"})
    traces.append({"type": "scatter", "mode": "markers", "name": "predicted by the ceilings",
                   "x": nums(data["expected"]), "y": y,
                   "text": [f"{c}: {b}" for c, b in zip(labels, data["bound"], strict=True)],
                   "marker": {"color": "#b2182b", "size": 9, "symbol": "diamond-open"},
                   "hovertemplate": "%{text}<br>predicted %{x:.3g}<extra></extra>"})
    layout = _layout(f"{new_label} / {base_label}: like-for-like GPU cases per class",
                     150 + 34 * n,
                     shapes=[{"type": "line", "yref": "paper", "y0": 0, "y1": 1, "xref": "x",
                              "x0": 1, "x1": 1, "line": {"color": "black", "width": 1}}])
    layout["title"]["font"]["size"] = 13
    layout["margin"] = {"l": 175, "r": 20, "t": 40, "b": 45}
    lo, hi = class_xlim(data)
    layout["xaxis"] = _log_axis("GPU time new / base (log scale; below 1: new is faster; "
                                "ranges cut at the axis)", np.r_[lo, hi],
                                exponentformat="none", range=[num(math.log10(lo)),
                                                              num(math.log10(hi))])
    ticks = [t for t in CLASS_TICKS if lo <= t <= hi]
    layout["xaxis"].pop("dtick", None)
    layout["xaxis"].update(tickvals=ticks, ticktext=[f"{t:g}×" for t in ticks])
    layout["yaxis"] = {"tickvals": y, "ticktext": labels, "range": [-0.6, n - 0.4],
                       "showgrid": False, "zeroline": False, "showline": True,
                       "linecolor": "#444", "mirror": True}
    return spec(traces, layout)


#: the drawing function's ``__name__`` (module-qualified where two share it) to builder
BUILDERS: dict[str, Callable[..., Spec]] = {
    "scaling_figure": scaling_figure,
    "mpi.scaling_figure": mpi_scaling_figure,
    "speedup_figure": speedup_figure,
    "overview_figure": overview_figure,
    "roofline_figure": roofline_figure,
    "first_call_figure": first_call_figure,
    "message_figure": message_figure,
    "ratio_figure": ratio_figure,
    "class_figure": class_figure,
}


def builder_for(fn: Callable[..., Any]) -> Callable[..., Spec] | None:
    """The builder of a drawing function: by ``module.name``, then by name. None when
    there is none or its parameters are not the function's (a drawing function changed
    or moved without its twin): the page then shows that figure's PNG."""
    module = getattr(fn, "__module__", "").rsplit(".", 1)[-1]
    name = getattr(fn, "__name__", "")
    builder = BUILDERS.get(f"{module}.{name}") or BUILDERS.get(name)
    if builder is None or _params(builder) != _params(fn):
        return None
    return builder


@functools.cache
def _params(fn: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)
