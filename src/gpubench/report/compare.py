"""Run-vs-run comparison: two result sets (two machines, or two dates), every shared
measurement labelled FASTER, SLOWER, SAME (within ±5 %, shown) or UNRESOLVED from the
recorded samples.

``gpubench compare --base <dir|timings.csv> --new <dir|timings.csv>
[--html results/compare/compare.html] [--md results/compare/compare.md]``

A measurement is shared when both sets have a row with the same framework, device,
backend, implementation, kernel, variant, size, dtype and mode (and, on the CPU, thread
count; a GPU row's thread count is the host's core count, which says nothing about the
GPU, so it is ignored). The label comes from :func:`gpubench.report.stats.compare`: the
Hodges–Lehmann confidence interval of the time ratio new / base (from the two-sided
Mann–Whitney U test on the two sets of samples) against a minimum effect, in the spirit
of nvbench's ``compare.py``; where a set has no samples, the interquartile ranges stand
in for the interval.

Both sets are read and checked as the report reads its input (:func:`resolve`): a time,
throughput or quantile that is not finite, out of its bound or out of order, and samples
that are bad or doubled, stop the comparison (exit 2, naming file, line, key, column and
value), so a row with an infinite median is never labelled SAME.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator

from gpubench import results, suites
from gpubench.backends import BASELINE_FRAMEWORK, split_backend_id
from gpubench.cli_parsers import COMPARE_HTML, compare_parser
from gpubench.files import WriteError
from gpubench.report import figures, render, stats
from gpubench.report.base import (
    CSS,
    UNKNOWN,
    Environment,
    _ordered,
    fmt_int,
    fmt_threads,
    fmt_time,
    judged,
    load_env,
    prepare,
)
from gpubench.report.render import Figure, Markup, text_table
from gpubench.report.verdicts import band_of, classes
from gpubench.spec import kernel_names, link_kernel
from gpubench.workloads import (
    GEMM,
    HOST_TRANSFERS,
    KERNEL_CLASSES,
    class_title,
    workload_class,
)

MATCH = ["framework", "device", "backend", "implementation", "kernel", "variant", "size_key",
         "dtype", "match_threads", "mode"]
LABEL_ORDER = (stats.SLOWER, stats.FASTER, stats.SAME, stats.UNRESOLVED, "NOT COMPARABLE")
LABEL_COLORS = {stats.SLOWER: "#b2182b", stats.FASTER: "#2166ac", stats.SAME: "#999999",
                stats.UNRESOLVED: "#e0a030"}


@dataclass
class ResultSet:
    """One side of the comparison, read leniently (see :func:`resolve`)."""

    label: str
    timings: Path
    df: pd.DataFrame
    samples: stats.Samples
    env: Environment
    notes: list[str]
    #: the run's suite record (``suite.json`` beside the timings; gpubench.suites)
    suite: dict = field(default_factory=dict)

    @property
    def suite_name(self) -> str:
        return str(self.suite.get("suite") or "not recorded")


def _first(*paths: Path) -> Path | None:
    return next((p for p in paths if p.exists()), None)


def resolve(spec: str | Path, label: str | None = None) -> ResultSet:
    """A results folder (``timings.csv[.gz|.xz]``, ``samples.csv[.gz|.xz]``, ``host.json``
    or ``env/host.json``) or a timings CSV with those files beside it, validated as the
    report's input (:class:`results.SchemaError` when it is not)."""
    from gpubench.report import read_timings_lenient

    path = Path(spec)
    folder = path if path.is_dir() else path.parent
    timings = (results.find_csv(folder, "timings") or folder / "timings.csv"
               if path.is_dir() else path)
    samples = results.find_csv(folder, "samples")
    env_path = _first(folder / "host.json", folder / "env" / "host.json")
    frame, notes = read_timings_lenient(timings)
    env = load_env(env_path) if env_path else Environment(
        {}, "host.json", f"no host.json or env/host.json beside {timings.name}")
    df = prepare(judged(frame, env).sort_values([*results.KEY_NAMES, "mode"],
                                                kind="mergesort").reset_index(drop=True))
    name = label or _default_label(env, folder)
    return ResultSet(name, timings, df, stats.load_samples(samples, df), env, notes,
                     suites.read_record(folder / "suite.json"))


def _default_label(env: Environment, folder: Path) -> str:
    gpus = env.data.get("gpus")
    gpu = gpus[0].get("name") if isinstance(gpus, list) and gpus and isinstance(
        gpus[0], dict) else None
    return f"{folder.name or folder.resolve().name}" + (f" ({gpu})" if gpu else "")


