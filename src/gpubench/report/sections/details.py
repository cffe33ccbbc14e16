"""Per-kernel results on demand: the rows behind every per-kernel figure, embedded once
as JSON, and selectors (kernel, variant, dtype, framework, clock) that draw one figure
and one table at a time in the browser.

A page with a figure and a table per kernel, variant, dtype and mode grows with the
suite (the full suite's page had 90 such tables and over 50 figures, most of its 7 MB,
and took seconds to open); one figure drawn on demand costs the same whatever the
suite. The numbers the figure plots are raw; the table's cells are formatted here, by
the same functions as the rest of the report, so a time reads "12.3 µs" on every page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from gpubench.backends import reader_name
from gpubench.report.base import (
    _finite,
    _kernel_spec,
    _ordered,
    _series_order,
    _sort_rows,
    fmt_int,
    fmt_speedup,
    fmt_threads,
    fmt_time,
)
from gpubench.report.render import Markup
from gpubench.spec import kernel_names

#: the clocks the selector offers: (key, label, short label for the table's header,
#: median, q1, q3 column of the prepared rows)
CLOCKS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("caller", "caller's clock, pipelined (CPU: wall)", "pipelined", "caller_s", "caller_q1",
     "caller_q3"),
    ("sync", "caller's clock, synchronised each call", "sync", "sync_s", "sync_q1_s",
     "sync_q3_s"),
    ("device", "device clock (the row's own timer)", "device", "median_s", "q1_s", "q3_s"),
)

#: the table's columns after the time on the chosen clock (see :func:`_cells`)
HEADERS = ("backend", "implementation", "threads", "mode", "size", "median", "q1–q3",
           "timer", "spread", "samples", "first call", "throughput", "% of ceiling",
           "× NumPy (caller)", "rel_err", "status")
#: right-aligned columns (the sort reads their units)
NUMERIC = frozenset({"threads", "size", "median", "q1–q3", "spread", "samples",
                     "first call", "throughput", "% of ceiling",
                     "× NumPy (caller)", "rel_err"})


def fmt_rate(value: Any, unit: str) -> str:
    """A throughput in plain digits with its unit: three significant digits, thousands
    separated ("1,230 GB/s", "0.0456 GFLOP/s"), never an exponent."""
    if not _finite(value):
        return "—"
    x = float(f"{float(value):.3g}")
    if x == 0:
        return f"0 {unit}".strip()
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f} {unit}".strip()


def _pct_cell(pct: float) -> str:
    """% of ceiling; above :data:`gpubench.devices.FLAG_ABOVE_PCT` marked, pointing at
    the ceilings section's flagged rows, where the reason is."""
    from gpubench.devices import FLAG_ABOVE_PCT

    text = f"{float(pct):.1f}"
    return f"{text} ⚑ flagged (see Flagged)" if float(pct) > FLAG_ABOVE_PCT else text


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_error(value: Any) -> str:
    """A relative error as a reader writes it: "1.19×10⁻⁷", "0" (never "1.19e-07")."""
    if not _finite(value):
        return "—"
    x = float(value)
    if x == 0:
        return "0"
    exp = math.floor(math.log10(abs(x)))
    mant = round(x / 10.0**exp, 2)
    if abs(mant) >= 10:  # rounding carried into the next decade
        mant, exp = mant / 10, exp + 1
    if -2 <= exp <= 2:
        return f"{x:.3g}"
    return f"{mant:.2f}×10{str(exp).translate(_SUPERSCRIPT)}"


def _num(value: Any) -> float | None:
    """A JSON number (rounded to 6 significant digits: the same data, the same bytes),
    or null."""
    return float(f"{float(value):.6g}") if _finite(value) else None


def _time_range(q1: Any, q3: Any) -> str:
    return f"{fmt_time(q1)} – {fmt_time(q3)}" if _finite(q1) and _finite(q3) else "—"


@dataclass
class Details:
    """The section's data: ``payload`` the JSON the page embeds, ``kernels`` the kernel
    names in the selector's order, ``csv_name`` the rows file beside the page ("": none
    written)."""

    payload: str
    kernels: list[str]
    csv_name: str = ""
    n_rows: int = 0


