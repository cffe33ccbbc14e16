"""The report's shared pieces: formatting, the inputs (timings frame, environment JSON,
locks), the tables several sections share (as DataFrames of formatted cells) and the
per-kernel figure.

Every string from the inputs goes through the templates' autoescape, :func:`esc` (HTML
built in Python) or ``md_esc`` (Markdown): a reason or host name is text, never markup.
Only ``ok`` rows are plotted or ranked. Figures are queued on a
:class:`~gpubench.report.figures.FigureQueue` with :func:`img`, never drawn here, so they
can be drawn in parallel.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import markupsafe
import numpy as np
import pandas as pd

from gpubench import inputs, results
from gpubench.backends import BASELINE_FRAMEWORK, ID_SEPARATOR, split_backend_id
from gpubench.environments import Lock, key_packages, read_lock
from gpubench.report import figures
from gpubench.report.render import text_table
from gpubench.spec import KernelSpec, get_kernel, kernel_names

UNKNOWN = "unknown"
FIG_WIDTH = figures.FIG_WIDTH
#: how a thread count that is missing (e.g. on a GPU row) is grouped and sorted
NO_THREADS = -1

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;
max-width:1320px;padding:0 1em;color:#222;line-height:1.4}
header.machine h1{font-size:1.45em;margin:.1em 0 .2em}
.machine-line{margin:0 0 .3em;font-size:.92em}.machine-line strong{color:#555;font-weight:600}
.suite-line{margin:0 0 .3em;font-size:.85em;color:#444}
details.method>summary,details>summary{cursor:pointer;color:#1a4f8b}
.answer{display:grid;grid-template-columns:minmax(0,43fr) minmax(0,57fr);gap:1.2em;
align-items:start}.answer h2{margin-top:.4em}
.answer ul.recommendations{padding-left:1.1em;margin:.3em 0}
.answer ul.recommendations li{margin:.15em 0;font-size:.93em}.answer p.note{font-size:.85em}
figure.overview{margin:0}figure.overview .plot{margin:0}
figure.overview figcaption{font-size:.8em;line-height:1.3}
.rows table{font-size:.8em}.compact td{white-space:nowrap}.compact table{margin-top:.3em}
@media (max-width:900px){.answer{grid-template-columns:1fr}}
h1,h2,h3{line-height:1.2}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em;display:block;
max-width:100%;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fde8e8}tr.warn td{background:#fff6dc}
.banner{border:2px solid #c77d00;background:#fff6dc;padding:.6em 1em;margin:1em 0}
.alert{border:2px solid #b00020;background:#fde8e8;padding:.6em 1em;margin:1em 0}
.note{color:#555}img{max-width:100%;height:auto}code{font-size:.95em}
.detail-pick label{margin-right:.9em;white-space:nowrap}
.detail-plot{width:100%;min-height:580px}
"""


# -- small helpers ------------------------------------------------------------------------


def esc(value: Any) -> str:
    """HTML-escape anything that came from the inputs (as the templates' autoescape does)."""
    return str(markupsafe.escape(str(value)))


def _finite(x: Any) -> bool:
    try:
        return x is not None and x is not pd.NA and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def fmt_time(seconds: Any) -> str:
    """Seconds in human units (ns, µs, ms, s), three significant digits."""
    if not _finite(seconds):
        return "—"
    s = float(f"{float(seconds):.3g}")
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(s) >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_sig(x: Any, digits: int = 3) -> str:
    if not _finite(x):
        return "—"
    x = float(x)
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def fmt_speedup(x: Any) -> str:
    if not _finite(x):
        return "—"
    x = float(x)
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:,.0f}×"


def fmt_bytes(n: Any) -> str:
    if not _finite(n):
        return UNKNOWN
    n = float(n)
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def fmt_int(x: Any) -> str:
    return f"{int(x):,}" if _finite(x) else "—"


def fmt_threads(x: Any) -> str:
    return str(int(x)) if _finite(x) and int(x) != NO_THREADS else "—"