def _keyed(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(match_threads=df["threads_key"].where(df["device"] != "gpu", -1))


def compare_sets(base: ResultSet, new: ResultSet, alpha: float = stats.ALPHA,
                 min_effect: float = stats.MIN_EFFECT) -> pd.DataFrame:
    """One row per shared measurement: medians, ratio, p-value, method and label."""
    b, n = _keyed(base.df), _keyed(new.df)
    b = b.assign(_row=b.index)
    n = n.assign(_row=n.index)
    for side in (b, n):
        if "energy_j" not in side:
            side["energy_j"] = math.nan
    cols = [*MATCH, "_row", "status", "median_s", "q1_s", "q3_s", "samples", "threads_key",
            "energy_j"]
    merged = b[cols].merge(n[cols], on=MATCH, suffixes=("_base", "_new"), how="inner")
    bounds = plausible_bounds(base, new)
    out = []
    for _, r in merged.iterrows():
        both_ok = r["status_base"] == "ok" and r["status_new"] == "ok"
        if both_ok:
            v = stats.compare(float(r["median_s_base"]), float(r["median_s_new"]),
                              base.samples.get(int(r["_row_base"])),
                              new.samples.get(int(r["_row_new"])),
                              (r["q1_s_base"], r["q3_s_base"]), (r["q1_s_new"], r["q3_s_new"]),
                              alpha, min_effect)
            label, ratio, p, method = v.label, v.ratio, v.p_value, v.method
        else:
            label, ratio, p, method = "NOT COMPARABLE", math.nan, math.nan, ""
        lim = bounds.get(str(r["device"]))
        beyond = bool(lim is not None and math.isfinite(ratio)
                      and not lim[0] <= ratio <= lim[1])
        out.append({**{k: r[k] for k in MATCH}, "threads_base": r["threads_key_base"],
                    "threads_new": r["threads_key_new"], "status_base": r["status_base"],
                    "status_new": r["status_new"], "median_base": r["median_s_base"],
                    "median_new": r["median_s_new"], "ratio": ratio, "p_value": p,
                    "method": method, "label": label,
                    "energy_base": r["energy_j_base"], "energy_new": r["energy_j_new"],
                    "beyond_ceilings": beyond})
    frame = pd.DataFrame(out, columns=[*MATCH, "threads_base", "threads_new", "status_base",
                                       "status_new", "median_base", "median_new", "ratio",
                                       "p_value", "method", "label", "energy_base",
                                       "energy_new", "beyond_ceilings"])
    order = {k: i for i, k in enumerate(kernel_names())}
    frame = frame.assign(_k=frame["kernel"].map(lambda k: order.get(k, len(order))))
    frame = frame.sort_values(["_k", "kernel", "variant", "dtype", "size_key", "backend",
                               "implementation", "match_threads", "mode"], kind="mergesort")
    return frame.drop(columns="_k").reset_index(drop=True)


def only_in(one: ResultSet, other: ResultSet) -> pd.DataFrame:
    """Rows of ``one`` with no counterpart in ``other``."""
    a, b = _keyed(one.df), _keyed(other.df)
    m = a.merge(b[MATCH].drop_duplicates(), on=MATCH, how="left", indicator=True)
    return m[m["_merge"] == "left_only"].drop(columns="_merge")


def suites_differ(base: ResultSet, new: ResultSet) -> bool:
    """The two sets come from different suites, one of them quick (a quick run lacks
    rows of a full one by design: the comparison must say which)."""
    names = {base.suite_name, new.suite_name}
    return len(names) > 1 and "quick" in names


def only_table(rest: pd.DataFrame, detailed: bool) -> pd.DataFrame:
    """Rows of one set without a counterpart: per backend, kernel and status; with
    ``detailed`` (the sets' suites differ) per variant, dtype, mode and thread count
    too, with the sizes, so that every missing row can be named."""
    if not detailed:
        g = rest.groupby(["backend", "kernel", "status"], sort=True).size()
        return text_table(["backend", "kernel", "status", "rows"],
                          [[b, k, st, str(int(n))] for (b, k, st), n in g.items()],
                          frozenset({"rows"}))
    keys = ["backend", "kernel", "variant", "dtype", "mode", "match_threads"]
    rows = []
    for key, g in rest.groupby(keys, sort=True):
        b, k, v, d, m, t = key
        rows.append([b, k, v, d, m, fmt_threads(t),
                     ", ".join(fmt_int(x) for x in sorted(set(g["size_key"]))),
                     ", ".join(sorted(set(g["implementation"].astype(str)))),
                     str(len(g))])
    return text_table(["backend", "kernel", "variant", "dtype", "mode", "threads", "sizes",
                       "implementations", "rows"], rows, frozenset({"rows"}))


def suite_banner(base: ResultSet, new: ResultSet, n_shared: int,
                 only: list[tuple[str, int, pd.DataFrame | None]]) -> str:
    """What a row-by-row comparison of a quick run with a full one leaves out."""
    counts = {name: n for name, n, _ in only}
    return (f"{base.label} is the {base.suite_name} suite and {new.label} the "
            f"{new.suite_name} suite: only the {n_shared:,} measurements both took are "
            f"compared row by row; {counts.get('new', 0):,} rows of {new.label} and "
            f"{counts.get('base', 0):,} of {base.label} have no counterpart in the other, "
            "each named under 'Only in' below (backend, kernel, variant, dtype, mode, "
            "threads, sizes). Run both as the same suite (gpubench run --suite full) "
            "to compare every row")


def _fmt_ratio(x: float) -> str:
    return f"{x:.3f}×" if math.isfinite(x) else "—"


def _fmt_p(x: float) -> str:
    return "—" if not math.isfinite(x) else ("< 1e-6" if x < 1e-6 else f"{x:.2g}")


def counts_table(cmp: pd.DataFrame) -> pd.DataFrame:
    rows = [[lab, str(int((cmp["label"] == lab).sum()))] for lab in LABEL_ORDER]
    return text_table(["label", "measurements"], rows, frozenset({"measurements"}))


def group_table(cmp: pd.DataFrame, by: str) -> pd.DataFrame | None:
    """Per backend (or kernel): labels and the geometric mean of the ratios."""
    ok = cmp[cmp["label"] != "NOT COMPARABLE"]
    if ok.empty:
        return None
    rows = []
    keys = sorted(set(ok[by])) if by != "kernel" else _ordered(ok[by], kernel_names())
    for key in keys:
        g = ok[ok[by] == key]
        gm = float(np.exp(np.log(g["ratio"].astype(float)).mean()))
        rows.append([key, str(len(g)), str(int((g["label"] == stats.FASTER).sum())),
                     str(int((g["label"] == stats.SLOWER).sum())),
                     str(int((g["label"] == stats.SAME).sum())),
                     str(int((g["label"] == stats.UNRESOLVED).sum())), _fmt_ratio(gm)])
    return text_table([by, "shared", "FASTER", "SLOWER", "SAME", "UNRESOLVED",
                       "geomean new/base"], rows,
                      frozenset({"shared", "FASTER", "SLOWER", "SAME", "UNRESOLVED",
                                 "geomean new/base"}))


def detail_table(cmp: pd.DataFrame) -> pd.DataFrame:
    rows, classes = [], []
    for _, r in cmp.iterrows():
        rows.append([r["kernel"], r["variant"], r["dtype"], fmt_int(r["size_key"]),
                     r["backend"], r["implementation"], fmt_threads(r["match_threads"]),
                     r["mode"], fmt_time(r["median_base"]), fmt_time(r["median_new"]),
                     _fmt_ratio(r["ratio"]), _fmt_p(r["p_value"]), r["method"] or "—",
                     r["label"] if r["label"] != "NOT COMPARABLE" else
                     f"NOT COMPARABLE ({r['status_base']} → {r['status_new']})"])
        classes.append({stats.SLOWER: "bad", stats.FASTER: "good"}.get(r["label"], ""))
    return text_table(["kernel", "variant", "dtype", "size", "backend", "implementation", "threads",
                  "mode", "base median", "new median", "new/base", "p", "test", "label"],
                 rows, frozenset({"size", "threads", "base median", "new median", "new/base",
                                  "p"}), classes)


def row_class(device: str, kernel: str, implementation: str) -> str:
    """The class a row is listed under in the tables of changes: its workload class on
    the GPU, the host's CPU apart (each host is its own CPU)."""
    if device != "gpu":
        return HOST_CPU
    return class_of(kernel, implementation) or OTHER_GPU


def table_classes() -> list[str]:
    """The tables' class order: the verdict's, then other GPU work, then the CPU."""
    return [c for _, members in VERDICT_GROUPS for c in members] + [OTHER_GPU, HOST_CPU]


def by_class_and_significance(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows in the verdict's class order; within a class the surest first (smallest
    p-value), then the largest change either way."""
    order = {c: i for i, c in enumerate(table_classes())}
    cls = [row_class(str(d), str(k), str(i)) for d, k, i in
           zip(rows["device"], rows["kernel"], rows["implementation"], strict=True)]
    ratio = rows["ratio"].astype(float)
    keyed = rows.assign(cls=cls, _c=[order.get(c, len(order)) for c in cls],
                        _p=rows["p_value"].astype(float).fillna(1.0),
                        _e=-np.abs(np.log(ratio.where(ratio > 0))).fillna(0.0))
    return keyed.sort_values(["_c", "_p", "_e"], kind="mergesort").drop(
        columns=["_c", "_p", "_e"])


def change_cell(ratio: float) -> str:
    """A row's change in words: "1.27× faster", "1.20× slower"."""
    if not math.isfinite(ratio) or ratio <= 0:
        return "—"
    return f"{_f(1 / ratio)}× faster" if ratio < 1 else (
        f"{_f(ratio)}× slower" if ratio > 1 else "no change")


def changed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a change table, sorted (:func:`by_class_and_significance`), with the
    class first and the change in words beside the ratio."""
    rows = by_class_and_significance(rows)
    out, css = [], []
    for _, r in rows.iterrows():
        out.append([class_title(r["cls"]), r["kernel"], r["variant"], r["dtype"],
                    fmt_int(r["size_key"]), r["backend"], r["implementation"],
                    fmt_threads(r["match_threads"]),
                    r["mode"], fmt_time(r["median_base"]), fmt_time(r["median_new"]),
                    change_cell(float(r["ratio"])), _fmt_ratio(r["ratio"]),
                    _fmt_p(r["p_value"]), r["label"]])
        css.append({stats.SLOWER: "bad", stats.FASTER: "good"}.get(r["label"], ""))
    return text_table(["class", "kernel", "variant", "dtype", "size", "backend",
                       "implementation", "threads", "mode", "base median", "new median",
                       "change", "new/base", "p", "label"], out,
                      frozenset({"size", "threads", "base median", "new median",
                                 "new/base", "p"}), css)


def ratio_figure(data: pd.DataFrame, base_label: str, new_label: str) -> str:
    """Ratio new/base per measurement, one column per backend, coloured by label."""
    backends = sorted(set(data["backend"]))
    fig = figures.new_figure(4.6)
    fig.subplots_adjust(left=0.08, right=0.83, top=0.9, bottom=0.22)
    ax = fig.subplots()
    for bi, backend in enumerate(backends):
        g = data[data["backend"] == backend].reset_index(drop=True)
        offs = (np.arange(len(g)) / max(len(g) - 1, 1) - 0.5) * 0.6 if len(g) > 1 else [0.0]
        for lab in (stats.SAME, stats.UNRESOLVED, stats.FASTER, stats.SLOWER):
            sel = (g["label"] == lab).to_numpy()
            if sel.any():
                ax.plot(bi + np.asarray(offs)[sel], g.loc[sel, "ratio"].to_numpy(float),
                        linestyle="none", marker="o", markersize=3, alpha=0.7,
                        color=LABEL_COLORS[lab])
    for lab in (stats.SLOWER, stats.FASTER, stats.SAME, stats.UNRESOLVED):
        ax.plot([], [], linestyle="none", marker="o", color=LABEL_COLORS[lab], label=lab)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(backends)), backends, rotation=20, ha="right")
    ax.set_xlim(-0.6, len(backends) - 0.4)
    figures.log_scale(ax, "y", np.r_[data["ratio"].to_numpy(float), 0.9, 1.1])
    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    ax.yaxis.set_minor_formatter(plain)
    figures.grid(ax)
    ax.set_ylabel("time new / base (log scale)")
    ax.set_title(f"{new_label} / {base_label}, every shared ok measurement "
                 "(below 1: new is faster)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figures.png(fig)


# -- the conclusion: per class, new / base GPU time beside the ceilings' ratio ------------

#: the conclusion's classes: the verdicts' workload classes (:func:`verdicts.classes`),
#: then the rows a host link bounds (the ``transfer`` kernel and every ``+transfers``
#: implementation); each with the measured ceiling that bounds it (its record's
#: :attr:`~gpubench.workloads.WorkloadClass.bound`)
TRANSFERS = HOST_TRANSFERS.key
BOUND_TEXT = {"copy": "device copy", "gemm": "SGEMM/DGEMM", "link": "pinned host link",
              "": "no"}


def class_of(kernel: str, implementation: str = "") -> str:
    """The workload class of a GPU row (as the verdicts name them; '' if none)."""
    if kernel == link_kernel() or implementation.endswith("+transfers"):
        return TRANSFERS
    return next((c for c, kernels in classes().items() if kernel in kernels), "")


def _ceiling(env: Environment, key: str) -> float:
    c = env.data.get("ceilings")
    v = c.get(key) if isinstance(c, dict) else None
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) and x > 0 else math.nan


def _link(env: Environment) -> float:
    """The pinned host-to-device rate at the largest probed size (or the older record's
    one rate at 1 GiB)."""
    from gpubench.ceilings import link_table

    c = env.data.get("ceilings")
    table = link_table(c, "pinned_gbps").get("h2d") if isinstance(c, dict) else None
    return table[max(table)] if table else _ceiling(env, "h2d_pinned_gbps")


def ceiling_ratios(base: ResultSet, new: ResultSet) -> dict[str, float]:
    """new / base of each measured ceiling: ``copy`` (device-to-device), ``sgemm``,
    ``dgemm``, ``gemm`` (their geometric mean), ``link`` (pinned host-to-device); NaN
    where either record lacks it."""
    out = {k: _ceiling(new.env, key) / _ceiling(base.env, key)
           for k, key in (("copy", "d2d_copy_gbps"), ("sgemm", "sgemm_gflops"),
                          ("dgemm", "dgemm_gflops"))}
    out["gemm"] = math.sqrt(out["sgemm"] * out["dgemm"])
    out["link"] = _link(new.env) / _link(base.env)
    return out


#: how far past the largest change of a measured ceiling a row may move and still be
#: the hardware: caches, clocks and launch paths differ by more than the probe's few
#: ceilings show, but not by half as much again; a row beyond is an artefact of one
#: side's timing and is set apart rather than read as a result
PLAUSIBLE_SLACK = 1.5
#: the probe's ceilings that bound each device's rows (``host.json`` ``ceilings``)
DEVICE_CEILINGS = {"gpu": ("d2d_copy_gbps", "sgemm_gflops", "dgemm_gflops"),
                   "cpu": ("cpu_copy_gbps", "cpu_sgemm_gflops", "cpu_dgemm_gflops")}


def plausible_bounds(base: ResultSet, new: ResultSet) -> dict[str, tuple[float, float]]:
    """Per device, the time ratios new / base that the two machines' measured ceilings
    can explain: from the largest speed-up of any ceiling to the largest slow-down, each
    widened by :data:`PLAUSIBLE_SLACK` (and never narrower than ``1 / slack .. slack``).
    A device without a ceiling in both records has no bound: nothing is set apart."""
    out = {}
    for device, keys in DEVICE_CEILINGS.items():
        ratios = [_ceiling(new.env, k) / _ceiling(base.env, k) for k in keys]
        if device == "gpu":
            ratios.append(_link(new.env) / _link(base.env))
        ratios = [x for x in ratios if math.isfinite(x) and x > 0]
        if ratios:
            out[device] = (1 / (max(*ratios, 1.0) * PLAUSIBLE_SLACK),
                           max(*(1 / x for x in ratios), 1.0) * PLAUSIBLE_SLACK)
    return out


def gpu_cases(cmp: pd.DataFrame) -> pd.DataFrame:
    """The like-for-like GPU cases: both sets ok, the same framework, implementation,
    kernel, variant, size, dtype, in the mode most GPU rows share, none beyond what the
    ceilings allow (:func:`plausible_bounds`); each with its class
    and its GPU time ratio new / base (each machine's own rows, own timer)."""
    gpu = cmp[(cmp["device"] == "gpu") & (cmp["status_base"] == "ok")
              & (cmp["status_new"] == "ok")]
    if "beyond_ceilings" in gpu:  # artefacts of one side's timing, not the hardware
        gpu = gpu[~gpu["beyond_ceilings"].astype(bool)]
    if gpu.empty:
        return gpu.assign(cls=pd.Series(dtype=object), band=pd.Series(dtype=object),
                          time_ratio=pd.Series(dtype=float))
    mode = gpu["mode"].value_counts().sort_index().idxmax()
    gpu = gpu[gpu["mode"] == mode]
    ratio = gpu["median_new"].astype(float) / gpu["median_base"].astype(float)
    out = gpu.assign(cls=[class_of(str(k), str(i)) for k, i in
                          zip(gpu["kernel"], gpu["implementation"], strict=True)],
                     band=[band_of(str(k), float(n)) for k, n in
                           zip(gpu["kernel"], gpu["size_key"], strict=True)],
                     time_ratio=ratio)
    return out[np.isfinite(out["time_ratio"]) & (out["time_ratio"] > 0) & (out["cls"] != "")]


@dataclass
class ClassRatio:
    """One class of the conclusion: its like-for-like GPU cases' time ratios new / base."""

    cls: str
    n: int
    geomean: float
    q1: float
    q3: float
    lo: float
    hi: float
    faster: int
    slower: int
    unchanged: int
    bound: str
    ceiling_ratio: float
    large: float = math.nan
    n_large: int = 0

    @property
    def title(self) -> str:
        """The class as the report shows it."""
        return class_title(self.cls)

    @property
    def expected(self) -> float:
        """The time ratio the ceilings predict: base ceiling / new ceiling."""
        return 1.0 / self.ceiling_ratio if self.ceiling_ratio > 0 else math.nan


def class_ratios(cases: pd.DataFrame, ceilings: dict[str, float]) -> list[ClassRatio]:
    """Per class (in the verdicts' order, transfers last): the geometric mean of the
    cases' time ratios with their quartiles and range, the labels counted, and the
    geometric mean over the large size band alone (:func:`verdicts.band_of`), where
    fixed costs matter least and the ceilings should tell most."""
    out = []
    for cls in (*classes(), TRANSFERS):
        g = cases[cases["cls"] == cls]
        if g.empty:
            continue
        r = g["time_ratio"].to_numpy(float)
        q1, q3 = np.quantile(r, [0.25, 0.75])
        faster = int((g["label"] == stats.FASTER).sum())
        slower = int((g["label"] == stats.SLOWER).sum())
        bound = workload_class(cls).bound
        big = g.loc[g["band"] == "large", "time_ratio"].to_numpy(float)
        out.append(ClassRatio(cls, len(g), float(np.exp(np.log(r).mean())), float(q1),
                              float(q3), float(r.min()), float(r.max()), faster, slower,
                              len(g) - faster - slower, bound, ceilings.get(bound, math.nan),
                              float(np.exp(np.log(big).mean())) if len(big) else math.nan,
                              len(big)))
    return out


def host_numpy_ratio(cmp: pd.DataFrame) -> tuple[float, int]:
    """Geometric mean new / base time of the NumPy rows both hosts ran, and how many."""
    framework = cmp["backend"].astype(str).map(lambda b: split_backend_id(b)[0])
    np_rows = cmp[(framework == BASELINE_FRAMEWORK)
                  & (cmp["status_base"] == "ok") & (cmp["status_new"] == "ok")]
    r = (np_rows["median_new"].astype(float) / np_rows["median_base"].astype(float)).to_numpy()
    r = r[np.isfinite(r) & (r > 0)]
    return (float(np.exp(np.log(r).mean())) if len(r) else math.nan), len(r)


def _x(v: float) -> str:
    return f"{v:.2f}×" if math.isfinite(v) else "—"


# -- the verdict: the first line, in words a reader need not invert ----------------------

#: the verdict's groups, in the order the first line names them: the classes a reader
#: weighs together (the memory-bound ones share one ceiling, the device copy)
VERDICT_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("memory-bound work", tuple(c.key for c in KERNEL_CLASSES if c.bound == "copy")),
    (GEMM.title, (GEMM.key,)),
    ("linear algebra and autodiff",
     tuple(c.key for c in KERNEL_CLASSES if c.bound == "gemm" and c != GEMM)),
    (TRANSFERS, (TRANSFERS,)),
)
#: the table's class of a row the verdict's classes do not hold
OTHER_GPU = "other GPU work"
HOST_CPU = "CPU (each host's own)"


def _n(count: int, noun: str) -> str:
    """``1 case``, ``2 cases``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _f(x: float) -> str:
    """A factor as a reader says it: 1.27, 27."""
    return f"{x:.2f}" if x < 10 else f"{x:,.0f}"


def _spread(ratios: np.ndarray) -> tuple[float, float, float]:
    """Geometric mean and middle half (quartiles) of ratios new / base."""
    q1, q3 = np.quantile(ratios, [0.25, 0.75])
    return float(np.exp(np.log(ratios).mean())), float(q1), float(q3)


def change_words(ratio: float, q1: float, q3: float, min_effect: float = stats.MIN_EFFECT,
                 more: str = "faster", less: str = "slower") -> str:
    """A ratio new / base of a cost (time, energy per call) with its middle half, in words:
    "1.27× faster (1.03–1.39×)" when the whole middle half says so and the mean is beyond
    the minimum effect, "1.20× slower (…)" likewise, "the same (within ±5 %)" when the
    middle half lies within it, else "too close to call" with the middle half as gains."""
    if not all(math.isfinite(v) and v > 0 for v in (ratio, q1, q3)):
        return "not measured in both"
    gain, lo, hi = 1 / ratio, 1 / q3, 1 / q1
    top = 1 + min_effect
    if lo > 1 and gain >= top:
        return f"{_f(gain)}× {more} ({_f(lo)}–{_f(hi)}×)"
    if hi < 1 and gain <= 1 / top:
        return f"{_f(ratio)}× {less} ({_f(q1)}–{_f(q3)}×)"
    if 1 / top <= lo and hi <= top:
        return f"the same (within ±{min_effect:.0%})"
    return f"too close to call ({_f(lo)}–{_f(hi)}× as fast)" if more == "faster" else (
        f"too close to call ({_f(lo)}–{_f(hi)}× the work per joule)")


def energy_cases(cmp: pd.DataFrame) -> pd.DataFrame:
    """The GPU cases with an energy reading on both machines (both ok, none beyond the
    ceilings), each with its class and its energy per call new / base."""
    e = cmp[(cmp["device"] == "gpu") & (cmp["status_base"] == "ok")
            & (cmp["status_new"] == "ok")]
    if "energy_base" not in e:
        return e.assign(cls=pd.Series(dtype=object), energy_ratio=pd.Series(dtype=float))
    e = e[(e["energy_base"].astype(float) > 0) & (e["energy_new"].astype(float) > 0)]
    if "beyond_ceilings" in e:
        e = e[~e["beyond_ceilings"].astype(bool)]
    e = e.assign(cls=[class_of(str(k), str(i)) for k, i in
                      zip(e["kernel"], e["implementation"], strict=True)],
                 energy_ratio=e["energy_new"].astype(float) / e["energy_base"].astype(float))
    return e[e["cls"] != ""]


def machine_name(rs: ResultSet) -> str:
    """The run's GPU as a reader names it ("H200"), else its label."""
    gpus = rs.env.data.get("gpus")
    name = gpus[0].get("name") if isinstance(gpus, list) and gpus and isinstance(
        gpus[0], dict) else None
    return str(name).removeprefix("NVIDIA ").strip() if name else rs.label


def _names(base: ResultSet, new: ResultSet) -> tuple[str, str]:
    b, n = machine_name(base), machine_name(new)
    return (base.label, new.label) if b == n else (b, n)


def verdict_line(base: ResultSet, new: ResultSet, cases: pd.DataFrame,
                 ecases: pd.DataFrame, min_effect: float = stats.MIN_EFFECT) -> str:
    """The page's first line: per group of classes, how much faster the new machine is
    (geometric mean over the like-for-like GPU cases, the middle half in brackets), then
    the work per joule the same way; each in words, never a ratio to invert."""
    b, n = _names(base, new)
    parts, energy = [], []
    for group, members in VERDICT_GROUPS:
        r = cases.loc[cases["cls"].isin(members), "time_ratio"].to_numpy(float)
        if len(r):
            parts.append(f"{group} {change_words(*_spread(r), min_effect)}")
        e = ecases.loc[ecases["cls"].isin(members), "energy_ratio"].to_numpy(float)
        if len(e):
            energy.append(f"{group} {change_words(*_spread(e), min_effect, 'more', 'less')}")
    if not parts:
        return (f"{n} vs {b}: no GPU case is ok in both runs, so the comparison gives no "
                "verdict.")
    line = f"{n} vs {b}: " + ", ".join(parts)
    if energy:
        line += "; work per joule: " + ", ".join(energy)
    else:
        read = [side.label for side in (base, new) if _read_energy(side)]
        line += ("; work per joule not compared: neither run read energy" if not read
                 else f"; work per joule not compared: only {read[0]} read energy"
                 if len(read) == 1 else
                 "; work per joule not compared: no GPU case read energy in both runs")
    return line + "."


def _read_energy(rs: ResultSet) -> bool:
    """Whether a run read any energy per call (the quick suite reads none)."""
    e = rs.df.get("energy_j")
    return e is not None and bool((pd.to_numeric(e, errors="coerce") > 0).any())


def class_lines(classes: list[ClassRatio], ecases: pd.DataFrame, ceilings: dict[str, float],
                min_effect: float = stats.MIN_EFFECT) -> list[str]:
    """One line per class: the change in words over its cases, the large sizes alone,
    what the measured ceiling predicts, and the work per joule where both read it."""
    out = []
    for c in classes:
        text = (f"{c.title}: {change_words(c.geomean, c.q1, c.q3, min_effect)} over "
                f"{_n(c.n, 'case')} ({c.faster:,} surely faster, {c.slower:,} surely slower, "
                f"{c.unchanged:,} the same or too close to call)")
        if c.n_large and math.isfinite(c.large):
            text += f"; at large sizes alone {_f(1 / c.large)}× as fast ({_n(c.n_large, 'case')})"
        ratio = ceilings.get(c.bound, math.nan)
        if math.isfinite(ratio) and ratio > 0:
            text += (f"; the {BOUND_TEXT[c.bound]} ceiling the probe measured is "
                     f"{_f(ratio)}× the base's, so the hardware alone predicts "
                     f"{_f(ratio)}× as fast")
        e = ecases.loc[ecases["cls"] == c.cls, "energy_ratio"].to_numpy(float)
        if len(e):
            text += (f"; work per joule {change_words(*_spread(e), min_effect, 'more', 'less')}"
                     f" ({_n(len(e), 'reading')}, one per case and machine)")
        out.append(text)
    return out


def run_facts(rs: ResultSet) -> str:
    """Where a run comes from, for the header: machine, suite, dates, commits."""
    def distinct(col: str, width: int) -> list[str]:
        if col not in rs.df:
            return []
        vals = rs.df[col].dropna().astype(str).str.strip()
        return sorted({v[:width] for v in vals if v and v.lower() != "nan"})

    dates = distinct("timestamp", 10) or [str(rs.env.get("timestamp") or "")[:10]]
    commits = distinct("git_commit", 7) or [str(rs.env.get("git_commit") or "")[:7]]
    dates = [d for d in dates if d] or ["date not recorded"]
    commits = [c for c in commits if c] or ["not recorded"]
    suite = (f"{rs.suite_name} suite" if rs.suite else "suite not recorded")
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return (f"{rs.label}: {suite}, measured {when}, commit"
            f"{'s' if len(commits) > 1 else ''} {', '.join(commits)}, "
            f"{len(rs.df):,} rows")


def beyond_text(bounds: dict[str, tuple[float, float]], n: int) -> str:
    """Why the rows beyond the ceilings are set apart, with the bounds in words."""
    if not bounds:
        return ("Neither record has the probe's ceilings on both machines, so no row is "
                "checked against what the hardware allows.")
    spans = "; ".join(f"{device.upper()} rows {_f(1 / lo)}× faster to {_f(hi)}× slower"
                      for device, (lo, hi) in bounds.items())
    return (f"{n:,} rows moved more than the two machines' measured ceilings (device copy, "
            f"SGEMM/DGEMM, host link; on the CPU its copy and BLAS) can explain, even "
            f"allowing {PLAUSIBLE_SLACK:g}× for caches, clocks and launch paths the probe "
            f"does not measure ({spans}). A change that large is an artefact of one side's "
            "timing (a device clock that counted a stall or a compilation, a host busy "
            "with other work), not the hardware: these rows are listed here and left out "
            "of the verdict and the per-class figures.")


def conclusion_text(base: ResultSet, new: ResultSet, cmp: pd.DataFrame,
                    classes: list[ClassRatio], ceilings: dict[str, float]) -> str:
    """How the verdict's figures are made, in a few sentences: which cases, which clock,
    what the brackets hold; the labels counted; what the speedups in the matrix are
    relative to (each host's own NumPy, so they do not compare the GPUs)."""
    b, n = _names(base, new)
    if not classes:
        return (f"No GPU case is ok in both {base.label} and {new.label}: no GPU "
                "conclusion can be drawn.")
    counts = {lab: int((cmp["label"] == lab).sum()) for lab in LABEL_ORDER}
    unchanged = counts[stats.SAME] + counts[stats.UNRESOLVED]
    n_cases = sum(c.n for c in classes)
    text = (f"Each figure compares the GPU time of the same code on each machine's own GPU "
            f"clock over the {_n(n_cases, 'like-for-like GPU case')} both runs measured: how "
            f"many times as fast the {n} is as the {b} (the geometric mean over the cases; "
            "in brackets, the middle half of the cases). \"Faster\" or \"slower\" needs "
            "the whole middle half on that side; \"too close to call\" means it straddles "
            f"no change. Of all {len(cmp):,} shared measurements (the CPU's too), "
            f"{counts[stats.FASTER]:,} are surely faster, {counts[stats.SLOWER]:,} surely "
            f"slower and {unchanged:,} the same or too close to call.")
    host, n_host = host_numpy_ratio(cmp)
    if math.isfinite(host) and host > 0:
        text += (f" Speedups in the matrices below are × each host's own NumPy, and NumPy "
                 f"ran {_f(1 / host)}× as fast on the {n}'s host ({_n(n_host, 'row')}): those "
                 "speedups do not compare the GPUs; the figures here use GPU times.")
    return text


def class_table(classes: list[ClassRatio]) -> pd.DataFrame:
    rows = [[c.title, str(c.n), _x(c.geomean), f"{_x(c.q1)}–{_x(c.q3)}",
             f"{_x(c.lo)}–{_x(c.hi)}", f"{_x(c.large)} ({c.n_large})", str(c.faster),
             str(c.slower), str(c.unchanged),
             f"{BOUND_TEXT[c.bound]} {_x(c.ceiling_ratio)}", _x(c.expected)]
            for c in classes]
    return text_table(["class", "cases", "GPU time new ÷ base (geomean)", "middle half",
                       "range", "large sizes only (cases)", "FASTER", "SLOWER",
                       "unchanged", "ceiling new ÷ base",
                       "time the ceiling predicts"], rows,
                      frozenset({"cases", "GPU time new ÷ base (geomean)", "FASTER",
                                 "SLOWER", "unchanged"}))


def class_frame(classes: list[ClassRatio]) -> pd.DataFrame:
    """The figure's data: one row per class."""
    return pd.DataFrame([{"cls": f"{c.title} ({c.n})", "geomean": c.geomean, "q1": c.q1,
                          "q3": c.q3, "lo": c.lo, "hi": c.hi, "expected": c.expected,
                          "large": c.large,
                          "bound": BOUND_TEXT[c.bound]} for c in classes])


def class_figure(data: pd.DataFrame, base_label: str, new_label: str) -> str:
    """Per class: GPU time new / base (geometric mean, middle half, range) and the ratio
    the measured ceilings predict."""
    n = len(data)
    fig = figures.new_figure(1.1 + 0.42 * n)
    fig.subplots_adjust(left=0.2, right=0.78, top=0.84, bottom=0.2)
    ax = fig.subplots()
    y = np.arange(n)[::-1]
    ax.hlines(y, data["lo"], data["hi"], color="#bbbbbb", linewidth=1, label="range")
    ax.hlines(y, data["q1"], data["q3"], color="#2166ac", linewidth=5, alpha=0.5,
              label="middle half")
    ax.plot(data["geomean"], y, "o", color="#2166ac", label="geometric mean")
    ax.plot(data["large"], y, "^", color="#1b7837", label="large sizes only")
    ax.plot(data["expected"], y, "D", color="#b2182b", markerfacecolor="none",
            label="predicted by the ceilings")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(y, data["cls"])
    from gpubench.report.plots import class_xlim

    lo, hi = class_xlim(data)
    figures.log_scale(ax, "x", np.r_[lo, hi])
    ax.set_xlim(lo, hi)
    from matplotlib.ticker import FixedLocator, NullLocator

    from gpubench.report.plots import CLASS_TICKS

    ax.xaxis.set_major_locator(FixedLocator([t for t in CLASS_TICKS if lo <= t <= hi]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}×"))
    ax.xaxis.set_minor_locator(NullLocator())
    figures.grid(ax)
    ax.set_xlabel("GPU time new / base (log scale; below 1: new is faster; ranges cut at "
                  "the axis)")
    ax.set_title(f"{new_label} / {base_label}: like-for-like GPU cases per class", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return figures.png(fig)


def env_diff(base: ResultSet, new: ResultSet) -> pd.DataFrame:
    """The environment fields and package versions side by side; differences marked."""
    def gpu(env: Environment) -> str:
        g = env.data.get("gpus")
        if isinstance(g, list) and g:
            return "; ".join(f"{x.get('name', UNKNOWN)} (driver {x.get('driver_version', '?')})"
                             if isinstance(x, dict) else str(x) for x in g)
        return "none"

    rows = []
    for what in ("host", "cpu_model", "cpu_cores", "os", "python_version", "git_commit",
                 "timestamp"):
        rows.append([what, str(base.env.get(what)), str(new.env.get(what))])
    rows.append(["GPUs", gpu(base.env), gpu(new.env)])
    for key in ("d2d_copy_gbps", "sgemm_gflops", "dgemm_gflops", "cpu_copy_gbps"):
        vals = []
        for s in (base, new):
            c = s.env.data.get("ceilings")
            v = c.get(key) if isinstance(c, dict) else None
            vals.append(f"{float(v):,.0f}" if isinstance(v, int | float) else UNKNOWN)
        rows.append([f"ceiling {key}", *vals])
    pb, pn = base.env.data.get("packages") or {}, new.env.data.get("packages") or {}
    if isinstance(pb, dict) and isinstance(pn, dict):
        for pkg in sorted(set(pb) | set(pn)):
            rows.append([f"package {pkg}", str(pb.get(pkg, "—")), str(pn.get(pkg, "—"))])
    classes = ["warn" if r[1] != r[2] else "" for r in rows]
    return text_table(["field", base.label, new.label], rows, row_classes=classes)


@dataclass
class Comparison:
    """What the comparison page and its Markdown show, computed once."""

    base: ResultSet
    new: ResultSet
    alpha: float
    min_effect: float
    n_all: int
    n_shared: int
    inputs: pd.DataFrame
    banners: list[str]
    choice: pd.DataFrame | None
    counts: pd.DataFrame
    figure: Figure | None
    groups: list[tuple[str, pd.DataFrame]]
    n_differs: int
    differs: pd.DataFrame | None
    n_not_comparable: int
    not_comparable: pd.DataFrame | None
    all_rows: pd.DataFrame
    only: list[tuple[str, int, pd.DataFrame | None]]
    environments: pd.DataFrame
    conclusion: str = ""
    classes: pd.DataFrame | None = None
    class_fig: Figure | None = None
    n_unchanged: int = 0
    #: the first line: per group of classes, faster / slower / the same, in words
    verdict: str = ""
    #: one line per class, in words
    class_lines: list[str] = field(default_factory=list)
    #: each run's machine, suite, dates and commits (base, then new)
    runs: list[str] = field(default_factory=list)
    n_beyond: int = 0
    beyond_note: str = ""
    beyond: pd.DataFrame | None = None


def comparison(base: ResultSet, new: ResultSet, cmp: pd.DataFrame, alpha: float,
               min_effect: float) -> Comparison:
    """The comparison's data: tables as DataFrames of formatted cells, the figure."""
    shared = cmp[cmp["label"] != "NOT COMPARABLE"]
    beyond_rows = (cmp[cmp["beyond_ceilings"].astype(bool)] if "beyond_ceilings" in cmp
                   else cmp.iloc[:0])
    # only what changed within what the hardware allows; listed by class and
    # significance (changed_table), the rows beyond the ceilings apart
    differs = cmp[cmp["label"].isin([stats.FASTER, stats.SLOWER])
                  & ~cmp.index.isin(beyond_rows.index)]
    ceilings = ceiling_ratios(base, new)
    cases = gpu_cases(cmp)
    ecases = energy_cases(cmp)
    classes = class_ratios(cases, ceilings)
    class_fig = None
    if classes:
        frame = class_frame(classes)
        alt = (f"Per class, GPU time {new.label} / {base.label} over the like-for-like "
               "cases (log scale; dot: geometric mean, bar: middle half, line: range, "
               "triangle: large sizes only; open diamond: the ratio the measured ceilings "
               "predict): "
               + "; ".join(f"{c.title} {_x(c.geomean)} over {c.n} cases, large sizes "
                           f"{_x(c.large)}, predicted {_x(c.expected)}" for c in classes)
               + ".")
        class_fig = Figure(alt, class_figure, (frame, base.label, new.label), "compare")
    inputs = text_table(["", "base", "new"], [
        ["label", base.label, new.label],
        ["suite", base.suite_name, new.suite_name],
        ["timings", f"{base.timings} ({len(base.df)} rows)", f"{new.timings} ({len(new.df)} rows)"],
        ["samples", base.samples.note, new.samples.note],
    ])
    banners = [f"{s.label}: {note}" for s in (base, new)
               for note in [*s.notes, *([s.env.problem] if s.env.problem else [])]]
    figure = None
    if not shared.empty:
        fig_data = shared[["backend", "ratio", "label"]].reset_index(drop=True)
        alt = (f"Strip plot of the time ratio {new.label} / {base.label} for "
               f"{len(shared)} shared measurements, one column per backend, log scale: "
               f"{int((shared['label'] == stats.FASTER).sum())} FASTER (blue), "
               f"{int((shared['label'] == stats.SLOWER).sum())} SLOWER (red), "
               f"{int((shared['label'] == stats.SAME).sum())} SAME (grey), "
               f"{int((shared['label'] == stats.UNRESOLVED).sum())} UNRESOLVED (orange).")
        figure = Figure(alt, ratio_figure, (fig_data, base.label, new.label), "compare")
    groups = [(by, t) for by in ("backend", "kernel")
              if (t := group_table(cmp, by)) is not None]
    nc = cmp[cmp["label"] == "NOT COMPARABLE"]
    only = []
    differ = suites_differ(base, new)
    for one, other, name in ((base, new, "base"), (new, base, "new")):
        rest = only_in(one, other)
        only.append((name, len(rest), None if rest.empty else only_table(rest, differ)))
    if differ:
        banners.insert(0, suite_banner(base, new, len(shared), only))
    unchanged = int((cmp["label"].isin([stats.SAME, stats.UNRESOLVED])
                     & ~cmp.index.isin(beyond_rows.index)).sum())
    return Comparison(base, new, alpha, min_effect, len(cmp), len(shared), inputs, banners,
                      own_numpy_labels(matrix_side_by_side(base, new)), counts_table(cmp),
                      figure, groups, len(differs),
                      None if differs.empty else changed_table(differs),
                      len(nc), None if nc.empty else detail_table(nc), detail_table(cmp),
                      only, env_diff(base, new),
                      conclusion_text(base, new, cmp, classes, ceilings),
                      class_table(classes) if classes else None, class_fig, unchanged,
                      verdict_line(base, new, cases, ecases, min_effect),
                      class_lines(classes, ecases, ceilings, min_effect),
                      [run_facts(base), run_facts(new)], len(beyond_rows),
                      beyond_text(plausible_bounds(base, new), len(beyond_rows)),
                      None if beyond_rows.empty else changed_table(beyond_rows))


#: what a speedup in either matrix is relative to
OWN_NUMPY = "× its own host's NumPy"


def own_numpy_labels(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """The side-by-side matrices with every speedup aspect labelled as relative to each
    host's own NumPy (two hosts, two baselines: the figures are not GPU against GPU)."""
    if table is None:
        return None
    out = table.copy()
    speed = out["aspect"].astype(str).str.startswith("speedup: ")
    out.loc[speed, "aspect"] = out.loc[speed, "aspect"] + f" ({OWN_NUMPY})"
    out.attrs = dict(table.attrs)
    return out


def render_html(base: ResultSet, new: ResultSet, cmp: pd.DataFrame, alpha: float,
                min_effect: float, figs: figures.FigureQueue,
                data: Comparison | None = None) -> str:
    """The comparison page (``compare.html.j2``); the figure is queued on ``figs``."""
    from gpubench.report.sections.common import figure_drawer

    return str(render.render_html(
        "compare.html.j2", c=data or comparison(base, new, cmp, alpha, min_effect),
        css=Markup(CSS), figure=figure_drawer(figs)))


def render_markdown(base: ResultSet, new: ResultSet, cmp: pd.DataFrame, alpha: float,
                    min_effect: float, data: Comparison | None = None) -> str:
    """The comparison's Markdown (``compare.md.j2``)."""
    return render.render_md("compare.md.j2",
                            c=data or comparison(base, new, cmp, alpha, min_effect))


def matrix_side_by_side(base: ResultSet, new: ResultSet) -> pd.DataFrame | None:
    """Each set's "Which framework?" matrix, side by side (:mod:`.matrix`)."""
    from gpubench.report import matrix, sections

    built = []
    for s in (base, new):
        df = sections.canonical_order(s.df)
        m, _, _ = matrix.for_inputs(df, s.samples, sections.crossings(df, s.env.data),
                                    pd.DataFrame())
        built.append((m, df, s.samples))
    return matrix.side_by_side(built[0], built[1])


def build_compare(base_spec: str | Path, new_spec: str | Path, out_html: str | Path,
                  out_md: str | Path | None = None, base_label: str | None = None,
                  new_label: str | None = None, alpha: float = stats.ALPHA,
                  min_effect: float = stats.MIN_EFFECT, workers: int | None = None,
                  ) -> pd.DataFrame:
    """Write the comparison page (and Markdown); returns the per-measurement table."""
    base = resolve(base_spec, base_label)
    new = resolve(new_spec, new_label)
    if base.label == new.label:
        base.label, new.label = f"base: {base.label}", f"new: {new.label}"
    cmp = compare_sets(base, new, alpha, min_effect)
    data = comparison(base, new, cmp, alpha, min_effect)
    figs = figures.FigureQueue()
    page = figs.render(render_html(base, new, cmp, alpha, min_effect, figs, data), workers)
    results.atomic_write_text(out_html, page)
    if out_md:
        results.atomic_write_text(out_md, render_markdown(base, new, cmp, alpha, min_effect,
                                                          data))
    return cmp


def make_parser() -> argparse.ArgumentParser:
    """The options of ``gpubench compare`` (:func:`gpubench.cli_parsers.compare_parser`)."""
    return compare_parser()


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``gpubench compare --base B --new N --html H [--md M]``."""
    p = make_parser()
    return run(p.parse_args(argv), p)


def run(args: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    """Compare the result sets that the parsed ``args`` name (``gpubench compare`` parses
    them first, so that its --help needs none of this module's imports)."""
    from gpubench import safety

    outputs = {"--html": args.html, "--md": args.md}
    clash = safety.outputs_among_inputs(
        outputs, [*safety.result_set_files(args.base), *safety.result_set_files(args.new)]
    ) or safety.unwritable_output(outputs)
    if clash is not None:
        p.exit(2, f"gpubench compare: {clash}\n")
    default_root = Path(COMPARE_HTML).parts[0]
    if not Path(default_root).exists() and any(
            Path(out).parts[:1] == (default_root,) for out in outputs.values() if out):
        # the folder that `gpubench run` writes into: marked as made by gpubench, so a
        # later run does not refuse it as a folder of someone else's files
        safety.mark_results_folder(default_root)
    try:
        cmp = build_compare(args.base, args.new, args.html, args.md, args.base_label,
                            args.new_label, args.alpha, args.min_effect, args.jobs)
    except (results.SchemaError, WriteError) as exc:
        p.exit(2, f"gpubench compare: {exc}\n")
    counts = ", ".join(f"{lab} {int((cmp['label'] == lab).sum())}" for lab in LABEL_ORDER)
    print(f"{len(cmp)} shared measurements: {counts}")
    return 0
