"""Deterministic figures: interactive on the page, PNG where a static image is needed.

Sections do not draw while the page is assembled: they queue a figure (a plain drawing
function and its arguments) with :func:`~gpubench.report.base.img` and put a placeholder
in the HTML. :meth:`FigureQueue.render` replaces each placeholder with an interactive
Plotly figure built by the drawing function's twin in :mod:`.plots` (its JSON with
sorted keys and rounded floats, so the same data gives the same bytes) and inlines
plotly.js and the table-sorting script once in the page head: the page stays one
offline file. The first screen's figures are inline SVG instead (:func:`svg_of`, drawn
at build time: they show before the 4.8 MB of plotly.js are compiled), and a set of
figures with one per kernel is one figure behind a selector (``pick``).
:meth:`FigureQueue.write_pngs` draws the matplotlib figures as PNG files
for summary.md and ``snakemake --report``, in worker processes when there are several
cores (drawing dominates the report's run time, and figures are independent). PNGs use a
fixed style, fixed DPI and no software or date tag. A PNG already in the folder is kept,
not drawn again, where its drawing function, its data and the code that draws it are the
same as when it was drawn (:func:`figure_key`, recorded in :data:`KEYS_FILE`): the same
inputs give the same bytes, and drawing is most of a rebuild's time.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import html
import io
import math
import multiprocessing
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# matplotlib's figure, canvas and ticker modules (and PIL) are imported where a figure is
# drawn: a rebuild that keeps its PNGs draws none, and the drawing processes import
# them on their own core instead of the report's process.

from gpubench import safety
from gpubench.files import atomic_write_bytes, atomic_write_text
from gpubench.report import plots
from gpubench.report.palette import MARKERS, colors  # noqa: F401 - figures.MARKERS, figures.colors

DPI = 100
FIG_WIDTH = 10.0  # inches
#: an environment variable that caps the drawing processes (1: draw in this process)
WORKERS_ENV = "GPUBENCH_REPORT_WORKERS"

_TOKEN = "@@GPUBENCH-FIGURE-{:05d}@@"
#: beside the PNGs: per figure file, the key of what it was drawn from and the hash of
#: its bytes (:meth:`FigureQueue.write_pngs` keeps a PNG whose both still match)
KEYS_FILE = ".gpubench-figures.keys"


#: colours kept in a static PNG: line plots use a few, and a palette PNG is a quarter
#: the size of matplotlib's RGBA one and faster to write (the PNGs are committed
#: beside summary.md, so their size counts)
PNG_COLORS = 64


#: set while :func:`svg_of` draws: :func:`png` then returns the figure as SVG markup
_AS_SVG = False


def png(fig: Figure) -> str:
    """The figure as base64 palette PNG with no metadata that could vary between runs
    (as SVG markup instead while :func:`svg_of` draws it)."""
    if _AS_SVG:
        return _svg(fig)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(DPI)
    canvas.draw()
    rgb = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw",
                           "RGBA", 0, 1).convert("RGB")
    buf = io.BytesIO()
    rgb.quantize(colors=PNG_COLORS, method=Image.Quantize.FASTOCTREE,
                 dither=Image.Dither.NONE).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element to inline in HTML: text as text (the page's
    font, searchable, a tenth of the bytes of glyph outlines), no metadata, fixed ids."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "gpubench"}):
        fig.savefig(buf, format="svg", metadata=dict.fromkeys(
            ("Date", "Creator", "Format", "Type")))
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    # scales with the page: the viewBox keeps the proportions
    return re.sub(r'^<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', text, count=1)


def svg_of(fn: Callable[..., str], *args: Any) -> str:
    """``fn(*args)`` (a drawing function that returns :func:`png`) drawn as inline SVG:
    the page's first screen shows it as soon as the HTML is parsed, with no script."""
    global _AS_SVG
    _AS_SVG = True
    try:
        return fn(*args)
    finally:
        _AS_SVG = False