def fmt_relerr(x: Any) -> str:
    return f"{float(x):.2e}" if _finite(x) else "—"


def _ordered(values: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    """Known names in their declared order, then the rest sorted: stable and readable."""
    present = set(values)
    return [v for v in preferred if v in present] + sorted(present - set(preferred))


def _kernel_spec(name: str) -> KernelSpec | None:
    """The spec for descriptions and size units; None for a kernel this code does not know."""
    try:
        return get_kernel(name)
    except Exception:  # noqa: BLE001 - unknown name, or its package not importable here
        return None


# -- inputs -------------------------------------------------------------------------------


@dataclass
class Environment:
    """The probe's JSON, with a note when it could not be read (every field then unknown)."""

    data: dict[str, Any]
    source: str
    problem: str = ""
    #: (file name, lock) of the environment each step ran in (``raw/<backend>.lock.txt``)
    locks: list[tuple[str, Lock]] = field(default_factory=list)

    def get(self, key: str) -> Any:
        value = self.data.get(key)
        return UNKNOWN if value is None or value == "" else value


#: the fields of the probe's record (gpubench.probe) the report reads, with their types:
#: a record is data, and a field of another type (``cpu_cores: "four"``) would stop the
#: report where it is formatted; such a field is left out with a note. Fields not named
#: here pass as they are (each reader checks its own).
_TEXT = {"type": ["string", "null"]}
_COUNT = {"type": ["number", "null"], "minimum": 0}
HOST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{k: _TEXT for k in ("host", "cpu_model", "os", "python_version", "git_commit",
                              "timestamp", "gpu_reason", "cuda_visible_devices")},
        "cpu_cores": {"type": ["integer", "null"], "minimum": 1},
        "memory_bytes": _COUNT,
        "gpus": {"type": "array", "items": {"type": "object", "properties": {
            "name": _TEXT, "driver_version": _TEXT, "uuid": _TEXT, "memory_bytes": _COUNT,
            "index": {"type": ["integer", "null"]}}}},
        "packages": {"type": "object", "additionalProperties": _TEXT},
        "ceilings": {"type": "object"},
        "energy_crosscheck": {"type": "object"},
        "timer_overhead_s": {"type": "object", "additionalProperties": _COUNT},
        "host_conditions": {"type": "object", "additionalProperties": _COUNT},
        "virtual_machine": {"type": "object", "properties": {
            "virtual": {"type": ["boolean", "null"]}, "kind": _TEXT, "source": _TEXT}},
    },
}


def host_problems(data: Mapping[str, Any]) -> dict[str, str]:
    """``{top-level key: why}`` for each field of a probe record that breaks
    :data:`HOST_SCHEMA` (jsonschema's words, the key path first)."""
    import jsonschema

    out: dict[str, str] = {}
    validator = jsonschema.Draft202012Validator(HOST_SCHEMA)
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        if err.path:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.path)
            out.setdefault(str(err.path[0]), f"key {where[1:]}: {err.message[:120]}")
    return out


def load_env(path: str | Path) -> Environment:
    """Read the environment JSON; a missing or unreadable file is reported, not fatal,
    and so is a field of the wrong type (left out: :func:`host_problems`). Unreadable
    includes a device or pipe, a file over :data:`gpubench.inputs.MAX_JSON_BYTES` and
    nesting deeper than a probe record's (:func:`gpubench.inputs.load_json`)."""
    path = Path(path)
    if not path.exists():
        return Environment({}, path.name, f"environment file {path.name} is missing")
    try:
        data = inputs.load_json(path, "probe record")
    except inputs.InputError as exc:
        return Environment({}, path.name, f"environment file {path.name} is unreadable: {exc}")
    if not isinstance(data, dict):
        return Environment({}, path.name, f"environment file {path.name} is not a JSON object")
    problems = host_problems(data)
    for key in problems:
        data.pop(key, None)
    return Environment(data, path.name, "; ".join(
        f"environment file {path.name}: {why}, left out" for why in problems.values()))