def build(df: pd.DataFrame, csv_name: str = "") -> Details:
    """Every kernel's measured rows as the detail view's JSON: per case (kernel, variant,
    dtype) its title and units, per row the numbers the figure plots on each clock and
    the table's formatted cells. Rows are in the report's table order."""
    kernels = _ordered(df["kernel"], kernel_names())
    rows = df[df["status"].isin(["ok", "wrong_result"])]
    backends = sorted(set(rows["backend"]))
    # the legend's order: backend, implementation, thread count (as the PNGs')
    series = _series_order(rows[rows["status"] == "ok"]) if len(rows) else []
    series += sorted(set(rows["series"]) - set(series))
    cases: list[dict[str, Any]] = []
    out: list[list[Any]] = []
    for kernel in kernels:
        spec = _kernel_spec(kernel)
        k = df[df["kernel"] == kernel]
        meaning = spec.size_meaning if spec else ""
        description = (spec.description.rstrip(".") if spec and spec.description else
                       "" if spec else "not a kernel this version of gpubench knows")
        for variant in _ordered(k["variant"], spec.variants if spec else ()):
            kv = k[k["variant"] == variant]
            for dtype in _ordered(kv["dtype"], spec.dtypes if spec else ()):
                g = kv[kv["dtype"] == dtype]
                shown = rows[(rows["kernel"] == kernel) & (rows["variant"] == variant)
                             & (rows["dtype"] == dtype)]
                unit = str(g["unit"].iloc[0])
                cases.append({
                    "kernel": kernel, "variant": variant, "dtype": dtype,
                    "title": f"{kernel} · {variant} · {dtype}", "unit": unit,
                    "xlabel": (f"problem size ({meaning}, log scale)" if meaning
                               else "problem size (log scale)"),
                    "description": description,
                    "not_run": int(len(g) - (g["status"].isin(["ok", "wrong_result"])).sum()),
                })
                index = len(cases) - 1
                for r in _sort_rows(shown).to_dict("records"):
                    out.append(_row(index, backends.index(r["backend"]),
                                    series.index(r["series"]), r, unit))
    data = {
        "clocks": [[key, label, short] for key, label, short, *_ in CLOCKS],
        "series": series,
        "headers": list(HEADERS), "numeric": [h in NUMERIC for h in HEADERS],
        "backends": [[b, reader_name(b), _device(b, rows)] for b in backends],
        "cases": cases,
        # per row: case, backend, series (index), mode, size, throughput (ok rows),
        # implementation, threads and size as text, per clock [median, q1, q3, median
        # text, q1–q3 text], the table's other cells, and rel_err as a number (the
        # table sorts its column by it)
        "rows": out,
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      allow_nan=False)
    # inside <script>, no "<" at all: "</script" would end it, "<!--" change how the
    # browser finds its end; JSON reads the escapes back as the same text
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return Details(text, kernels, csv_name, len(out))


def _device(backend: str, rows: pd.DataFrame) -> str:
    devices = sorted(set(rows.loc[rows["backend"] == backend, "device"]))
    return devices[0] if len(devices) == 1 else "/".join(devices)


def _row(case: int, backend: int, line: int, r: dict[str, Any], unit: str) -> list[Any]:
    ok = r["status"] == "ok"
    clocks = []
    for *_names, med, q1, q3 in CLOCKS:
        if med == "sync_s" and r["device"] != "gpu":  # a CPU call is synchronous
            med, q1, q3 = "caller_s", "caller_q1", "caller_q3"
        clocks.append([_num(r[med]), _num(r[q1]), _num(r[q3]), fmt_time(r[med]),
                       _time_range(r[q1], r[q3])])
    cells = [
        str(r["timer"]) or "—",
        f"{100 * float(r['rel_spread']):.1f} %" if _finite(r["rel_spread"]) else "—",
        fmt_int(r["samples"]), fmt_time(r["first_call_s"]),
        fmt_rate(r["throughput"], unit) if ok else "—",
        _pct_cell(r["pct_of_ceiling"]) if ok and _finite(r["pct_of_ceiling"]) else "—",
        fmt_speedup(r["speedup"]), fmt_error(r["rel_err"]), str(r["status"]),
    ]
    return [case, backend, line, str(r["mode"]), int(r["size_key"]),
            _num(r["throughput"]) if ok else None, str(r["implementation"]),
            fmt_threads(r["threads_key"]), fmt_int(r["size_key"]), clocks, cells,
            _num(r["rel_err"])]


def rows_csv_name(html: str | Path) -> str:
    """The rows file written beside a page: ``<page stem>-rows.csv``."""
    return f"{Path(html).stem}-rows.csv"