def new_figure(height: float, width: float = FIG_WIDTH) -> Figure:
    """A figure in matplotlib's default style, whatever the caller's rcParams say."""
    from matplotlib import style as mpl_style
    from matplotlib.figure import Figure

    mpl_style.use("default")
    matplotlib.rcParams["svg.hashsalt"] = "gpubench"
    # Labels carry names from the results (a GPU, a host, a backend): a "$" in one must
    # stay a dollar sign, not start mathtext (unbalanced, it would stop the report).
    matplotlib.rcParams["text.parse_math"] = False
    # titles at the axes' top, where auto placement puts them in these figures (no
    # labels above any axes): placing them costs a tight bounding box of every axis, an
    # eighth of a figure's drawing
    matplotlib.rcParams["axes.titley"] = 1.0
    return Figure(figsize=(width, height))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def pow10(value: float, _pos: Any = None) -> str:
    """Tick label like 10⁻⁶, 2×10⁶ or 20 in plain Unicode: matplotlib's mathtext labels
    cost more to lay out than the rest of the figure."""
    if not value > 0:
        return ""
    exp = math.floor(math.log10(value) + 1e-9)
    if 0 <= exp <= 2:
        return f"{value:.6g}"
    mant = round(value / 10.0**exp, 6)
    power = "10" + str(exp).translate(_SUPERSCRIPT)
    return power if mant == 1 else f"{mant:g}×{power}"


def log_scale(ax: Any, which: str, values: np.ndarray) -> None:
    """Log scale; minor ticks only where the data spans under two decades (so the axis
    still has labels), because hundreds of minor ticks make drawing several times slower."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    decades = np.log10(v.max() / v.min()) if v.size else 0.0
    axis.set_major_formatter(FuncFormatter(pow10))
    if decades < 2:
        subs = np.arange(2.0, 10.0) if decades < 1 and which == "y" else (2.0, 3.0, 5.0)
        axis.set_minor_locator(LogLocator(subs=subs))
        axis.set_minor_formatter(FuncFormatter(pow10))
    else:
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())


def size_limits(ax: Any, sizes: np.ndarray) -> None:
    """x limits around the sizes: one size is centred and labelled."""
    from matplotlib.ticker import NullLocator

    xs = np.unique(np.asarray(sizes, dtype=float))
    xs = xs[np.isfinite(xs) & (xs > 0)]
    if xs.size == 0:
        return
    if xs.size == 1:
        ax.set_xlim(xs[0] / 2, xs[0] * 2)
        ax.set_xticks([xs[0]], [f"{int(xs[0]):,}"])
        ax.xaxis.set_minor_locator(NullLocator())
    else:
        ax.set_xlim(xs[0] / 1.4, xs[-1] * 1.4)


def grid(*axes: Any) -> None:
    for ax in axes:
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.15)


def _draw(job: tuple[Callable[..., str], tuple[Any, ...]]) -> str:
    fn, args = job
    with matplotlib.rc_context():
        return fn(*args)


def default_workers() -> int:
    """Drawing processes: $GPUBENCH_REPORT_WORKERS, else the usable cores (at most 8)."""
    env = os.environ.get(WORKERS_ENV, "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def draw_all(jobs: Sequence[tuple[Callable[..., str], tuple[Any, ...]]],
             workers: int | None = None) -> list[str]:
    """Every job's base64 PNG, in ``workers`` processes where there are several."""
    workers = default_workers() if workers is None else max(1, workers)
    workers = min(workers, len(jobs))
    if workers <= 1 or len(jobs) < 4:
        return [_draw(job) for job in jobs]
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - no fork on this platform
        return [_draw(job) for job in jobs]
    with ctx.Pool(workers) as pool:
        return pool.map(_draw, list(jobs), chunksize=1)


class Unkeyable(TypeError):
    """An argument :func:`figure_key` cannot hash by content: that figure is drawn."""