def judged(frame: pd.DataFrame, env: Environment) -> pd.DataFrame:
    """The rows judged again with this code's gates (:func:`gpubench.plausibility.judge`)
    and the probe record's ceilings, before any verdict reads them: a file collected by
    older code (or none) gets the same refusals as a new one. Without ceilings the
    file's refusals stand, and only the gates that need none are applied."""
    from gpubench import ceilings, plausibility

    measured = env.data.get("ceilings")
    return plausibility.judge(frame, ceilings.from_record(env.data),
                              keep=not (isinstance(measured, Mapping) and measured))


def load_locks(paths: Iterable[str | Path]) -> list[tuple[str, Lock]]:
    """The steps' environment locks, sorted by file name; an unreadable one reads as failed."""
    return sorted(((Path(p).name, read_lock(p)) for p in paths), key=lambda t: t[0])


def throughput_unit(kernel: str, rows: pd.DataFrame) -> str:
    """The kernel's declared unit (:attr:`KernelSpec.unit`): GFLOP/s where flops were
    counted (else GB/s), Msamples/s, or GB/s (also for a kernel not known here)."""
    spec = _kernel_spec(kernel)
    unit = spec.unit if spec is not None else "GB/s"
    if unit == "GFLOP/s" and not (rows["flops"] > 0).any():
        return "GB/s"
    return unit


def throughput(rows: pd.DataFrame, unit: str) -> pd.Series:
    """Throughput of each row in ``unit``; NaN where it cannot be counted."""
    median = rows["median_s"].where(rows["median_s"] > 0)
    if unit == "Msamples/s":
        return rows["size"].astype("float64") / median / 1e6
    if unit == "GFLOP/s":
        return rows["gflops"].fillna(rows["flops"].where(rows["flops"] > 0) / median / 1e9)
    return rows["gbps"].fillna(rows["bytes"].where(rows["bytes"] > 0) / median / 1e9)


#: the caller's clock that verdicts rank (the headline), and the one beside it
CALLER_CLOCK, SYNC_CLOCK = "pipelined", "sync"


def baseline_quartiles(rows: pd.DataFrame, case: list[str]) -> pd.DataFrame:
    """Per case, the caller's-clock quartiles (``baseline_q1``, ``baseline_q3``) of the
    reference's fastest row by median (the row ``baseline_s`` is read from)."""
    best = rows.sort_values([*case, "caller_s", "implementation"], kind="mergesort")
    best = best.drop_duplicates(case, keep="first").set_index(case)
    return best[["caller_q1", "caller_q3"]].rename(
        columns={"caller_q1": "baseline_q1", "caller_q3": "baseline_q3"})


def speedup_range(ref_q1: Any, ref_q3: Any, q1: Any, q3: Any) -> tuple[Any, Any]:
    """The range of a speedup (reference time / time): the reference's lower quartile
    over the row's upper one, to its upper quartile over the row's lower one. Each call
    drawn from the middle half of its own samples (spread rounds included) gives a ratio
    inside it; the README states the rule ("How sure")."""
    return ref_q1 / q3, ref_q3 / q1