def write_rows_csv(df: pd.DataFrame, columns: Sequence[str], path: str | Path) -> None:
    """Every row of the timings file as the report read it (its own columns, in the
    report's row order; a CPU row's caller's clock filled from its wall time, as the
    tables show it): the download behind the detail view's table."""
    from gpubench.files import atomic_write_text

    atomic_write_text(path, df[[c for c in columns if c in df.columns]].to_csv(
        index=False, lineterminator="\n"))


#: the detail view in the browser: fills the selectors from the embedded data, draws the
#: chosen case's table and figure. plotly.js takes seconds to compile after the page
#: opens, so until it is ready the figure is a light inline SVG of the same lines (log
#: axes, decade ticks, a legend; no bars or hover), drawn at once and replaced by the
#: interactive figure when plotly.js is ready. ``window.gpubenchDetails.show(state)``
#: selects and returns a promise that resolves once the interactive figure is drawn
#: (``drawn``); ``shown`` resolves once a figure of the choice is on the page, SVG or
#: interactive (the browser test and tools/report_speed.py use both). Each leaves a
#: performance mark: ``gpubench-detail-sketch``, ``gpubench-detail-drawn``.
DETAILS_JS = r"""
(function () {
  var data, ui = {}, state = {}, drawn = Promise.resolve(), shown = drawn, generation = 0;
  // SVG's namespace, as the HTML parser gives it (the page names no URL of its own)
  var probe = document.createElement("div");
  probe.innerHTML = "<svg></svg>";
  var SVG = probe.firstChild.namespaceURI;
  var SYMBOLS = ["circle", "square", "triangle-up", "diamond", "triangle-down",
                 "triangle-left", "triangle-right", "pentagon", "hexagon", "star"];
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
                "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354"];
  function opts(select, items, keep) {
    select.textContent = "";
    items.forEach(function (it) {
      var o = document.createElement("option"); o.value = it[0]; o.textContent = it[1];
      select.appendChild(o);
    });
    select.value = items.some(function (it) { return it[0] === keep; }) ? keep :
      (items.length ? items[0][0] : "");
  }
  function uniq(list) { return list.filter(function (x, i) { return list.indexOf(x) === i; }); }
  function caseOf() {
    for (var i = 0; i < data.cases.length; i++) {
      var c = data.cases[i];
      if (c.kernel === state.kernel && c.variant === state.variant && c.dtype === state.dtype)
        return i;
    }
    return -1;
  }
  function keep(row) {
    var b = data.backends[row[1]], f = state.framework;
    return f === "all" || f === "device:" + b[2] || f === b[0];
  }
  function fill() {
    var cs = data.cases;
    opts(ui.kernel, uniq(cs.map(function (c) { return c.kernel; })).map(
      function (k) { return [k, k]; }), state.kernel);
    state.kernel = ui.kernel.value;
    var ofK = cs.filter(function (c) { return c.kernel === state.kernel; });
    opts(ui.variant, uniq(ofK.map(function (c) { return c.variant; })).map(
      function (v) { return [v, v]; }), state.variant);
    state.variant = ui.variant.value;
    opts(ui.dtype, uniq(ofK.filter(function (c) { return c.variant === state.variant; })
      .map(function (c) { return c.dtype; })).map(function (d) { return [d, d]; }),
      state.dtype);
    state.dtype = ui.dtype.value;
    var idx = caseOf(), present = {};
    data.rows.forEach(function (r) { if (r[0] === idx) present[r[1]] = true; });
    var fw = [["all", "every framework"]], devs = [];
    data.backends.forEach(function (b, i) {
      if (present[i] && devs.indexOf(b[2]) < 0) devs.push(b[2]);
    });
    devs.sort().forEach(function (d) { fw.push(["device:" + d, "every " + d.toUpperCase() +
                                                 " framework"]); });
    data.backends.forEach(function (b, i) { if (present[i]) fw.push([b[0], b[1]]); });
    opts(ui.framework, fw, state.framework);
    state.framework = ui.framework.value;
    opts(ui.clock, data.clocks, state.clock);
    state.clock = ui.clock.value;
  }
  function table(idx, clock) {
    var t = document.createElement("table"), head = t.createTHead().insertRow();
    t.className = "sortable";
    data.headers.forEach(function (h, i) {
      var th = document.createElement("th");
      th.textContent = h === "median" || h === "q1–q3" ?
        h + " (" + data.clocks[clock][2] + ")" : h;
      th.tabIndex = 0; th.title = "sort by this column"; head.appendChild(th);
    });
    var body = t.createTBody(), n = 0, relErr = data.headers.indexOf("rel_err");
    data.rows.forEach(function (r) {
      if (r[0] !== idx || !keep(r)) return;
      var c = r[9][clock], b = data.backends[r[1]];
      var cells = [b[0], r[6], r[7], r[3], r[8], c[3], c[4]].concat(r[10]);
      var tr = body.insertRow(); n++;
      if (r[10][8] !== "ok") tr.className = "bad";
      cells.forEach(function (v, i) {
        var td = tr.insertCell(); td.textContent = v;
        if (data.numeric[i]) td.className = "num";
        if (i === relErr && r[11] !== null) td.setAttribute("data-sort", String(r[11]));
      });
    });
    return [t, n];
  }
  function figure(idx, clock) {
    var c = data.cases[idx], rows = data.rows.filter(function (r) {
      return r[0] === idx && keep(r) && r[10][8] === "ok"; });
    var series = uniq(rows.map(function (r) { return r[2]; })).sort(
      function (a, b) { return a - b; });
    var modes = uniq(rows.map(function (r) { return r[3]; })).sort(function (a, b) {
      return (a !== "hot") - (b !== "hot") || (a < b ? -1 : a > b ? 1 : 0); });
    var traces = [];
    series.forEach(function (line, i) {
      var name = data.series[line], color = COLORS[i % COLORS.length],
          symbol = SYMBOLS[i % SYMBOLS.length], first = true;
      modes.forEach(function (mode) {
        var s = rows.filter(function (r) { return r[2] === line && r[3] === mode; })
          .sort(function (a, b) { return a[4] - b[4]; });
        if (!s.length) return;
        var cold = mode === "cold", label = modes.length > 1 ? name + " (" + mode + ")" : name;
        var common = {type: "scatter", mode: "lines+markers", name: name, legendgroup: name,
          line: {color: color, width: 1.6, dash: cold ? "dot" : "solid"},
          marker: {color: color, size: 6, symbol: symbol + (cold ? "-open" : "")}};
        var t = s.filter(function (r) { return r[9][clock][0] !== null; });
        if (t.length) {
          traces.push(Object.assign({}, common, {x: t.map(function (r) { return r[4]; }),
            y: t.map(function (r) { return r[9][clock][0]; }), xaxis: "x", yaxis: "y",
            showlegend: first, error_y: {type: "data", symmetric: false, color: color,
              thickness: 1, width: 0,
              array: t.map(function (r) { var m = r[9][clock];
                return m[2] === null ? 0 : Math.max(0, m[2] - m[0]); }),
              arrayminus: t.map(function (r) { var m = r[9][clock];
                return m[1] === null ? 0 : Math.min(0.999 * m[0], Math.max(0, m[0] - m[1])); })},
            hovertemplate: label.replace(/</g, "&lt;") + "<br>size %{x:,}<br>median " +
              "%{y:.3s}s per call<extra></extra>"}));
          first = false;
        }
        var h = s.filter(function (r) { return r[5] !== null; });
        if (h.length) {
          traces.push(Object.assign({}, common, {x: h.map(function (r) { return r[4]; }),
            y: h.map(function (r) { return r[5]; }), xaxis: "x2", yaxis: "y2",
            showlegend: first, hovertemplate: label.replace(/</g, "&lt;") +
              "<br>size %{x:,}<br>%{y:.4g} " + c.unit + "<extra></extra>"}));
          first = false;
        }
      });
    });
    var ax = function (title, domain, anchor) { return {type: "log", title: {text: title},
      domain: domain, anchor: anchor, exponentformat: "power", gridcolor: "#e5e5e5"}; };
    var note = function (text, x) { return {text: text, x: x, y: 1.02, xref: "paper",
      yref: "paper", showarrow: false, xanchor: "center", yanchor: "bottom"}; };
    var layout = {title: {text: c.title, x: 0.5}, height: 520 + 22 * Math.ceil(series.length / 3),
      margin: {l: 70, r: 20, t: 80, b: 40}, plot_bgcolor: "white",
      legend: {orientation: "h", y: -0.18, x: 0, font: {size: 11}},
      xaxis: ax(c.xlabel, [0, 0.45], "y"), xaxis2: ax(c.xlabel, [0.55, 1], "y2"),
      yaxis: ax("median s per call (log)", null, "x"),
      yaxis2: ax("throughput (" + c.unit + ", log scale)", null, "x2"),
      annotations: [note(data.clocks[clock][1] + " (bars: q1–q3)", 0.225),
                    note("throughput on the device clock (" + c.unit + ", higher is better)",
                         0.775)]};
    delete layout.yaxis.domain; delete layout.yaxis2.domain;
    if (modes.length > 1) layout.annotations.push(Object.assign(note(
      "solid line, filled marker: hot; dotted, open: cold", 0.5), {y: 1.08}));
    if (!traces.length) layout.annotations.push({text: "no successful measurement here",
      x: 0.5, y: 0.5, xref: "paper", yref: "paper", showarrow: false});
    return [traces, layout];
  }
  function el(name, attrs, parent, text) {
    var e = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function power(k) {  // 10⁻⁶, as the interactive figure writes its ticks
    return "10" + String(k).replace(/./g, function (ch) {
      return "⁻⁰¹²³⁴⁵⁶⁷⁸⁹".charAt("-0123456789".indexOf(ch)); });
  }
  function logRange(values) {
    var v = values.filter(function (x) { return x > 0 && isFinite(x); });
    if (!v.length) return null;
    var lo = Math.floor(Math.log10(Math.min.apply(null, v))),
        hi = Math.ceil(Math.log10(Math.max.apply(null, v)));
    return [lo, hi > lo ? hi : lo + 1];
  }
  // the figure's traces as plain SVG, while plotly.js compiles: the same lines, colours
  // and dashes on the same log axes, drawn in milliseconds by the browser alone
  function sketch(traces, layout) {
    var names = [];
    traces.forEach(function (t) { if (t.showlegend) names.push(t); });
    var per = 3, rows = Math.ceil(names.length / per), top = 78, ph = 300,
        W = 1000, H = top + ph + 58 + 18 * rows;
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "detail-sketch");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("style", "display:block;width:100%;max-width:" + W +
                     "px;height:auto;font:12px sans-serif");
    el("text", {x: W / 2, y: 22, "text-anchor": "middle", "font-size": 15}, svg,
       layout.title.text);
    el("text", {x: W - 4, y: 14, "text-anchor": "end", fill: "#888", "font-size": 11}, svg,
       "static preview: the interactive figure follows");
    [["x", "y", 80, 460, 0], ["x2", "y2", 570, 980, 1]].forEach(function (p) {
      var mine = traces.filter(function (t) { return t.xaxis === p[0]; }),
          x0 = p[2], x1 = p[3], y0 = top + ph, y1 = top;
      var xs = [], ys = [];
      mine.forEach(function (t) { xs = xs.concat(t.x); ys = ys.concat(t.y); });
      var note = layout.annotations[p[4]];
      el("text", {x: (x0 + x1) / 2, y: top - 10, "text-anchor": "middle"}, svg, note.text);
      el("rect", {x: x0, y: y1, width: x1 - x0, height: ph, fill: "none",
                  stroke: "#bbb"}, svg);
      var ax = layout["xaxis" + (p[4] ? "2" : "")], ay = layout["yaxis" + (p[4] ? "2" : "")];
      el("text", {x: (x0 + x1) / 2, y: y0 + 40, "text-anchor": "middle"}, svg,
         ax.title.text);
      el("text", {x: 0, y: 0, "text-anchor": "middle", transform: "translate(" +
         (x0 - 58) + "," + (top + ph / 2) + ") rotate(-90)"}, svg, ay.title.text);
      var rx = logRange(xs), ry = logRange(ys);
      if (!rx || !ry) return;
      var sx = function (v) { return x0 + (Math.log10(v) - rx[0]) / (rx[1] - rx[0]) * (x1 - x0); },
          sy = function (v) { return y0 - (Math.log10(v) - ry[0]) / (ry[1] - ry[0]) * ph; };
      var step = function (r) { return Math.max(1, Math.ceil((r[1] - r[0]) / 8)); };
      for (var k = rx[0]; k <= rx[1]; k += step(rx)) {
        el("line", {x1: sx(Math.pow(10, k)), x2: sx(Math.pow(10, k)), y1: y0, y2: y1,
                    stroke: "#e5e5e5"}, svg);
        el("text", {x: sx(Math.pow(10, k)), y: y0 + 16, "text-anchor": "middle"}, svg,
           power(k));
      }
      for (k = ry[0]; k <= ry[1]; k += step(ry)) {
        el("line", {x1: x0, x2: x1, y1: sy(Math.pow(10, k)), y2: sy(Math.pow(10, k)),
                    stroke: "#e5e5e5"}, svg);
        el("text", {x: x0 - 6, y: sy(Math.pow(10, k)) + 4, "text-anchor": "end"}, svg,
           power(k));
      }
      mine.forEach(function (t) {
        var pts = [];
        t.x.forEach(function (x, i) {
          if (x > 0 && t.y[i] > 0) pts.push(sx(x).toFixed(1) + "," + sy(t.y[i]).toFixed(1));
        });
        var g = el("g", {"class": "sketch-line", stroke: t.line.color}, svg);
        el("polyline", {points: pts.join(" "), fill: "none", "stroke-width": 1.6,
                        "stroke-dasharray": t.line.dash === "dot" ? "2,3" : "none"}, g);
        pts.forEach(function (xy) {
          xy = xy.split(",");
          el("circle", {cx: xy[0], cy: xy[1], r: 3, fill: t.line.dash === "dot" ? "white" :
                        t.line.color}, g);
        });
      });
    });
    names.forEach(function (t, i) {
      var x = 80 + (i % per) * 300, y = top + ph + 62 + 18 * Math.floor(i / per);
      el("line", {x1: x, x2: x + 22, y1: y - 4, y2: y - 4, stroke: t.line.color,
                  "stroke-width": 2}, svg);
      el("text", {x: x + 28, y: y}, svg, t.name);
    });
    if (!traces.length) el("text", {x: W / 2, y: top + ph / 2, "text-anchor": "middle"}, svg,
                           "no successful measurement here");
    return svg;
  }
  function render() {
    var idx = caseOf(), clock = 0;
    data.clocks.forEach(function (k, i) { if (k[0] === state.clock) clock = i; });
    var c = data.cases[idx], tn = table(idx, clock);
    ui.about.textContent = c.description ? c.description + "." : "";
    ui.notRun.hidden = !c.not_run;
    ui.notRun.querySelector("span").textContent = c.not_run;
    ui.table.textContent = ""; ui.table.appendChild(tn[0]);
    ui.count.textContent = tn[1] + " row" + (tn[1] === 1 ? "" : "s");
    var fl = figure(idx, clock);
    ui.plot.setAttribute("aria-label", "Log-log plots for " + c.title + ": median time per " +
      "call on the " + data.clocks[clock][1] + " and throughput in " + c.unit +
      " against problem size, one line per series.");
    var mine = ++generation;
    if (typeof window.Plotly === "undefined") {  // not compiled yet: the SVG now
      var old = ui.plot.querySelector(":scope > svg.detail-sketch");
      if (old) ui.plot.removeChild(old);
      ui.plot.appendChild(sketch(fl[0], fl[1]));
      performance.mark("gpubench-detail-sketch");
      shown = Promise.resolve();
    }
    if (!window.gpubenchPlotly) return (drawn = shown);
    // the first screen's figures first: after them, both have long resolved
    drawn = Promise.all([window.gpubenchPlotly, window.gpubenchFirstScreen]).then(function () {
      if (mine !== generation) return;  // chosen again since: that choice draws
      var old = ui.plot.querySelector(":scope > svg.detail-sketch");
      if (old) ui.plot.removeChild(old);
      return Plotly.react(ui.plot, fl[0], fl[1], {displaylogo: false, responsive: true})
        .then(function () { performance.mark("gpubench-detail-drawn"); });
    });
    if (typeof window.Plotly !== "undefined") shown = drawn;
    return drawn;
  }
  function show(next) {
    Object.keys(next || {}).forEach(function (k) { state[k] = next[k]; });
    fill();
    return render();
  }
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.getElementById("gpubench-details-data");
    if (!el) return;
    data = JSON.parse(el.textContent);
    ["kernel", "variant", "dtype", "framework", "clock"].forEach(function (k) {
      ui[k] = document.getElementById("detail-" + k);
      ui[k].addEventListener("change", function () {
        var next = {}; next[k] = ui[k].value; show(next);
      });
    });
    ["plot", "table", "about", "count"].forEach(function (k) {
      ui[k] = document.getElementById("detail-" + k); });
    ui.notRun = document.getElementById("detail-not-run");
    state = {framework: "all", clock: "caller"};
    window.gpubenchDetails = {show: show, state: state,
                              get drawn() { return drawn; }, get shown() { return shown; }};
    fill();
    // the table and the figure's SVG at once; the interactive figure when plotly.js is ready
    show({});
  });
})();
"""


def html_script() -> Markup:
    """The detail view's script, for the page's head."""
    return Markup(f"<script>{DETAILS_JS}</script>\n")