def _feed(h: Any, obj: Any) -> None:
    """Hash ``obj`` by content and type (a figure's arguments: frames, arrays, text,
    numbers and containers of them); anything else raises :class:`Unkeyable`."""
    import pandas as pd

    h.update(type(obj).__qualname__.encode() + b"\x00")
    if obj is None or isinstance(obj, bool | int | float | complex | str | bytes):
        h.update(repr(obj).encode() + b"\x00")
    elif isinstance(obj, tuple | list):
        h.update(f"{len(obj)}\x00".encode())
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, dict):
        h.update(f"{len(obj)}\x00".encode())
        for k, v in obj.items():  # insertion order: drawing may follow it
            _feed(h, k)
            _feed(h, v)
    elif isinstance(obj, np.generic):
        h.update(f"{obj.dtype.str}:{obj!r}\x00".encode())
    elif isinstance(obj, np.ndarray):
        if obj.dtype == object:
            _feed(h, obj.tolist())
        else:
            h.update(f"{obj.dtype.str}{obj.shape}\x00".encode())
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, pd.Series):
        _feed(h, obj.to_frame(name=obj.name if obj.name is not None else "\x00series"))
    elif isinstance(obj, pd.DataFrame):
        _feed(h, [str(c) for c in obj.columns])
        _feed(h, [str(t) for t in obj.dtypes])
        _feed(h, obj.index.tolist())
        for col in range(obj.shape[1]):
            values = obj.iloc[:, col]
            if values.dtype == object:
                # the cells' types too: 1 and "1" hash alike as text
                _feed(h, [(type(v).__qualname__, repr(v)) for v in values.tolist()])
            else:
                _feed(h, values.to_numpy())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        _feed(h, [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)])
    else:
        raise Unkeyable(type(obj).__qualname__)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of every gpubench source file and of the drawing libraries' versions:
    a change to any of them draws every figure again."""
    import pandas as pd
    import PIL

    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent  # the gpubench package
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\x00" + path.read_bytes())
    versions = (matplotlib.__version__, np.__version__, pd.__version__, PIL.__version__,
                DPI, PNG_COLORS)
    h.update(repr(versions).encode())
    return h.hexdigest()


def figure_key(job: tuple[Callable[..., str], tuple[Any, ...]]) -> str | None:
    """What a figure is drawn from, hashed: the drawing function, its arguments by
    content, and :func:`code_version`; None where an argument cannot be hashed."""
    fn, args = job
    h = hashlib.sha256(code_version().encode())
    h.update(f"{fn.__module__}.{fn.__qualname__}\x00".encode())
    try:
        _feed(h, args)
    except Unkeyable:
        return None
    return h.hexdigest()


def _read_keys(folder: Path) -> dict[str, tuple[str, str]]:
    """``{file name: (figure key, sha256 of the file)}`` from the folder's keys file."""
    try:
        lines = (folder / KEYS_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for line in lines:
        parts = line.split()
        if len(parts) == 3:
            out[parts[0]] = (parts[1], parts[2])
    return out


class Drawer:
    """Processes that draw PNGs while the report goes on: :meth:`ahead` starts figures
    as soon as their data is known (the per-kernel figures need only the prepared
    rows, not the analysis), :meth:`draw` returns every figure asked for, taking the
    ones drawn ahead by :func:`figure_key` (same function, data and code: the same PNG).
    With one worker it draws in this process, when asked. Use it as a context manager:
    leaving it ends the processes."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = default_workers() if workers is None else max(1, workers)
        self.pool: Any = None
        self.started: dict[str, Any] = {}
        if self.workers > 1:
            try:
                ctx = multiprocessing.get_context("fork")
            except ValueError:  # pragma: no cover - no fork on this platform
                return
            self.pool = ctx.Pool(self.workers)

    def __enter__(self) -> Drawer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None

    def ahead(self, jobs: Sequence[tuple[Callable[..., str], tuple[Any, ...]]],
              folder: str | Path | None = None,
              keys: Sequence[str | None] | None = None) -> None:
        """Start drawing ``jobs`` in the background; figures a PNG in ``folder`` already
        holds (by its recorded key) are left to :meth:`FigureQueue.write_pngs`."""
        if self.pool is None:
            return
        kept = {key for key, _digest in _read_keys(Path(folder)).values()} if folder else set()
        for i, job in enumerate(jobs):
            key = figure_key(job) if keys is None else keys[i]
            if key is not None and key not in kept and key not in self.started:
                self.started[key] = self.pool.apply_async(_draw, (job,))

    def draw(self, jobs: Sequence[tuple[Callable[..., str], tuple[Any, ...]]],
             keys: Sequence[str | None] | None = None) -> list[str]:
        """Every job's base64 PNG: drawn ahead, or drawn now (``keys``: the jobs'
        :func:`figure_key`, where the caller has them)."""
        if self.pool is None:
            return draw_all(jobs, 1)
        pending = []
        for i, job in enumerate(jobs):
            key = figure_key(job) if keys is None else keys[i]
            result = self.started.get(key) if key is not None else None
            if result is None:
                result = self.pool.apply_async(_draw, (job,))
                if key is not None:
                    self.started[key] = result
            pending.append(result)
        return [result.get() for result in pending]


#: sorts any ``table.sortable`` by the clicked header: numbers (with their units: ns to s,
#: B to TiB, ×, %) numerically, text alphabetically, blanks and dashes last; a second
#: click reverses. Rows keep their order among equals (Array.sort is stable).
SORT_JS = r"""
(function () {
  var SCALE = {ns: 1e-9, "\u00b5s": 1e-6, us: 1e-6, ms: 1e-3, s: 1, min: 60, h: 3600,
               B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776,
               KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12};
  // a number (thousands commas allowed), a unit, then the end or a space
  var NUM = new RegExp("^([-+\u2212]?(?:\\d[\\d,\u202f\u2009]*)?\\.?\\d+(?:e[-+]?\\d+)?)" +
                       "\\s*([a-z\u00b5%\u00d7/]*)(?:$|\\s)", "i");
  function key(cell) {
    var t = (cell.getAttribute("data-sort") || cell.textContent).trim();
    var m = NUM.exec(t);
    if (m && (m[2] === "" || m[2] in SCALE || /^[%\u00d7x]$|\//.test(m[2]))) {
      var v = parseFloat(m[1].replace(/[,\u202f\u2009]/g, "").replace("\u2212", "-"));
      if (!isNaN(v)) return [0, v * (SCALE[m[2]] || 1), t];
    }
    if (t === "" || t === "\u2014" || t === "-" || t === "n/a" || t === "unknown")
      return [2, 0, t];
    return [1, 0, t.toLowerCase()];
  }
  function cmp(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    if (a[0] === 0 && a[1] !== b[1]) return a[1] - b[1];
    return a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0;
  }
  function sortBy(table, th) {
    var col = th.cellIndex, body = table.tBodies[0];
    if (!body) return;
    var up = th.getAttribute("aria-sort") !== "ascending";
    [].forEach.call(table.querySelectorAll("th[aria-sort]"), function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    var rows = [].slice.call(body.rows).map(function (r) {
      return [key(r.cells[col] || r), r];
    });
    rows.sort(function (a, b) {
      var c = cmp(a[0], b[0]);
      return (a[0][0] === 2 || b[0][0] === 2) ? c : up ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r[1]); });
  }
  document.addEventListener("click", function (e) {
    var th = e.target.closest && e.target.closest("table.sortable thead th");
    if (th) sortBy(th.closest("table"), th);
  });
  document.addEventListener("keydown", function (e) {
    var th = e.target.closest && e.target.closest("table.sortable thead th");
    if (th && (e.key === "Enter" || e.key === " ")) { e.preventDefault();
      sortBy(th.closest("table"), th); }
  });
  document.addEventListener("DOMContentLoaded", function () {
    [].forEach.call(document.querySelectorAll("table.sortable thead th"), function (th) {
      th.tabIndex = 0; th.title = "sort by this column";
    });
  });
})();
"""

#: draws the figures from their JSON (the first screen's are inline SVG, drawn at build
#: time: they need no script). plotly.js (4.8 MB) is compiled only after the page's
#: load event, from a Blob URL (off the main thread where the browser can), so text and
#: tables show and scroll at once; then the figures on the first screen are drawn, then
#: those the reader scrolls towards, then the rest one at a time, so the page answers
#: between figures. ``window.gpubenchFirstScreen`` resolves when the first screen's
#: figures are drawn (at once when it has none), ``window.gpubenchPlots`` when all are;
#: each leaves a ``performance.mark`` (the browser test reads both); a ``select.plot-pick``
#: redraws its one figure with the chosen spec of its set;
#: ``window.gpubenchPlotly`` resolves once plotly.js is ready (the detail view draws then).
BOOT_JS = r"""
(function () {
  var specs = [], byId = {}, first = [], near = [], drawn = 0, i = 0, finish, firstDone,
      loaded;
  window.gpubenchPlots = new Promise(function (r) { finish = r; });
  window.gpubenchPlotly = new Promise(function (r) { loaded = r; });
  window.gpubenchFirstScreen = new Promise(function (r) { firstDone = r; });
  function mark(name, done) { performance.mark(name); done(); }
  function source(s) {  // a selector's figure: the chosen one of its set
    var pick = s.getAttribute("data-pick");
    return pick ? document.getElementById(pick + "-" + document.getElementById(pick).value)
                : s;
  }
  function draw(s) {
    if (!s.gpubenchDrawn) {
      var f = JSON.parse(source(s).textContent);
      var div = document.getElementById(s.getAttribute("data-for"));
      s.gpubenchDrawn = Plotly.newPlot(div, f.data, f.layout, f.config).then(function () {
        if (++drawn === specs.length) mark("gpubench-all-figures", finish);
      });
    }
    return s.gpubenchDrawn;
  }
  function next() {
    var s = near.shift();
    while (!s && i < specs.length) { s = specs[i++]; if (s.gpubenchDrawn) s = null; }
    if (s) draw(s).then(function () { setTimeout(next, 0); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    specs = [].slice.call(document.querySelectorAll("script.plot-spec"));
    specs.forEach(function (s) { byId[s.getAttribute("data-for")] = s; });
    first = specs.filter(function (s) {
      var r = document.getElementById(s.getAttribute("data-for")).getBoundingClientRect();
      return r.bottom > 0 && r.top < window.innerHeight;
    });
    if (!first.length) mark("gpubench-first-screen", firstDone);
    if (!specs.length) mark("gpubench-all-figures", finish);
    [].forEach.call(document.querySelectorAll("select.plot-pick"), function (sel) {
      sel.addEventListener("change", function () {
        var s = byId[sel.id + "-plot"], div = document.getElementById(sel.id + "-plot");
        div.setAttribute("aria-label", source(s).getAttribute("data-alt"));
        // not drawn yet: it will be, with the choice made
        if (s.gpubenchDrawn) s.gpubenchDrawn = s.gpubenchDrawn.then(function () {
          var f = JSON.parse(source(s).textContent);
          return Plotly.react(div, f.data, f.layout, f.config);
        }).then(function () { performance.mark("gpubench-pick-drawn"); });
      });
    });
    if ("IntersectionObserver" in window) {
      var io = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (e.isIntersecting) { near.push(byId[e.target.id]); io.unobserve(e.target); }
        });
      }, {rootMargin: "600px 0px"});
      specs.forEach(function (s) {
        io.observe(document.getElementById(s.getAttribute("data-for")));
      });
    }
  });
  window.addEventListener("load", function () {
    var code = document.getElementById("gpubench-plotlyjs");
    var details = document.getElementById("gpubench-details-data");
    if ((!specs.length && !details) || !code) return;
    setTimeout(function () {
      var lib = document.createElement("script");
      lib.src = URL.createObjectURL(new Blob([code.textContent], {type: "text/javascript"}));
      lib.onload = function () {
        performance.mark("gpubench-plotly-ready");
        URL.revokeObjectURL(lib.src);
        loaded();
        if (first.length) Promise.all(first.map(draw)).then(function () {
          mark("gpubench-first-screen", firstDone);
        });
        next();
      };
      document.head.appendChild(lib);
    }, 0);
  });
})();
"""

#: sorting cues, the figures' box, and tables laid out only near the viewport
#: (``content-visibility``): laying out the full suite's 90 tables up front took most of
#: the time the page needed to open
PAGE_CSS = ("table.sortable th{cursor:pointer}table.sortable th[aria-sort=ascending]::after"
            "{content:' \\25B2'}table.sortable th[aria-sort=descending]::after"
            "{content:' \\25BC'}.plot{width:100%;margin:.4em 0 1em}"
            ".plot.static svg{display:block;width:100%;max-width:1000px;height:auto}"
            "table{content-visibility:auto;contain-intrinsic-size:auto 20em}")


def plotly_js() -> str:
    """plotly.js from the installed package: inlined, the page works offline."""
    from plotly.offline import get_plotlyjs
    return get_plotlyjs().replace("</script", "<\\/script")


def page_head(with_plots: bool) -> str:
    """The scripts a page carries once: table sorting, and plotly.js with the boot
    script where the page has interactive figures."""
    out = [f"<style>{PAGE_CSS}</style>\n<script>{SORT_JS}</script>\n"]
    if with_plots:
        # not run where it stands: BOOT_JS runs it after the load event
        out.append(f'<script type="text/plain" id="gpubench-plotlyjs">{plotly_js()}'
                   f"</script>\n<script>{BOOT_JS}</script>\n")
    return "".join(out)


def _attr(text: str) -> str:
    return html.escape(text, quote=True)


class FigureQueue:
    """Figures of a page: :meth:`add` returns a placeholder; :meth:`render` fills them in
    with interactive Plotly figures; :meth:`write_pngs` draws the same figures as PNG
    files (the static fallback for Markdown and ``snakemake --report``)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[..., str], tuple[Any, ...]]] = []
        self.alts: list[str] = []
        self.classes: list[str] = []
        self._keys: list[str | None] = []
        #: figures shown on the page as inline SVG, not interactive (the first screen's)
        self.static: set[int] = set()
        #: figures shown one at a time behind a selector: index -> (the selector's id,
        #: what it chooses, this figure's choice)
        self.picks: dict[int, tuple[str, str, str]] = {}

    def keys(self) -> list[str | None]:
        """Each queued figure's :func:`figure_key` (computed once)."""
        self._keys += [figure_key(job) for job in self.jobs[len(self._keys):]]
        return list(self._keys)

    def add(self, fn: Callable[..., str], *args: Any, alt: str = "", cls: str = "",
            static: bool = False, pick: tuple[str, str, str] | None = None) -> str:
        """Queue ``fn(*args)`` (a module-level function returning base64 PNG; its
        interactive twin is found in :data:`plots.BUILDERS`). ``static``: on the page as
        inline SVG drawn now, shown before any script runs; ``pick``: (selector id, what
        it chooses, this figure's choice), one of a set of figures the page shows one at
        a time in one place. Either way its PNG is drawn for summary.md as any other."""
        self.jobs.append((fn, args))
        self.alts.append(alt)
        self.classes.append(cls)
        if static:
            self.static.add(len(self.jobs) - 1)
        if pick is not None:
            self.picks[len(self.jobs) - 1] = pick
        return _TOKEN.format(len(self.jobs) - 1)

    def _html(self, index: int, pngs: dict[int, str]) -> str:
        fn, args = self.jobs[index]
        alt, cls = self.alts[index], self.classes[index]
        if index in self.static:
            klass = f"plot static {cls}".strip()
            return (f'<div class="{_attr(klass)}" role="img" aria-label="{_attr(alt)}">'
                    f"{pngs[index]}</div>\n")
        builder = plots.builder_for(fn)
        if builder is None:  # no interactive twin: the PNG, as before
            klass = f' class="{_attr(cls)}"' if cls else ""
            return (f'<img{klass} alt="{_attr(alt)}" '
                    f'src="data:image/png;base64,{pngs[index]}">\n')
        klass = f"plot {cls}".strip()
        figure = builder(*args)
        # the drawn height reserved up front: the page does not jump as figures appear
        height = int(figure["layout"].get("height", 450))
        if index in self.picks:
            return self._pick_html(index, figure, klass, height)
        fid = f"gpubench-fig-{index:03d}"
        return (f'<div class="{_attr(klass)}" id="{fid}" role="img" '
                f'aria-label="{_attr(alt)}" style="min-height:{height}px"></div>\n'
                f'<script type="application/json" class="plot-spec" data-for="{fid}">'
                f"{plots.dumps(figure)}</script>\n")

    def _pick_html(self, index: int, figure: dict[str, Any], klass: str,
                   height: int) -> str:
        """One figure of a selector's set: its spec (``plot-choice``, drawn when chosen);
        the set's first also brings the selector and the one place they are drawn."""
        sid, what, _choice = self.picks[index]
        members = [i for i, p in self.picks.items() if p[0] == sid]
        pos = members.index(index)
        out = []
        if pos == 0:
            options = "".join(f'<option value="{n}">{html.escape(self.picks[i][2])}</option>'
                              for n, i in enumerate(members))
            out.append(f'<form class="plot-pick-form" onsubmit="return false"><label>'
                       f'{html.escape(what)} <select class="plot-pick" id="{sid}">{options}'
                       f"</select></label> <span class=\"note\">{len(members)} figures, one "
                       f"at a time</span></form>\n"
                       f'<div class="{_attr(klass)}" id="{sid}-plot" role="img" '
                       f'aria-label="{_attr(self.alts[index])}" '
                       f'style="min-height:{height}px"></div>\n'
                       f'<script type="application/json" class="plot-spec" '
                       f'data-for="{sid}-plot" data-pick="{sid}"></script>\n')
        out.append(f'<script type="application/json" class="plot-choice" id="{sid}-{pos}" '
                   f'data-alt="{_attr(self.alts[index])}">{plots.dumps(figure)}</script>\n')
        return "".join(out)

    def render(self, text: str, workers: int | None = None,
               drawer: Drawer | None = None) -> str:
        """The page with every figure as an interactive Plotly ``<div>`` (plotly.js and
        the table-sorting script inlined once in the head); a figure with no interactive
        builder is drawn as a PNG ``<img>``, a static one as inline SVG (by ``drawer``
        where given, else in ``workers`` processes)."""
        flat = [i for i, (fn, _) in enumerate(self.jobs)
                if i not in self.static and plots.builder_for(fn) is None]
        svgs = [(svg_of, (fn, *args)) for i, (fn, args) in enumerate(self.jobs)
                if i in self.static]
        jobs = [self.jobs[i] for i in flat] + svgs
        drawn = (drawer.draw(jobs, [None] * len(jobs)) if drawer is not None
                 else draw_all(jobs, workers))
        pngs = dict(zip(flat + sorted(self.static), drawn, strict=True))
        parts = text.split("@@GPUBENCH-FIGURE-")
        out = [parts[0]]
        for part in parts[1:]:
            index, rest = part[:5], part[7:]
            out.append(self._html(int(index), pngs) + rest)
        page = "".join(out)
        head = page_head(len(flat) + len(self.static) < len(self.jobs))
        return page.replace("</head>", head + "</head>", 1) if "</head>" in page else (
            head + page)

    def write_pngs(self, directory: str | Path, workers: int | None = None,
                   drawer: Drawer | None = None) -> list[Path]:
        """Draw every figure as ``directory/fig-NNN.png`` (earlier ``fig-*.png`` there are
        removed, so the folder holds this page's figures only); the paths in page order.

        A PNG already there is kept where :data:`KEYS_FILE` records the same
        :func:`figure_key` for it and the hash of its bytes still matches: drawn again
        it would come out the same. Every other figure is drawn, by ``drawer`` where
        given (it may have drawn some ahead), else in ``workers`` processes."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        before = _read_keys(folder)
        names = [f"fig-{i + 1:03d}.png" for i in range(len(self.jobs))]
        keys = self.keys()
        digests: dict[str, str] = {}
        for name, key in zip(names, keys, strict=True):
            path = folder / name
            if key is None or before.get(name, ("", ""))[0] != key or not path.is_file():
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest == before[name][1]:
                digests[name] = digest
        (folder / KEYS_FILE).unlink(missing_ok=True)  # rewritten once the PNGs are
        for old in folder.glob("fig-*.png"):
            if old.name not in digests:
                old.unlink()
        todo = [i for i, name in enumerate(names) if name not in digests]
        jobs = [self.jobs[i] for i in todo]
        images = (drawer.draw(jobs, [keys[i] for i in todo]) if drawer is not None
                  else draw_all(jobs, workers))
        # listed as the report's own before any is written: stopped half-way (a full
        # disk), the next report replaces them instead of taking them for someone else's
        safety.write_figures_manifest(folder, names)
        for i, image in zip(todo, images, strict=True):
            data = base64.b64decode(image)
            atomic_write_bytes(folder / names[i], data)
            digests[names[i]] = hashlib.sha256(data).hexdigest()
        key_lines = "".join(f"{name} {key} {digests[name]}\n"
                               for name, key in zip(names, keys, strict=True) if key)
        if key_lines:
            atomic_write_text(folder / KEYS_FILE, key_lines)
        return [folder / name for name in names]

    def markdown(self, paths: Sequence[Path], relative_to: str | Path) -> str:
        """A Markdown section linking the PNGs, with the figures' alt text."""
        if not paths:
            return ""
        base = Path(relative_to)
        out = ["## Figures\n", "The report's figures as static images (the HTML page has "
               "them interactive).\n"]
        for alt, path in zip(self.alts, paths, strict=True):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            out.append(f"![{_md_alt(alt)}]({rel})\n")
        return "\n".join(out)


def _md_alt(text: str) -> str:
    """Alt text inside ``![...]``: one line, Markdown's special characters backslashed
    (a name from the results is text, never markup or the end of the alt)."""
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", " ".join(text.split()))
