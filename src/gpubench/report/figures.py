"""Deterministic figures, drawn in parallel.

Sections do not draw while the page is assembled: they queue a figure (a plain function
and its arguments) and put a placeholder in the HTML; :meth:`FigureQueue.render` draws
every queued figure, in worker processes when there are several cores, and substitutes
the images. Drawing dominates the report's run time, and figures are independent, so
this is where parallelism pays. Each figure is a base64 PNG made with a fixed style,
fixed DPI and no software or date tag, so the same data gives the same bytes.
"""

from __future__ import annotations

import base64
import io
import math
import multiprocessing
import os
from collections.abc import Callable
from typing import Any

import matplotlib
import numpy as np
from matplotlib import style as mpl_style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

DPI = 100
FIG_WIDTH = 10.0  # inches
MARKERS = "os^Dv<>ph*"
#: an environment variable that caps the drawing processes (1: draw in this process)
WORKERS_ENV = "GPUBENCH_REPORT_WORKERS"

_TOKEN = "@@GPUBENCH-FIGURE-{:05d}@@"


def png(fig: Figure) -> str:
    """The figure as base64 PNG with no metadata that could vary between runs."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def new_figure(height: float, width: float = FIG_WIDTH) -> Figure:
    """A figure in matplotlib's default style, whatever the caller's rcParams say."""
    mpl_style.use("default")
    matplotlib.rcParams["svg.hashsalt"] = "gpubench"
    # Labels carry names from the results (a GPU, a host, a backend): a "$" in one must
    # stay a dollar sign, not start mathtext (unbalanced, it would stop the report).
    matplotlib.rcParams["text.parse_math"] = False
    return Figure(figsize=(width, height))


def colors(n: int) -> Any:
    return matplotlib.colormaps["tab10" if n <= 10 else "tab20"]


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


class FigureQueue:
    """Figures to draw: :meth:`add` returns a placeholder, :meth:`render` fills them in."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[..., str], tuple[Any, ...]]] = []

    def add(self, fn: Callable[..., str], *args: Any) -> str:
        """Queue ``fn(*args)`` (a module-level function returning base64 PNG)."""
        self.jobs.append((fn, args))
        return _TOKEN.format(len(self.jobs) - 1)

    def render(self, text: str, workers: int | None = None) -> str:
        """Draw every queued figure (in ``workers`` processes) and substitute them."""
        workers = default_workers() if workers is None else max(1, workers)
        workers = min(workers, len(self.jobs))
        if workers <= 1 or len(self.jobs) < 4:
            images = [_draw(job) for job in self.jobs]
        else:
            try:
                ctx = multiprocessing.get_context("fork")
            except ValueError:  # pragma: no cover - no fork on this platform
                images = [_draw(job) for job in self.jobs]
            else:
                with ctx.Pool(workers) as pool:
                    images = pool.map(_draw, self.jobs, chunksize=1)
        parts = text.split("@@GPUBENCH-FIGURE-")
        out = [parts[0]]
        for part in parts[1:]:
            index, rest = part[:5], part[7:]
            out.append(images[int(index)] + rest)
        self.jobs = []
        return "".join(out)