def prepare(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the derived columns the sections share: grouping keys, series label, the
    caller's clock, speedup, throughput.

    ``caller_s`` (with ``caller_q1``/``caller_q3``) is what a Python caller waits for per
    call: the pipelined caller clock on GPUs, the wall time on CPUs (whose samples are
    that clock; a CPU row of an older file gets it filled from them). ``speedup`` is on
    that clock, against the fastest ok NumPy row of the same kernel, variant, size, dtype
    and mode; ``speedup_device`` on the rows' own timers. Throughput stays on the row's
    own timer: it is what the hardware did. Only ok rows get speedups."""
    df = frame.copy()
    host = df["device"] != "gpu"
    for clock in (CALLER_CLOCK, SYNC_CLOCK):
        for src, dst in (("median_s", f"{clock}_median_s"), ("q1_s", f"{clock}_q1_s"),
                         ("q3_s", f"{clock}_q3_s"), ("samples", f"{clock}_samples")):
            df[dst] = df[dst].where(~(host & df[dst].isna()), df[src])
    df["caller_s"] = df[f"{CALLER_CLOCK}_median_s"]
    df["caller_q1"] = df[f"{CALLER_CLOCK}_q1_s"]
    df["caller_q3"] = df[f"{CALLER_CLOCK}_q3_s"]
    df["sync_s"] = df[f"{SYNC_CLOCK}_median_s"]
    df["threads_key"] = df["threads"].fillna(NO_THREADS).astype("int64")
    df["size_key"] = df["size"].fillna(NO_THREADS).astype("int64")
    backend = df["backend"].where(df["backend"] != "",
                                  df["framework"] + ID_SEPARATOR + df["device"])
    threads_txt = df["threads_key"].map(
        lambda t: "" if t == NO_THREADS else f", {t} thread" + ("s" if t != 1 else ""))
    # a GPU row's thread count is the host's cores: it says nothing about the GPU
    threads_txt = threads_txt.where(df["device"] != "gpu", "")
    df["series"] = backend + " " + df["implementation"] + threads_txt
    ok = df["status"] == "ok"
    case = ["kernel", "variant", "size_key", "dtype", "mode"]
    numpy = df[ok & (df["framework"] == BASELINE_FRAMEWORK)].groupby(case, sort=True)
    df = df.join(numpy["caller_s"].min().rename("baseline_s"), on=case)
    df = df.join(numpy["median_s"].min().rename("baseline_device_s"), on=case)
    df["speedup"] = (df["baseline_s"] / df["caller_s"]).where(ok)
    df = df.join(baseline_quartiles(df[ok & (df["framework"] == BASELINE_FRAMEWORK)], case),
                 on=case)
    lo, hi = speedup_range(df["baseline_q1"], df["baseline_q3"], df["caller_q1"],
                           df["caller_q3"])
    df["speedup_lo"], df["speedup_hi"] = lo.where(ok), hi.where(ok)
    df["speedup_device"] = (df["baseline_device_s"] / df["median_s"]).where(ok)
    df["throughput"] = math.nan
    df["unit"] = ""
    for kernel, rows in df.groupby("kernel", sort=True):
        unit = throughput_unit(str(kernel), rows)
        df.loc[rows.index, "unit"] = unit
        df.loc[rows.index, "throughput"] = throughput(rows, unit).where(ok[rows.index])
    return consolidate(df)


def consolidate(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns as one object block: pandas keeps each string column a block of its
    own, and the report's thousands of row selections copy every block (with 30 text
    columns each selection cost several times more)."""
    text = {c: object for c in df.columns if isinstance(df[c].dtype, pd.StringDtype)}
    return df.astype(text).copy() if text else df


def _sort_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """A total order: size, ok before not, fastest first, then names."""
    cols = ["size_key", "_bad", "_med", "framework", "implementation", "device",
            "threads_key", "backend", "mode"]
    key = rows[[c for c in cols if c in rows.columns]].assign(
        _bad=(rows["status"] != "ok").astype(int), _med=rows["median_s"].fillna(math.inf))
    # sort the keys alone, then take the rows once
    order = key.reset_index(drop=True).sort_values(cols, kind="mergesort").index
    return rows.iloc[order]


# -- figures ------------------------------------------------------------------------------


def scaling_figure(rows: pd.DataFrame, title: str, size_meaning: str, unit: str) -> str:
    """Two log-log panels vs size; base64 PNG. Left: the median time a caller waits per
    call (pipelined caller's clock on GPUs, wall on CPUs), q1-q3 bars; right: throughput on
    each row's own timer (device clock on GPUs: what the hardware did).

    Every timing mode is in the same figure: one colour per series, solid lines and
    filled markers for ``hot``, dotted lines and open markers for ``cold`` (cold rows have
    no caller's clock, so they are in the throughput panel only)."""
    series = _series_order(rows)
    cmap = figures.colors(len(series))
    modes = sorted(set(rows["mode"]))
    # Fixed margins in inches, not constrained layout: that costs a second full draw, and
    # drawing dominates the report's run time. No legend: drawn by matplotlib it cost a
    # third of each figure; the page's interactive twin (plots.scaling_figure) has one.
    top, axes_h, below = 0.55, 3.0, 0.62
    height = top + axes_h + below
    fig = figures.new_figure(height)
    fig.subplots_adjust(left=0.85 / FIG_WIDTH, right=1 - 0.2 / FIG_WIDTH,
                        top=1 - top / height, bottom=below / height, wspace=0.26)
    ax_t, ax_r = fig.subplots(1, 2)
    xlabel = f"problem size ({size_meaning}, log scale)" if size_meaning else (
        "problem size (log scale)")
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    # the columns as arrays once, each (series, mode) as positions sorted by size: a
    # frame filter per line cost more than drawing it
    ordered = rows.reset_index(drop=True).sort_values("size_key", kind="mergesort")
    cols = {c: ordered[c].to_numpy(float) for c in ("size_key", "caller_s", "caller_q1",
                                                       "caller_q3", "throughput")}
    where: dict[tuple[str, str], list[int]] = {}
    for pos, key in enumerate(zip(ordered["series"], ordered["mode"], strict=True)):
        where.setdefault(key, []).append(pos)
    for i, name in enumerate(series):
        color = cmap(i % cmap.N)
        marker = figures.MARKERS[i % len(figures.MARKERS)]
        for mode in modes:
            idx = where.get((name, mode))
            if not idx:
                continue
            x = cols["size_key"][idx]
            med = cols["caller_s"][idx]
            lo = np.clip(np.nan_to_num(med - cols["caller_q1"][idx]), 0, med * 0.999)
            hi = np.clip(np.nan_to_num(cols["caller_q3"][idx] - med), 0, None)
            cold = mode == "cold"
            style = {"color": color, "marker": marker, "markersize": 4, "linewidth": 1.3,
                     "linestyle": ":" if cold else "-",
                     "markerfacecolor": "white" if cold else color}
            # bars as one LineCollection and lines as plain Line2D, added directly:
            # errorbar's caps and containers, and plot's argument parsing, cost more to
            # build than drawing them
            timed = np.isfinite(med)
            if timed.any():
                xt, low, high = x[timed], (med - lo)[timed], (med + hi)[timed]
                bars = LineCollection(np.stack([np.c_[xt, low], np.c_[xt, high]], axis=1),
                                      colors=[color], linewidths=1.0,
                                      linestyles=style["linestyle"])
                ax_t.add_collection(bars, autolim=False)
                ax_t.update_datalim(np.r_[np.c_[xt, low], np.c_[xt, high]])
                ax_t.add_line(Line2D(xt, med[timed], **style))
            thr = cols["throughput"][idx]
            if np.isfinite(thr).any():
                ax_r.add_line(Line2D(x, thr, **style))
    ax_t.autoscale_view()
    ax_r.autoscale_view()
    sizes = rows["size_key"].to_numpy(float)
    figures.log_scale(ax_t, "x", sizes)
    figures.log_scale(ax_t, "y", np.concatenate([rows["caller_q1"].to_numpy(float),
                                                 rows["caller_q3"].to_numpy(float),
                                                 rows["caller_s"].to_numpy(float)]))
    ax_t.set_xlabel(xlabel)
    ax_t.set_ylabel("median s per call a caller waits (log)")
    ax_t.set_title("caller's clock: GPU pipelined, CPU wall (bars: q1–q3)", fontsize=10)
    figures.log_scale(ax_r, "x", sizes)
    ax_r.set_xlabel(xlabel)
    thr_all = rows["throughput"].to_numpy(float)
    if np.isfinite(thr_all).any():
        figures.log_scale(ax_r, "y", thr_all)
        ax_r.set_ylabel(f"throughput ({unit}, log scale)")
    else:
        ax_r.text(0.5, 0.5, f"no {unit} counted for this kernel", ha="center",
                  va="center", transform=ax_r.transAxes)
        ax_r.set_yticks([])
    ax_r.set_title(f"throughput on the device clock ({unit}, higher is better)", fontsize=10)
    for ax in (ax_t, ax_r):
        figures.size_limits(ax, sizes)
    figures.grid(ax_t, ax_r)
    fig.suptitle(title, fontsize=11)
    return figures.png(fig)


def img(figs: figures.FigureQueue, alt: str, fn: Callable[..., str], *args: Any,
        cls: str = "", static: bool = False,
        pick: tuple[str, str, str] | None = None) -> str:
    """A figure with alt text, filled in later by ``figs``: interactive on the page
    (``fn``'s twin in :mod:`.plots`; inline SVG where ``static``; one of a selector's
    set where ``pick``, see :meth:`.figures.FigureQueue.add`), ``fn``'s PNG in the
    static copies."""
    return figs.add(fn, *args, alt=alt, cls=cls, static=static, pick=pick)


def _series_order(rows: pd.DataFrame) -> list[str]:
    """Line labels ordered by backend, implementation, then thread count as a number."""
    keys = rows[["backend", "implementation", "threads_key", "mode", "series"]]
    return list(dict.fromkeys(keys.sort_values(list(keys.columns), kind="mergesort")["series"]))


# -- sections -----------------------------------------------------------------------------


#: "environment cupy-cuda12 was not built: <why>": the part that names the step's own
#: environment, left out so that steps skipped for one cause share one line
_ENV_PREFIX = re.compile(r"^environment \S+ (was not built|failed to build): ")


@dataclass
class GpuNotice:
    """The one notice on GPU steps that could not run: each cause once, with the steps
    it stopped (a GPU-less host stops them all alike, and one banner per step would
    bury the answer). ``cpu_only``: no GPU step ran, so the page is about the CPU."""

    #: (why, the steps it stopped, their rows), in the order of the steps
    skipped: list[tuple[str, list[str], int]]
    cpu_only: bool
    #: the rows hold no GPU step at all (not even an unavailable one)
    no_gpu_rows: bool

    @property
    def label(self) -> str:
        if not self.cpu_only:
            return "GPU steps that could not run"
        return ("CPU only: this run has no GPU step" if self.no_gpu_rows else
                "CPU only: the GPU steps could not run")


def cpu_only(df: pd.DataFrame) -> bool:
    """True when no GPU step ran (its rows, if any, all ``unavailable``): the title,
    headline and matrix then speak of the CPU frameworks, not of GPU ones."""
    gpu = df[df["device"] == "gpu"]
    return not df.empty and bool((gpu["status"] == "unavailable").all())


def gpu_notice(df: pd.DataFrame) -> GpuNotice | None:
    """The GPU steps that could not run at all, grouped by cause; None when every GPU
    step ran (a CPU-only run always has one: it says what a GPU run would add).

    A step could not run when every one of its rows is ``unavailable``; a GPU step that
    ran but skipped a size is not one (those rows are under failures and skips).
    """
    gpu = df[df["device"] == "gpu"]
    groups: dict[str, dict[str, int]] = {}
    for backend, rows in gpu.groupby("backend", sort=True):
        if not (rows["status"] == "unavailable").all():
            continue
        for reason, n in rows["reason"].fillna("").astype(str).value_counts().items():
            why = _ENV_PREFIX.sub(r"the environment \1: ",
                                  str(reason).removeprefix("Unavailable: ").rstrip(". "))
            groups.setdefault(why or "no reason recorded", {})[str(backend)] = int(n)
    only = cpu_only(df)
    if not groups and not only:
        return None
    skipped = sorted(((why, sorted(steps), sum(steps.values()))
                      for why, steps in groups.items()), key=lambda g: (g[1], g[0]))
    return GpuNotice(skipped, only, gpu.empty)


def _row_list(rows: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Every row by key, with its status and reason: nothing is summarised away."""
    order = {k: i for i, k in enumerate(kernel_names())}
    rows = rows.assign(_k=rows["kernel"].map(lambda k: order.get(k, len(order))))
    rows = rows.sort_values(["_k", "kernel", "variant", "dtype", "size_key", "backend",
                             "implementation", "threads_key", "mode"], kind="mergesort")
    headers = ["kernel", "variant", "dtype", "size", "backend", "implementation", "threads",
               *extra, "status", "reason"]
    out = []
    for _, r in rows.iterrows():
        out.append([r["kernel"], r["variant"], r["dtype"], fmt_int(r["size_key"]), r["backend"],
                    r["implementation"], fmt_threads(r["threads_key"])]
                   + [fmt_relerr(r[c]) for c in extra] + [r["status"], r["reason"]])
    return text_table(headers, out, frozenset({"size", "threads", *extra}),
                 ["bad" if s == "wrong_result" else "warn" for s in rows["status"]])


def failure_groups(df: pd.DataFrame) -> pd.DataFrame | None:
    """Non-ok rows grouped by status, backend and reason, with counts and kernels."""
    bad = df[df["status"] != "ok"]
    if bad.empty:
        return None
    rank = {s: i for i, s in enumerate(results.STATUSES)}
    rows = []
    for (status, backend, reason), g in bad.groupby(["status", "backend", "reason"], sort=True):
        rows.append((rank.get(status, len(rank)), [
            status, backend, str(len(g)), ", ".join(_ordered(g["kernel"], kernel_names())),
            reason]))
    rows.sort(key=lambda r: (r[0], r[1]))
    return text_table(["status", "backend", "rows", "kernels", "reason"], [r[1] for r in rows],
                 frozenset({"rows"}))


def _timer_overhead(value: Any) -> str:
    """The probe records either one float or {per_sample_s, loop_s, samples}."""
    if _finite(value):
        return fmt_time(value)
    if isinstance(value, Mapping):
        parts = []
        if _finite(value.get("per_sample_s")):
            parts.append(f"{fmt_time(value['per_sample_s'])} inside each sample")
        if _finite(value.get("loop_s")):
            parts.append(f"{fmt_time(value['loop_s'])} per harness iteration")
        if parts:
            return ", ".join(parts)
    return UNKNOWN


def environment_table(env: Environment) -> pd.DataFrame:
    gpus = env.data.get("gpus")
    if isinstance(gpus, list) and gpus:
        gpu_text = "; ".join(
            f"{g.get('index', '?')}: {g.get('name', UNKNOWN)} "
            f"({fmt_bytes(g.get('memory_bytes'))}, driver {g.get('driver_version', UNKNOWN)})"
            if isinstance(g, Mapping) else str(g) for g in gpus)
    elif isinstance(gpus, list):
        gpu_text = f"none ({env.get('gpu_reason')})"
    else:
        reason = env.get("gpu_reason")
        gpu_text = UNKNOWN if reason == UNKNOWN else f"none ({reason})"
    overhead = _timer_overhead(env.data.get("timer_overhead_s"))
    rows = [
        ["host", str(env.get("host"))],
        ["CPU", str(env.get("cpu_model"))],
        ["CPU cores", str(env.get("cpu_cores"))],
        ["memory", fmt_bytes(env.data.get("memory_bytes"))],
        ["OS", str(env.get("os"))],
        ["Python", str(env.get("python_version"))],
        ["git commit", str(env.get("git_commit"))],
        ["probed at", str(env.get("timestamp"))],
        ["timer overhead", overhead],
        ["GPUs", gpu_text],
    ]
    vm = env.data.get("virtual_machine")
    if isinstance(vm, Mapping) and vm:  # absent from records of older probes
        said = {True: "yes", False: "no"}.get(vm.get("virtual"), "cannot tell")
        kind = f" ({vm['kind']})" if vm.get("kind") else ""
        rows.append(["virtual machine", f"{said}{kind}, from {vm.get('source') or UNKNOWN}"])
    cond = env.data.get("host_conditions")
    if isinstance(cond, Mapping) and cond:  # absent from records of older probes
        rows.append(["host at probe time", _host_conditions(cond)])
    return text_table(["field", "value"], rows)


def _host_conditions(cond: Mapping[str, Any]) -> str:
    """The probe's reading of the host's load, in words; unknown parts left out."""
    def pct(key: str) -> str:
        v = cond.get(key)
        return f"{v:.0f} %" if isinstance(v, (int, float)) else UNKNOWN

    loads = [cond.get(k) for k in ("load_1min", "load_5min", "load_15min")]
    load = ("/".join(f"{v:.2f}" for v in loads) if all(isinstance(v, (int, float))
                                                        for v in loads) else UNKNOWN)
    return (f"load average {load} (1, 5, 15 min); CPUs busy {pct('busy_pct')}, stolen "
            f"{pct('steal_pct')} over {cond.get('window_s', UNKNOWN)} s; each row records "
            "its own step's conditions")


def backend_table(df: pd.DataFrame) -> pd.DataFrame | None:
    """Per backend, the framework versions and device names its rows recorded."""
    if df.empty:
        return None
    rows = []
    for backend, g in df.groupby("backend", sort=True):
        def values(col: str, g: pd.DataFrame = g) -> str:
            found = sorted({v for v in g[col] if v})
            return "; ".join(found) if found else UNKNOWN
        rows.append([backend or UNKNOWN, values("framework_version"), values("device_name"),
                     values("host"), values("env_lock"), str(int((g["status"] == "ok").sum())),
                     str(len(g))])
    return text_table(["backend", "framework version", "device", "host", "env lock", "ok rows",
                  "rows"], rows, frozenset({"ok rows", "rows"}))


def _lock_backend(name: str, lock: Lock) -> str:
    return lock.header.get("backend") or name.removesuffix(".lock.txt")


def lock_table(env: Environment) -> pd.DataFrame | None:
    """Per step, the environment it ran in: its lock hash and the exact versions of the
    packages behind its numbers (or why the environment could not be built)."""
    if not env.locks:
        return None
    rows, classes = [], []
    for name, lock in env.locks:
        backend = _lock_backend(name, lock)
        framework, device = split_backend_id(backend)
        if lock.ok:
            detail = "; ".join(key_packages(framework, device, lock)) or "(none of its packages)"
        else:
            detail = lock.problem()
        rows.append([backend, lock.env or UNKNOWN, lock.header.get("mode", UNKNOWN),
                     lock.status, lock.hash or "—", lock.header.get("python", "—"),
                     lock.header.get("platform", "—"), detail])
        classes.append("" if lock.ok else "warn")
    return text_table(["backend", "environment", "mode", "status", "env lock", "Python", "platform",
                  "versions (or why it did not build)"], rows, row_classes=classes)


def gpu_table(env: Environment) -> pd.DataFrame | None:
    gpus = [g for g in env.data.get("gpus") or [] if isinstance(g, Mapping)]
    if not gpus:
        return None
    keys = _ordered({k for g in gpus for k in g}, ("index", "name", "memory_bytes",
                                                   "driver_version", "uuid"))
    # one column per GPU, one row per field: a row per GPU was wider than the page
    rows = [[k] + [fmt_bytes(g.get(k)) if k == "memory_bytes" else
                   (UNKNOWN if g.get(k) in (None, "") else str(g.get(k))) for g in gpus]
            for k in keys]
    return text_table(["field", *(f"GPU {g.get('index', i)}" for i, g in enumerate(gpus))],
                      rows)


def data_table(df: pd.DataFrame, timings_name: str, samples_note: str) -> pd.DataFrame:
    counts = ", ".join(f"{s} {int((df['status'] == s).sum())}" for s in results.STATUSES
                       if (df["status"] == s).any()) or "no rows"
    stamps = sorted(t for t in df["timestamp"] if t)
    commits = sorted({c for c in df["git_commit"] if c}) or [UNKNOWN]
    return text_table(["field", "value"], [
        ["timings file", f"{timings_name} ({len(df)} rows: {counts})"],
        ["samples file", samples_note],
        ["measured", f"{stamps[0]} to {stamps[-1]}" if stamps else UNKNOWN],
        ["git commit(s) in rows", "; ".join(commits)],
        ["schema version", str(results.SCHEMA_VERSION)],
    ])
