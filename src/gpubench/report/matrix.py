"""'Which framework?': the comparison matrix of the source documents, filled from this
run's rows.

One row per framework and device, one column per aspect the source documents assert
(speedup per workload class, call overhead, first-call cost, % of ceiling, code size,
multi-GPU scaling, crossover, autodiff, correctness, work per joule, device memory).
Every cell keeps the rows it came from (:attr:`Cell.rows`, indices of the prepared
timings frame), which the page lists, so each number can be traced to ``timings.csv``.
A cell without data says ``not measured``, never a guess. The decisions (like-for-like
class verdicts, one crossover per framework and class, first-call cost where compilation
happens) are made in :mod:`gpubench.report.verdicts`; this module turns them into cells,
sentences ("Choose X when ...") and the source documents' claims with a verdict.

Speedups are on the caller's clock (pipelined; CPU: wall), against the fastest NumPy
row of the same case: what a Python loop waits for.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpubench.backends import backend_classes, reader_name, split_backend_id
from gpubench.kernels.autodiff import SPEC as AUTODIFF
from gpubench.kernels.launch_overhead import SPEC as LAUNCH_OVERHEAD
from gpubench.report import headline, render, stats, verdicts
from gpubench.report.base import BASELINE_FRAMEWORK, cpu_only, fmt_time
from gpubench.report.render import text_table
from gpubench.report.sections.crossover import reference_speedups
from gpubench.report.verdicts import NOT_MEASURED, SMALL, classes, speedup_classes
from gpubench.spec import get_kernel, kernel_specs

#: the figures of the source documents the claims are checked against
SOURCE_SPEEDUP = (10.0, 100.0)
SOURCE_CROSSOVER = 10_000
#: from this median speedup over plain Python loops on a claim counts as holding
LOOPS_SPEEDUP = 10.0


def _class_kernels(cls: str) -> tuple[str, ...]:
    """The kernels of a class; small arrays: those of :data:`verdicts.SMALL_OF`."""
    if cls == SMALL:
        return tuple(k for c in verdicts.SMALL_OF for k in classes().get(c, ()))
    return classes().get(cls, ())


@dataclass
class Cell:
    """One matrix cell: its text, the number behind it (for sentences and comparisons),
    and the timings rows it came from."""

    text: str
    value: float = math.nan
    rows: list[int] = field(default_factory=list)
    lo: float = math.nan
    hi: float = math.nan

    @property
    def measured(self) -> bool:
        return not self.text.startswith(NOT_MEASURED)


def _nm(why: str) -> Cell:
    return Cell(f"{NOT_MEASURED}: {why}")


def _x(v: float) -> str:
    if not math.isfinite(v):
        return "—"
    return f"{v:,.0f}×" if v >= 100 else f"{v:.3g}×"


#: results computed once per prepared frame (which is never changed after it is
#: prepared): the matrix asks for the same rows for every backend and aspect
_MEMO: dict[tuple[int, Any], tuple[pd.DataFrame, Any]] = {}


def _memo(df: pd.DataFrame, key: Any, make: Any) -> Any:
    slot = (id(df), key)
    hit = _MEMO.get(slot)
    if hit is not None and hit[0] is df:
        return hit[1]
    if len(_MEMO) > 32:
        _MEMO.clear()
    value = make()
    _MEMO[slot] = (df, value)  # the frame is kept, so its id cannot be reused meanwhile
    return value


def _ok_hot(df: pd.DataFrame) -> pd.DataFrame:
    return _memo(df, "ok_hot", lambda: df[
        (df["status"] == "ok") & (df["mode"] == "hot")
        & ~df["implementation"].astype(str).str.endswith("+transfers")])


def _range_cell(values: pd.Series, rows: pd.Index, fmt: Any, unit: str = "") -> Cell:
    v = values.to_numpy(float)
    med, lo, hi = float(np.median(v)), float(v.min()), float(v.max())
    spread = f" ({fmt(lo)}–{fmt(hi)}, {len(v)} cases)" if len(v) > 1 else " (1 case)"
    return Cell(f"{fmt(med)}{unit}{spread}", med, [int(i) for i in rows], lo, hi)


def _range(lo: float, hi: float) -> str:
    return f"{_x(lo)}–{_x(hi)}"


def speedup_cell(found: Mapping[str, Mapping[str, verdicts.ClassVerdict]], backend: str,
                 cls: str) -> Cell:
    """The backend's speedup over NumPy in the class's headline band (the largest
    band measured; small arrays: the small band), over the cases of the verdict."""
    if split_backend_id(backend)[0] == BASELINE_FRAMEWORK:
        return Cell("1× (baseline)", 1.0)
    per = found.get(cls, {})
    band = next((b for b in reversed(verdicts.BAND_NAMES) if b in per), None)
    if band is None:
        kernels = "/".join(_class_kernels(cls))
        return _nm(f"no ok {kernels} rows with a NumPy baseline")
    v = per[band]
    where = f"{band}: {v.sizes_text()}"
    for st in v.ranked:
        if st.backend == backend:
            n = len(st.speedups)
            spread = f"; cases {_range(st.lo, st.hi)}" if n > 1 else ""
            return Cell(f"{_x(st.median)} (range {_range(st.range_lo, st.range_hi)}{spread}, "
                        f"{n} case{'s' if n != 1 else ''}; {where})", st.median, st.rows,
                        st.range_lo, st.range_hi)
    for st in v.partial:
        if st.backend == backend:
            return Cell(f"{_x(st.median)} over {len(st.cases)} of {len(v.cases)} cases, "
                        f"not ranked: lacks {_missing(v, st)} ({where})", st.median, st.rows,
                        st.lo, st.hi)
    return _nm(f"no ok {'/'.join(v.kernels)} rows with a NumPy baseline ({band} sizes)")


def _missing(v: verdicts.ClassVerdict, st: verdicts.Standing) -> str:
    """The cases of the verdict a partly measured framework lacks, briefly."""
    lacks = [c for c in v.cases if c not in st.cases]
    text = ", ".join(f"{k}/{var} {d}" for k, var, d, _s in lacks[:3])
    return text + (f" and {len(lacks) - 3} more" if len(lacks) > 3 else "")


def overhead_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = _ok_hot(df)
    rows = rows[(rows["backend"] == backend) & (rows["kernel"] == LAUNCH_OVERHEAD.name)
                & (rows["caller_s"] > 0)].sort_values("caller_s", kind="mergesort")
    if rows.empty:
        return _nm("no ok launch_overhead rows")
    r = rows.iloc[0]
    sync = f", sync {fmt_time(r['sync_s'])}" if r["device"] == "gpu" else " wall"
    return Cell(f"{fmt_time(r['caller_s'])}{sync} ({r['implementation']})",
                float(r["caller_s"]), [int(rows.index[0])])


def first_call_cell(df: pd.DataFrame, backend: str) -> Cell:
    """The first call's extra cost over a steady call (compilation, autotuning, first
    allocation) where compilation happens: the first size of each case and
    implementation, cold caches only, ``interop`` left out (its first call starts
    another framework). Median and largest, the largest named."""
    rows = verdicts.first_call_rows(df, backend)
    note = verdicts.cache_note(df, backend)
    if rows.empty:
        return _nm(note or "no first-call times")
    extra = rows["extra"]
    worst = extra.idxmax()
    impls = sorted(set(rows["implementation"].astype(str)))
    whose = f" (all {impls[0]}: the others met warm caches)" if len(impls) == 1 and len(
        set(df.loc[(df["backend"] == backend) & (df["status"] == "ok"),
                   "implementation"])) > 1 else ""
    later = verdicts.first_call_rows(df, backend, new_shape=True)
    shape = (f"; at each new size: median {fmt_time(float(later['extra'].median()))} "
             f"over {len(later)} rows" if not later.empty else "")
    return Cell(f"median {fmt_time(float(extra.median()))}, largest "
                f"{fmt_time(float(extra.max()))} ({rows.loc[worst, 'kernel']} "
                f"{rows.loc[worst, 'implementation']}) over {len(rows)} cases at their "
                f"first size{whose}{shape}", float(extra.median()),
                [int(i) for i in rows.index], float(extra.min()), float(extra.max()))


def ceiling_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = _ok_hot(df)
    rows = rows[(rows["backend"] == backend) & (rows["pct_of_ceiling"] > 0)]
    if rows.empty:
        return _nm("no row has a ceiling to compare with (the probe's)")
    top = rows.loc[rows.groupby(["kernel", "variant", "dtype"])["size_key"].idxmax()]
    return _range_cell(top["pct_of_ceiling"], top.index, lambda v: f"{v:.0f}", " %")


def code_cell(code: pd.DataFrame, framework: str) -> Cell:
    mine = code[code["framework"] == framework] if not code.empty else code
    if mine.empty:
        return _nm("no implementation source found")
    lines = mine["python"] + mine["cuda_c"]
    per_kernel = lines.groupby(mine["kernel"]).min()
    return Cell(f"{per_kernel.median():.0f} lines (shortest per kernel, median of "
                f"{len(per_kernel)} kernels)", float(per_kernel.median()))


def mpi_cell(mpi: pd.DataFrame, framework: str, device: str) -> Cell:
    if mpi.empty:
        return _nm("MPI was not run")
    rows = mpi[(mpi["framework"] == framework) & (mpi["device"] == device)
               & (mpi["status"] == "ok") & (pd.to_numeric(mpi["ranks"]) > 1)
               & pd.to_numeric(mpi["efficiency"], errors="coerce").notna()]
    if rows.empty:
        return _nm(f"no ok multi-rank scaling rows for {framework}-{device}")
    ranks = pd.to_numeric(rows["ranks"])
    top = rows[ranks == ranks.max()]
    eff = pd.to_numeric(top["efficiency"], errors="coerce")
    unit = "GPUs" if device == "gpu" else "ranks"
    if device == "gpu" and "gpu_uuids" in top.columns:
        cards = {u for v in top["gpu_uuids"].dropna().astype(str) for u in v.split(";") if u}
        if len(cards) == 1:  # ranks that shared one card (mpi.oversubscribe)
            unit = "ranks sharing 1 GPU"
    return Cell(f"{int(ranks.max())} {unit}: efficiency {eff.median():.2f} (median of "
                f"{len(eff)} MPI rows: {', '.join(sorted(set(top['job'].astype(str))))})",
                float(eff.median()))


def crossover_cell(cross: Mapping[tuple[str, str], verdicts.CrossSummary],
                   backend: str) -> Cell:
    """The elementwise class's crossover (the same figure as the bullet, the crossover
    section and the claims check), with host transfers beside it."""
    c = cross.get((backend, "elementwise"))
    if c is None or not c.n:
        return _nm("no elementwise rows on both CPU and GPU")
    return Cell(f"{c.sentence()} (elementwise class: {', '.join(c.cases)})", c.median,
                lo=c.lo, hi=c.hi)


def autodiff_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = df[(df["backend"] == backend) & (df["kernel"] == AUTODIFF.name)]
    if rows.empty:
        return Cell("no (no autodiff implementation)")
    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return Cell(f"{NOT_MEASURED}: {rows['status'].iloc[0]}: {rows['reason'].iloc[0]}"[:160],
                    rows=[int(i) for i in rows.index])
    return Cell(f"yes, measured ({', '.join(sorted(set(ok['variant'])))})",
                rows=[int(i) for i in ok.index])


def incidents_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = df[df["backend"] == backend]
    bad = rows[rows["status"].isin(["wrong_result", "implausible", "error"])]
    if bad.empty:
        return Cell(f"none in {len(rows)} rows", 0.0)
    counts = bad["status"].value_counts().sort_index()
    return Cell(", ".join(f"{n} {s}" for s, n in counts.items()) + f" of {len(rows)} rows",
                float(len(bad)), [int(i) for i in bad.index])


def energy_kernels(count: str) -> tuple[str, ...]:
    """The kernels whose work per joule is counted in ``count``: "bytes" (memory-bound,
    throughput in GB/s) or "flops" (compute-bound, throughput in GFLOP/s)."""
    bound, unit = ("memory", "GB/s") if count == "bytes" else ("compute", "GFLOP/s")
    return tuple(s.name for s in kernel_specs() if s.bound == bound and s.unit == unit)


def _sig2(x: float) -> str:
    return f"{x:.2g}"


def energy_uncertainty(env_data: Mapping[str, Any]) -> float | None:
    """The relative disagreement between the energy per call of the run's short windows
    and a long window on the same calls, where the probe made that cross-check
    (``energy_crosscheck.rel_diff`` in the environment record); None without one."""
    check = env_data.get("energy_crosscheck") if isinstance(env_data, Mapping) else None
    if not isinstance(check, Mapping):
        return None
    try:
        rel = abs(float(check.get("rel_diff")))
    except (TypeError, ValueError):
        return None
    return rel if math.isfinite(rel) else None


def power_limit(env_data: Mapping[str, Any]) -> float | None:
    """The board's enforced power limit in watts (the probe's ``power_limit_w`` of the
    first GPU), None where the probe read none."""
    gpus = env_data.get("gpus") if isinstance(env_data, Mapping) else None
    if not isinstance(gpus, list) or not gpus or not isinstance(gpus[0], Mapping):
        return None
    try:
        watts = float(gpus[0].get("power_limit_w"))
    except (TypeError, ValueError):
        return None
    return watts if math.isfinite(watts) and watts > 0 else None


def energy_cell(df: pd.DataFrame, backend: str, uncertainty: float | None = None,
                limit_w: float | None = None) -> Cell:
    """Work per joule of the backend's best implementation per case (fastest on the
    caller's clock among those read) at the largest read size: median GB/J over the
    memory-bound cases, median GFLOP/J over the GEMM cases, 2 significant figures, with
    the long-window cross-check's disagreement as the uncertainty where one was made;
    the mean power range beside it. A window whose mean power is above the board's
    enforced limit (``limit_w``) cannot be a true reading of the board's draw (the
    counter or the window is off): the figure is then *unresolved*, says how many
    windows and by how much, and is not ranked."""
    rows = _ok_hot(df)
    rows = rows[rows["backend"] == backend]
    measured = rows[rows["energy_j"] > 0]
    if measured.empty:
        why = rows["energy_reason"].dropna().astype(str)
        why = why[why != ""]
        # why the read ones have none, not that the others were not read (energy: best)
        why = pd.concat([why[~why.str.contains("energy: best only")],
                         why[why.str.contains("energy: best only")]])
        return Cell(why.iloc[0][:160] if len(why) else f"{NOT_MEASURED}: no energy readings")
    pm = f" ±{100 * uncertainty:.0f} %" if uncertainty is not None else ""
    parts, used = [], []
    gbj, mem_rows = verdicts.energy_per_case(df, backend, energy_kernels("bytes"), "bytes")
    if gbj:
        parts.append(f"{_sig2(float(np.median(gbj)))}{pm} GB/J memory-bound (median of "
                     f"{len(gbj)} cases)")
        used += mem_rows
    gfj, gemm_rows = verdicts.energy_per_case(df, backend, energy_kernels("flops"), "flops")
    if gfj:
        parts.append(f"{_sig2(float(np.median(gfj)))}{pm} GFLOP/J GEMM (median of "
                     f"{len(gfj)} cases)")
        used += gemm_rows
    if not parts:
        return _nm("energy read only for kernels without a byte or flop count")
    p = df.loc[used, "energy_power_w"]
    parts.append(f"{p.min():.0f}–{p.max():.0f} W")
    value = float(np.median(gbj)) if gbj else math.nan
    over = p[p > limit_w] if limit_w else p.iloc[:0]
    if len(over):
        parts.insert(0, f"unresolved: {len(over)} of {len(p)} energy windows read above "
                        f"the board's {limit_w:.0f} W power limit (up to "
                        f"{over.max():.0f} W)")
        value = math.nan
    return Cell("; ".join(parts), value, [int(i) for i in used])


def _memory_relative(kernel: str) -> bool:
    """Whether the kernel's peak reads as a multiple of its inputs plus outputs
    (:attr:`gpubench.spec.KernelSpec.memory_relative`; an unknown kernel: yes)."""
    try:
        return bool(get_kernel(kernel).memory_relative)
    except KeyError:
        return True


def _memory_rows(df: pd.DataFrame, backend: str | None = None) -> pd.DataFrame:
    """Ok hot rows with a peak-memory reading (GPU rows; :mod:`gpubench.memory`) of the
    kernels whose peak is read relative to their data: an allocation's or Monte Carlo's
    multiple of its (near-empty) inputs says nothing a user can scale by."""
    rows = _ok_hot(df)
    if backend is not None:
        rows = rows[rows["backend"] == backend]
    multiple = pd.to_numeric(rows["memory_multiple"], errors="coerce")
    relative = rows["kernel"].map(lambda k: _memory_relative(str(k))).astype(bool)
    return rows[multiple.gt(0) & np.isfinite(multiple) & relative]


def _frugal(rows: pd.DataFrame) -> pd.DataFrame:
    """Per case (kernel, variant, dtype) at its largest size read, the implementation
    needing the least memory over its data: what a user who picks it must have."""
    top = rows[rows["size_key"] == rows.groupby(["kernel", "variant", "dtype"])["size_key"]
               .transform("max")]
    return top.loc[top.groupby(["kernel", "variant", "dtype"])["memory_multiple"].idxmin()]


def memory_cell(df: pd.DataFrame, backend: str) -> Cell:
    """Peak device memory of a call as a multiple of its inputs plus outputs: the median
    over the backend's cases at their largest size read (the least-needing
    implementation of each), the range, and the case that needs the most."""
    if split_backend_id(backend)[1] == "cpu":
        return Cell("— (CPU)")
    rows = _memory_rows(df, backend)
    if rows.empty:
        mine = _ok_hot(df)
        why = mine.loc[mine["backend"] == backend, "memory_reason"].dropna().astype(str)
        why = why[why != ""]
        return Cell(why.iloc[0][:160] if len(why) else f"{NOT_MEASURED}: no memory readings")
    top = _frugal(rows)
    m = top["memory_multiple"].astype(float)
    most = top.loc[m.idxmax()]
    spread = f", {_x(m.min())}–{_x(m.max())}" if len(m) > 1 else ""
    return Cell(f"{_x(float(m.median()))} its inputs+outputs (median of {len(m)} cases at "
                f"their largest size{spread}; most: {most['kernel']}/{most['variant']} "
                f"{most['dtype']} {_x(float(most['memory_multiple']))}, "
                f"{float(most['memory_peak_bytes']) / 2**20:,.0f} MiB)",
                float(m.median()), [int(i) for i in top.index], float(m.min()),
                float(m.max()))


def _display(backend: str) -> str:
    return reader_name(backend)


def memory_sentence(df: pd.DataFrame, kernel: str = AUTODIFF.name, variant: str = "pinn",
                    what: str = "the PINN gradient") -> str:
    """"PyTorch needs 1.8× the inputs plus outputs for the PINN gradient, JAX 1.2×": each
    framework's least-needing implementation at the size and dtype most frameworks were
    read at (the largest such), most-needing first; '' without readings."""
    rows = _memory_rows(df)
    rows = rows[(rows["kernel"] == kernel) & (rows["variant"] == variant)]
    if rows.empty:
        return ""
    groups = rows.groupby(["dtype", "size_key"])["backend"].nunique()
    dtype, size = max(groups.index, key=lambda k: (groups[k], k[1], k[0] == "float32"))
    at = rows[(rows["dtype"] == dtype) & (rows["size_key"] == size)]
    per = at.groupby("backend")["memory_multiple"].min().sort_values(ascending=False,
                                                                      kind="mergesort")
    parts = [f"{_display(b)} {_x(float(v))}" for b, v in per.items()]
    first, *rest = parts
    name, _, x = first.rpartition(" ")
    tail = "".join(f", {p}" for p in rest)
    return (f"Device memory: {name} needs {x} the inputs plus outputs for {what} "
            f"({kernel}/{variant} {dtype}, size {int(size):,}){tail}.")


CROSSOVER = "CPU/GPU crossover"
ASPECTS = (
    *(f"speedup: {c}" for c in speedup_classes()),
    "call overhead", "first call, JIT", "% of ceiling", "code per kernel", "multi-GPU / ranks",
    CROSSOVER, "autodiff", "correctness incidents", "work per joule", "memory")


@dataclass
class Matrix:
    backends: list[str]
    cells: dict[tuple[str, str], Cell]
    #: the class verdicts (``{class: {band: verdict}}``) and the crossovers per
    #: (backend, class) the cells, sentences and claims are read from
    verdicts: dict[str, dict[str, verdicts.ClassVerdict]] = field(default_factory=dict)
    crossovers: dict[tuple[str, str], verdicts.CrossSummary] = field(default_factory=dict)
    #: per backend, the rows whose first call shows compilation (first size, cold cache)
    first_calls: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: per backend with a ("loops", ...) claim, its speedups over plain Python loops
    #: (:func:`loop_speedups`)
    loops: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: the paired rows of the claims judged case by case (:func:`claim_pairs`)
    pairs: dict[Any, Any] = field(default_factory=dict)
    #: the sentences on device memory (:func:`memory_sentence`), computed from the rows
    memory_lines: list[str] = field(default_factory=list)
    #: per (class, backend), its speedup over the crossovers' CPU reference where that is
    #: not single-thread NumPy (:func:`~.sections.crossover.reference_speedups`)
    against_reference: dict[tuple[str, str], tuple[float, list[str]]] = field(
        default_factory=dict)

    @property
    def gpu(self) -> bool:
        """Whether a GPU framework is in the matrix: without one, the crossover (a GPU
        against the CPU) is no aspect of it."""
        return any(split_backend_id(b)[1] == "gpu" for b in self.backends)

    def aspects(self) -> list[str]:
        """The aspects its tables show: :data:`ASPECTS`, less the crossover without a GPU."""
        return [a for a in ASPECTS if self.gpu or a != CROSSOVER]

    def table(self) -> pd.DataFrame | None:
        if not self.backends:
            return None
        aspects = self.aspects()
        rows = [[b] + [self.cells[(b, a)].text for a in aspects] for b in self.backends]
        return text_table(["framework-device", *aspects], rows)

    def tables(self) -> list[tuple[str, pd.DataFrame, list[str]]]:
        """The full matrix in three tables that fit a page (speedups; costs; the rest),
        each with its notes: a column whose every cell says the same "not measured: why"
        becomes one note, units stand in the headers (speedups: × NumPy), and the
        crossover's list of cases is named once."""
        if not self.backends:
            return []
        groups = (
            ("Speedup over NumPy", [f"speedup: {c}" for c in speedup_classes()]),
            ("Costs", ["call overhead", "first call, JIT", "% of ceiling",
                       "code per kernel", "work per joule", "memory"]),
            ("Crossover, scaling, autodiff, correctness" if self.gpu else
             "Scaling, autodiff, correctness",
             [a for a in (CROSSOVER, "multi-GPU / ranks", "autodiff",
                          "correctness incidents") if a in self.aspects()]),
        )
        out = []
        for title, aspects in groups:
            notes: list[str] = []
            kept = []
            for a in aspects:
                # the baseline's "1×" says nothing about whether the others measured it
                who = [b for b in self.backends if not (
                    a.startswith("speedup: ") and split_backend_id(b)[0] == BASELINE_FRAMEWORK)]
                texts = {self.cells[(b, a)].text for b in who}
                if len(who) > 1 and len(texts) == 1 and \
                        next(iter(texts)).startswith(NOT_MEASURED):
                    every = ("every framework" if len(who) == len(self.backends) else
                             "every framework but the NumPy baseline")
                    notes.append(f"{a}: {next(iter(texts))} ({every})")
                else:
                    kept.append(a)
            if not kept:
                out.append((title, None, notes))
                continue
            headers, rows = ["framework-device"], [[b] for b in self.backends]
            cases: set[str] = set()
            wheres: dict[str, str] = {}
            for a in kept:
                headers.append(f"{a} (× NumPy)" if a.startswith("speedup: ") else a)
                # a reason several frameworks share is said once, below the table
                count: dict[str, list[str]] = {}
                for b in self.backends:
                    count.setdefault(self.cells[(b, a)].text, []).append(b)
                shared = {t: bs for t, bs in count.items()
                          if len(bs) > 1 and t.startswith(f"{NOT_MEASURED}: ")}
                for t, bs in shared.items():
                    notes.append(f"{a}: {t} ({', '.join(bs)})")
                for row, b in zip(rows, self.backends, strict=True):
                    text = self.cells[(b, a)].text
                    if text in shared:
                        row.append(f"{NOT_MEASURED} (see below)")
                        continue
                    if a.startswith("speedup: "):
                        band, sizes = self._where(a[len("speedup: "):])
                        if band:
                            where = f"{band}: {sizes}"
                            text = text.replace(f"; {where})", ")").replace(
                                f" ({where})", "")
                            wheres[a] = f"{band} sizes, compared at {sizes}"
                        text = text.replace("×", "")
                    elif a == "CPU/GPU crossover" and " (elementwise class: " in text:
                        text, _, named = text.partition(" (elementwise class: ")
                        cases.add(named.removesuffix(")"))
                    row.append(text)
            for a, where in wheres.items():
                notes.append(f"{a}: {where}")
            for named in sorted(cases):
                notes.append(f"CPU/GPU crossover: median over the elementwise class's "
                             f"cases ({named})")
            out.append((title, text_table(headers, rows), notes))
        return out

    def _where(self, cls: str) -> tuple[str, str]:
        """The band and sizes a class's speedup cells stand on ("large", "vector_add at
        16,777,216"), as :func:`speedup_cell` writes them; empty without a verdict."""
        per = self.verdicts.get(cls, {})
        band = next((b for b in reversed(verdicts.BAND_NAMES) if b in per), None)
        return (band, per[band].sizes_text()) if band else ("", "")

    def sources(self, df: pd.DataFrame) -> pd.DataFrame | None:
        """Every cell's rows of timings.csv, by key: where each number comes from."""
        out = []
        # each row's key as text, made once for the rows any cell uses
        used = sorted({i for cell in self.cells.values() for i in cell.rows})
        keys = df.loc[used, ["kernel", "variant", "dtype", "size_key", "implementation",
                             "mode"]]
        label = {i: f"{r.kernel}/{r.variant} {r.dtype} n={r.size_key} {r.implementation} "
                    f"{r.mode}" for i, r in zip(used, keys.itertuples(), strict=True)}
        for b in self.backends:
            for a in ASPECTS:
                cell = self.cells[(b, a)]
                if not cell.rows:
                    continue
                text = "; ".join(sorted({label[i] for i in cell.rows}))
                out.append([b, a, str(len(cell.rows)), text])
        return text_table(["framework-device", "aspect", "rows", "rows of timings.csv"], out) \
            if out else None


def build(df: pd.DataFrame, crossings: Sequence[Any], code: pd.DataFrame,
          mpi: pd.DataFrame, samples: stats.Samples | None = None,
          energy_uncertainty: float | None = None,
          power_limit_w: float | None = None) -> Matrix:
    """The matrix for every backend with rows, NumPy first, then CPU, then GPU; where no
    GPU step ran, the CPU ones alone (the page's notice names the GPU steps and why)."""
    backends = verdicts.ordered_backends(df["backend"])
    if cpu_only(df):
        backends = [b for b in backends if split_backend_id(b)[1] != "gpu"]
    found = verdicts.verdicts(df, samples)
    cross = verdicts.class_crossovers(crossings)
    cells: dict[tuple[str, str], Cell] = {}
    for b in backends:
        framework, device = split_backend_id(b)
        for cls in speedup_classes():
            cells[(b, f"speedup: {cls}")] = speedup_cell(found, b, cls)
        cells[(b, "call overhead")] = overhead_cell(df, b)
        cells[(b, "first call, JIT")] = first_call_cell(df, b)
        cells[(b, "% of ceiling")] = ceiling_cell(df, b)
        cells[(b, "code per kernel")] = code_cell(code, framework)
        cells[(b, "multi-GPU / ranks")] = mpi_cell(mpi, framework, device)
        cells[(b, "CPU/GPU crossover")] = (crossover_cell(cross, b) if device == "gpu"
                                           else Cell("— (CPU)"))
        cells[(b, "autodiff")] = autodiff_cell(df, b)
        cells[(b, "correctness incidents")] = incidents_cell(df, b)
        cells[(b, "work per joule")] = energy_cell(df, b, energy_uncertainty,
                                                   power_limit_w)
        cells[(b, "memory")] = memory_cell(df, b)
    firsts = {b: verdicts.first_call_rows(df, b) for b in backends}
    loops = {b: loop_speedups(df, b) for b, cls in backend_classes().items()
             if any(kind == "loops" for kind, _, _ in cls.claims)}
    memory = [line for line in [memory_sentence(df)] if line]
    return Matrix(backends, cells, found, cross, firsts, loops, pairs=claim_pairs(df),
                  memory_lines=memory, against_reference=reference_speedups(df, found))


def claim_pairs(df: pd.DataFrame) -> dict[Any, Any]:
    """The rows behind the claims judged on paired cases: ("cuda_c", backend) and
    ("often_fast", backend) per backend class claiming it (:func:`cuda_c_pairs`,
    :func:`fast_pairs`), and "fusion" (:func:`fusion_pairs`)."""
    out: dict[Any, Any] = {"fusion": fusion_pairs(df)}
    for b, cls in backend_classes().items():
        for kind, _expect, _claim in cls.claims:
            if kind == "cuda_c":
                out[(kind, b)] = cuda_c_pairs(df, b)
            elif kind == "often_fast":
                out[(kind, b)] = fast_pairs(df, b)
            elif kind == "drop_in" and cls.drop_in is not None:
                mine, other, theirs, kernel = cls.drop_in
                out[(kind, b)] = paired_cases(df, (b, (mine,)), (other, (theirs,)),
                                              "caller_s", (kernel,))
    return out


def loops_backend() -> str:
    """The plain-loop baseline of the ("loops", ...) claims: the backend that runs the
    same loops interpreted (:attr:`~gpubench.backends.base.Backend.plain_loops`)."""
    return next((b for b, cls in backend_classes().items() if cls.plain_loops), "")


def loop_speedups(df: pd.DataFrame, backend: str) -> pd.DataFrame:
    """Per case both measured, at one thread: ``backend``'s fastest ok hot row on the
    caller's clock (CPU: wall) over the plain-Python row (:func:`loops_backend`).

    One thread on both sides: the claim is about compiling a loop, not about cores (a
    ``prange`` row at 64 threads would multiply it by the machine). Columns: kernel,
    variant, dtype, size_key, implementation, caller_s, loop_s, speedup, row, loop_row
    (indices in ``df``); empty where the two share no case.
    """
    keys = ["kernel", "variant", "dtype", "size_key"]
    cols = [*keys, "implementation", "caller_s", "loop_s", "speedup", "row", "loop_row"]
    rows = _ok_hot(df)
    rows = rows[(rows["caller_s"] > 0) & (rows["threads"] == 1)]

    def best(b: str) -> pd.DataFrame:
        mine = rows[rows["backend"] == b]
        mine = mine.assign(row=mine.index).sort_values(
            [*keys, "caller_s", "implementation"], kind="mergesort")
        return mine.drop_duplicates(keys, keep="first")[
            [*keys, "implementation", "caller_s", "row"]]

    loop = best(loops_backend()).rename(columns={"caller_s": "loop_s", "row": "loop_row"})
    both = best(backend).merge(loop.drop(columns="implementation"), on=keys)
    if both.empty:
        return pd.DataFrame(columns=cols)
    both["speedup"] = both["loop_s"] / both["caller_s"]
    return both[cols].sort_values(keys, kind="mergesort").reset_index(drop=True)


# -- sentences ------------------------------------------------------------------------------


def _name(cls: str) -> str:
    return cls[0].upper() + cls[1:]


def _tally_text(t: verdicts.Tally) -> str:
    quartiles = (f" (by quartiles, not the test, in {t.by_quartiles}: a row kept no "
                 "samples)" if t.by_quartiles else "")
    return (f"surely faster in {t.faster} of {t.n} cases, within ±{stats.MIN_EFFECT:.0%} in "
            f"{t.same}, unresolved in {t.unresolved}, slower in {t.slower}{quartiles}")


def standing_text(st: verdicts.Standing) -> str:
    """"990× (range 900×–1,080×; cases 500×–2,000×)": the median speedup over the
    cases, its range (:attr:`verdicts.Standing.range_lo`) and the spread over cases."""
    cases = f"; cases {_range(st.lo, st.hi)}" if _x(st.lo) != _x(st.hi) else ""
    return f"{_x(st.median)} (range {_range(st.range_lo, st.range_hi)}{cases})"


def standing_words(st: verdicts.Standing, than: str = "NumPy") -> str:
    """"990× faster than NumPy (median over the cases; range 928–1,002×; cases
    206–1,439×)", or below 1 the slow-down: "1.7× slower than NumPy (…)", its range and
    the spread over cases turned over with it (:func:`.headline.versus`)."""
    slower = math.isfinite(st.median) and 0 < st.median < 1

    def f(v: float) -> float:
        return (1 / v if v > 0 else math.inf) if slower else v

    lo, hi = sorted((f(st.range_lo), f(st.range_hi)))
    cases = (f"; cases {headline.span(*sorted((f(st.lo), f(st.hi))))}"
             if _x(st.lo) != _x(st.hi) else "")
    how = ("as fast as" if _x(st.median) == "1×" else
           f"{_x(f(st.median))} {'slower' if slower else 'faster'} than")
    return f"{how} {than} (median over the cases; range {headline.span(lo, hi)}{cases})"


def tie_text(v: verdicts.ClassVerdict) -> str:
    """Why a verdict names several leaders: their ranges overlap the best's (or
    equivalence is shown with every one of them: either will do)."""
    w = v.winner
    assert w is not None
    others = [s for s in v.leaders if s is not w]
    if all(s.backend in v.tallies and v.tallies[s.backend].either for s in others):
        return (", ".join(f"{s.backend} is within ±{stats.MIN_EFFECT:.0%} of {w.backend} in "
                          f"{v.tallies[s.backend].same} of {v.tallies[s.backend].n} cases"
                          for s in others)
                + " (99 % confidence), so either will do")
    r = others[0]
    return (f"their ranges overlap the best's ({w.backend}), so this run does not rank them "
            f"(case by case, {w.backend} against {r.backend}: "
            f"{_tally_text(v.tallies[r.backend])})")


def _below_text(v: verdicts.ClassVerdict) -> str:
    """The ranked frameworks left out of the leaders: surely slower (range below)."""
    w = v.winner
    below = [s for s in v.ranked[1:] if s not in v.leaders]
    if w is None or not below:
        return ""
    return (f"; slower, their ranges wholly below {w.backend}'s: "
            + ", ".join(f"{s.backend} {standing_text(s)}" for s in below))


def sentence(v: verdicts.ClassVerdict, cross: Mapping[tuple[str, str], verdicts.CrossSummary]
             ) -> str:
    """One class verdict as a sentence that names its size, its cases and what it left
    out: the frameworks not surely slower than the best (one where every other range
    lies below the best's), by median, each with its range."""
    n = len(v.cases)
    head = (f"{_name(v.cls)}, {v.band} sizes ({v.bounds_text()}; compared at "
            f"{v.sizes_text()}, {n} case{'s' if n != 1 else ''})")
    w = v.winner
    assert w is not None
    leaders = v.leaders
    if w.median < 1:
        text = (f"{head}: stay on NumPy; the fastest other framework, {w.backend}, is "
                f"{standing_words(w)}")
    elif len(leaders) > 1:
        text = (f"{head}: choose any of "
                + headline.listed([f"{s.backend}, {standing_words(s)}" for s in leaders])
                + f"; {tie_text(v)}")
    else:
        text = f"{head}: choose {w.backend}, {standing_words(w)}"
        r = v.runner_up
        if r is not None:
            t = v.tallies[r.backend]
            text += f"; against {r.backend}, {w.backend} is {_tally_text(t)}"
        elif not v.partial:
            text += "; no other framework measured these cases"
    text += _below_text(v)
    for p in v.partial:
        t = v.tallies.get(p.backend)
        shared = f"; on those {w.backend} is {_tally_text(t)}" if t and t.n else ""
        text += (f"; {p.backend} is not ranked: it measured {sum(c in p.cases for c in v.cases)}"
                 f" of the {n} cases{shared}")
    if v.left_out:
        named = ", ".join(f"{k}/{var} {d} at {s:,} (only {', '.join(b)})"
                          for (k, var, d, s), b in v.left_out[:3])
        more = f" and {len(v.left_out) - 3} more" if len(v.left_out) > 3 else ""
        text += f"; left out, measured by too few frameworks: {named}{more}"
    if v.other_sizes:
        named = ", ".join(f"{k}/{var} {d}" for k, var, d in v.other_sizes[:3])
        more = f" and {len(v.other_sizes) - 3} more" if len(v.other_sizes) > 3 else ""
        text += f"; left out, not measured at the comparison size: {named}{more}"
    if v.largest:
        text += f"; {v.largest}"
    if v.cls == "elementwise" and w.median >= 1:
        text += crossover_text(v, cross)
    if v.precision:
        text += f"; {v.precision}"
    return text + "."


def crossover_text(v: verdicts.ClassVerdict,
                   cross: Mapping[tuple[str, str], verdicts.CrossSummary]) -> str:
    """Where the CPU stays ahead, for the verdict's framework, or for each of its
    leaders ('' where none has a crossover)."""
    cs = verdicts.leader_crossovers(v, cross)
    if not cs:
        return ""
    if len(v.leaders) == 1:
        c = cs[0][1]
        if math.isfinite(c.median):
            return (f"; below about {verdicts.sig2(c.median)} elements stay on the CPU "
                    f"(crossover {c.sentence()})")
        return f"; crossover {c.sentence()}"
    return ("; the CPU reference (one framework at one thread count per case, named) "
            "stays ahead below: "
            + "; ".join(f"{b} {c.sentence()}" for b, c in cs))


def sentences(matrix: Matrix) -> list[str]:
    """'Choose X when' per workload class, at its headline band, from the verdicts."""
    return [*(sentence(v, matrix.crossovers) for v in headline.headline_verdicts(matrix)),
            *matrix.memory_lines]


# -- the claims of the source documents ----------------------------------------------------------


def _verdict(flags: Sequence[bool]) -> str:
    if not flags:
        return NOT_MEASURED
    return "holds" if all(flags) else "does not hold" if not any(flags) else "partly"


def _jit_claim(matrix: Matrix, backend: str, claim: str, expect: bool,
               implementations: Sequence[str] | None = None,
               exclude: Sequence[str] = ()) -> list[str]:
    """A compilation claim judged on the first size of each case, cold caches only:
    ``expect`` True (the first call pays compilation) holds when the median first-call
    extra cost reaches 10 ms; False (no compilation overhead) when not even the largest
    does."""
    rows = matrix.first_calls.get(backend)
    if rows is not None and len(rows):
        if implementations is not None:
            rows = rows[rows["implementation"].isin(list(implementations))]
        rows = rows[~rows["implementation"].isin(list(exclude))]
    if rows is None or rows.empty:
        note = matrix.cells.get((backend, "first call, JIT"))
        why = note.text if note is not None and not note.measured else NOT_MEASURED
        return [claim, why, NOT_MEASURED]
    typical, worst = verdicts.jit_visible(rows["extra"])
    w = rows["extra"].idxmax()
    text = (f"first size of {len(rows)} cases, cold caches: median "
            f"{fmt_time(float(rows['extra'].median()))}, largest "
            f"{fmt_time(float(rows['extra'].max()))} ({rows.loc[w, 'kernel']} "
            f"{rows.loc[w, 'implementation']})")
    if expect:
        verdict = "holds" if typical else "partly" if worst else "does not hold"
    else:
        verdict = "does not hold" if typical else "partly" if worst else "holds"
    return [claim, text, verdict]


def loop_claim(matrix: Matrix, backend: str, claim: str, expect: bool) -> list[str]:
    """A "10–100× faster than plain Python loops" claim judged on the cases ``backend``
    and :func:`loops_backend` both measured at one thread (:func:`loop_speedups`):
    ``expect`` True holds when the median speedup reaches :data:`LOOPS_SPEEDUP` (or more:
    the claim is that compiling pays at least that much), partly when only some cases
    do, and does not hold when none does (False: the other way round)."""
    rows = matrix.loops.get(backend)
    if rows is None or rows.empty:
        why = (f"no {backend} and {loops_backend()} rows of the same case at one thread"
               if rows is not None else f"{backend} was not compared with plain Python")
        return [claim, f"{NOT_MEASURED}: {why}", NOT_MEASURED]
    lo, hi = SOURCE_SPEEDUP
    v = rows["speedup"]
    med = float(v.median())
    inside = int(((v >= lo) & (v <= hi)).sum())
    above, below = int((v > hi).sum()), int((v < lo).sum())
    text = (f"{backend} over {loops_backend()}, one thread, {len(rows)} shared cases "
            f"({', '.join(sorted(set(rows['kernel'])))}; "
            f"{int(rows['size_key'].min()):,}–{int(rows['size_key'].max()):,} elements): "
            f"median {_x(med)} ({_range(float(v.min()), float(v.max()))}); {inside} in "
            f"10–100×, {above} above, {below} below")
    reached, some = med >= LOOPS_SPEEDUP, bool((v >= LOOPS_SPEEDUP).any())
    if expect:
        verdict = "holds" if reached else "partly" if some else "does not hold"
    else:
        verdict = "does not hold" if reached else "partly" if some else "holds"
    return [claim, text, verdict]


# -- claims judged on paired rows: each side's fastest row of the cases both measured --------

#: the keys of one case: what both sides of a paired claim must have measured
CASE_KEYS = ["kernel", "variant", "dtype", "size_key"]
#: a ("cuda_c", ...) claim holds on a case when the backend's device time is at most
#: this multiple of the CUDA C's
CUDA_C_MATCH = 1.25
#: "often": faster in at least this share of the shared cases
OFTEN = 0.5
FUSION_CLAIM = ("fusion reduces overhead: cupy.fuse / ElementwiseKernel / ReductionKernel, "
                "torch.compile, jax.jit against unfused calls")


def paired_cases(df: pd.DataFrame, mine: tuple[str, Sequence[str]],
                 theirs: tuple[str, Sequence[str]], clock: str = "caller_s",
                 kernels: Sequence[str] | None = None,
                 equal_threads: bool = False) -> pd.DataFrame:
    """Like with like for a claim: per case (kernel, variant, dtype, size) that both
    sides measured (ok, hot), each side's fastest row among its implementations (none
    named: any) on ``clock`` ("caller_s": the caller's clock, CPU wall; "median_s": the
    device clock). ``ratio`` is their time over mine (> 1: mine is faster).

    ``equal_threads``: both sides at one thread count, per case the most both measured
    (a multithreaded row against a single-thread one would credit the cores, not the
    framework); ``threads`` then says which. Columns: the case keys, threads,
    implementation, time, other_implementation, other_time, ratio, row, other_row
    (indices in ``df``); empty where the two share no case."""
    cols = [*CASE_KEYS, "threads", "implementation", "time", "other_implementation",
            "other_time", "ratio", "row", "other_row"]
    rows = _ok_hot(df)
    rows = rows[rows[clock] > 0]
    if kernels is not None:
        rows = rows[rows["kernel"].isin(list(kernels))]
    keys = [*CASE_KEYS, "threads"] if equal_threads else list(CASE_KEYS)

    def best(side: tuple[str, Sequence[str]]) -> pd.DataFrame:
        backend, impls = side
        mine = rows[rows["backend"] == backend]
        if impls:
            mine = mine[mine["implementation"].isin(list(impls))]
        mine = mine.assign(row=mine.index, time=mine[clock]).sort_values(
            [*keys, "time", "implementation"], kind="mergesort")
        return mine.drop_duplicates(keys, keep="first")[
            [*keys, "implementation", "time", "row"]]

    other = best(theirs).rename(columns={"implementation": "other_implementation",
                                         "time": "other_time", "row": "other_row"})
    both = best(mine).merge(other, on=keys)
    if both.empty:
        return pd.DataFrame(columns=cols)
    if equal_threads:  # per case, the most threads both sides measured
        both = both.sort_values([*CASE_KEYS, "threads"], kind="mergesort").drop_duplicates(
            list(CASE_KEYS), keep="last")
    else:
        both["threads"] = pd.NA
    both["ratio"] = both["other_time"] / both["time"]
    return both[cols].sort_values(list(CASE_KEYS), kind="mergesort").reset_index(drop=True)


def _threads_said(rows: pd.DataFrame) -> str:
    """"1 and 16 threads", "16 threads": the thread counts a paired claim compared at."""
    if "threads" not in rows:
        return ""
    counts = sorted({int(t) for t in rows["threads"].dropna()})
    if not counts:
        return ""
    words = ", ".join(f"{t:,}" for t in counts[:-1])
    words = f"{words} and {counts[-1]:,}" if words else f"{counts[-1]:,}"
    return f"{words} thread{'s' if counts != [1] else ''}"


def _sizes(rows: pd.DataFrame) -> str:
    lo, hi = int(rows["size_key"].min()), int(rows["size_key"].max())
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def _case(r: Any) -> str:
    return f"{r.kernel}/{r.variant} {r.dtype} at {int(r.size_key):,}"


def _named(rows: pd.DataFrame, what: str, limit: int = 3) -> str:
    """The first cases of ``rows`` named with their ratio ("" without any)."""
    if rows.empty:
        return ""
    named = ", ".join(f"{_case(r)} ({what} {_x(r.ratio)})"
                      for r in rows.head(limit).itertuples(index=False))
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return named + more


def cuda_c_pairs(df: pd.DataFrame, backend: str) -> pd.DataFrame:
    """A backend's hand-written GPU kernels against the same algorithm in CUDA C (its
    class's ``cuda_c_pairs`` and ``cuda_c_reference``), case by case on the device
    clock: the claim is about the code the compilers make, not the launch path.
    ``ratio`` is the backend's time over CUDA C's (> 1: slower); ``pair`` names the two
    implementations."""
    cls = backend_classes().get(backend)
    out = []
    for kernel, own, cuda_c in (cls.cuda_c_pairs if cls is not None else ()):
        p = paired_cases(df, (cls.cuda_c_reference, (cuda_c,)), (backend, (own,)),
                         "median_s", (kernel,))
        if not p.empty:
            out.append(p.assign(pair=f"{own}/{cuda_c}"))
    if not out:
        return pd.DataFrame(columns=[*CASE_KEYS, "pair", "ratio", "row", "other_row"])
    return pd.concat(out, ignore_index=True)


def cuda_c_claim(pairs: pd.DataFrame, backend: str, reference: str, claim: str) -> list[str]:
    """"Matches CUDA C": holds when the backend's device time is within
    :data:`CUDA_C_MATCH` × CUDA C's on every shared case, partly on some, does not hold
    on none; the text gives each pair of implementations' count and the slowest cases."""
    if pairs.empty:
        return [claim, f"{NOT_MEASURED}: no {backend} and {reference} rows of the same "
                "kernel and case", NOT_MEASURED]
    within = pairs["ratio"] <= CUDA_C_MATCH
    per = []
    for (kernel, pair), g in pairs.groupby(["kernel", "pair"], sort=True):
        ok = g["ratio"] <= CUDA_C_MATCH
        per.append(f"{kernel} {pair} {int(ok.sum())} of {len(g)} "
                   f"(median {_x(float(g['ratio'].median()))}, {_sizes(g)})")
    slow = pairs[~within].sort_values("ratio", ascending=False, kind="mergesort")
    text = (f"{backend} over {reference}'s CUDA C, device clock (CUDA events), hot, "
            f"{len(pairs)} shared cases: time within {CUDA_C_MATCH:g}× of CUDA C's in "
            f"{int(within.sum())}; median {_x(float(pairs['ratio'].median()))} "
            f"({_range(float(pairs['ratio'].min()), float(pairs['ratio'].max()))}); "
            + "; ".join(per))
    if not slow.empty:
        text += f"; slowest: {_named(slow, 'time ratio', 3)}"
    return [claim, text, _verdict([bool(f) for f in within])]


def fusion_pairs(df: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (backend, fused implementation) of every backend class with a ``fusion``
    fact: its rows against the fastest unfused row of the same case on the caller's
    clock (what the Python loop waits for: fusion saves launches and memory passes), on
    the kernels the fact names. ``ratio`` is the unfused time over the fused (> 1:
    fusion is faster)."""
    out = {}
    for b, cls in backend_classes().items():
        if cls.fusion is not None:
            fused, unfused, kernels = cls.fusion
            for f in fused:
                out[(b, f)] = paired_cases(df, (b, (f,)), (b, unfused), "caller_s", kernels)
    return out


def fusion_claim(pairs: Mapping[tuple[str, str], pd.DataFrame]) -> list[str]:
    """"Fusion reduces overhead": on a case fusion counts as faster when the unfused
    call takes at least 1 + MIN_EFFECT (5 %) as long; holds when it does in every
    shared case, partly in some, does not hold in none; pairs without shared rows are
    named as not measured."""
    edge = 1 + stats.MIN_EFFECT
    per, flags, missing = [], [], []
    for (b, fused), p in pairs.items():
        if p.empty:
            missing.append(f"{b} {fused}")
            continue
        faster = p["ratio"] >= edge
        flags += [bool(f) for f in faster]
        worse = p[~faster].sort_values("ratio", kind="mergesort")
        note = f"; not faster: {_named(worse, 'unfused/fused', 2)}" if len(worse) else ""
        per.append(f"{b} {fused} over {'/'.join(sorted(set(p['other_implementation'])))}: "
                   f"faster in {int(faster.sum())} of {len(p)} cases "
                   f"({', '.join(sorted(set(p['kernel'])))}; {_sizes(p)}; median "
                   f"{_x(float(p['ratio'].median()))}){note}")
    if not flags:
        return [FUSION_CLAIM, f"{NOT_MEASURED}: no fused and unfused rows of the same case",
                NOT_MEASURED]
    text = (f"caller's clock, hot, faster = the unfused call takes ≥ {edge:g}× as long: "
            + "; ".join(per))
    if missing:
        text += f"; {NOT_MEASURED} (no shared rows): {', '.join(missing)}"
    return [FUSION_CLAIM, text, _verdict(flags)]


def fast_pairs(df: pd.DataFrame, backend: str) -> dict[str, pd.DataFrame]:
    """The backend against each of its class's ``fast_against``: every side's fastest
    row (any implementation, any thread count: what a user gets) of each shared case of
    the report classes' kernels, on the caller's clock (CPU: wall). ``ratio``: the
    other's time over the backend's (> 1: the backend is faster)."""
    cls = backend_classes().get(backend)
    kernels = [k for ks in classes().values() for k in ks]
    return {o: paired_cases(df, (backend, ()), (o, ()), "caller_s", kernels,
                            equal_threads=True)
            for o in (cls.fast_against if cls is not None else ())}


def often_fast_claim(pairs: Mapping[str, pd.DataFrame], backend: str, claim: str) -> list[str]:
    """"Often fast", against the first backend compared: faster on a case when the other
    takes at least 1 + MIN_EFFECT as long; holds when that is so in at least
    :data:`OFTEN` of the shared cases, partly in fewer but some, does not hold in none.
    The other backends are shown beside it, not judged."""
    edge = 1 + stats.MIN_EFFECT
    base = next(iter(pairs), "")
    p = pairs.get(base)
    if p is None or p.empty:
        return [claim, f"{NOT_MEASURED}: no {backend} and {base or 'baseline'} rows of the "
                "same case", NOT_MEASURED]
    texts = []
    for other, q in pairs.items():
        if q.empty:
            texts.append(f"against {other}: {NOT_MEASURED}")
            continue
        faster, slower = q["ratio"] >= edge, q["ratio"] <= 1 / edge
        at = _threads_said(q)
        texts.append(f"against {other}: faster in {int(faster.sum())} of {len(q)} shared "
                     f"cases ({', '.join(sorted(set(q['kernel'])))}; {_sizes(q)}"
                     f"{'; at ' + at + ' each' if at else ''}), slower "
                     f"in {int(slower.sum())}, median {_x(float(q['ratio'].median()))} "
                     f"({_range(float(q['ratio'].min()), float(q['ratio'].max()))})")
    n, k = len(p), int((p["ratio"] >= edge).sum())
    verdict = "holds" if k >= OFTEN * n else "partly" if k else "does not hold"
    return [claim, f"{backend}, caller's clock (CPU: wall), hot, each side's fastest row "
            "at one thread count, per case the most both measured; faster = the other "
            f"takes ≥ {edge:g}× as long; " + "; ".join(texts), verdict]


def drop_in_claim(pairs: pd.DataFrame, backend: str,
                  drop_in: tuple[str, str, str, str] | None, claim: str) -> list[str]:
    """A drop-in replacement: the same calls ran and passed the check (ok rows are
    checked) in every case both measured, and faster (the other takes at least
    1 + MIN_EFFECT as long): holds in every shared case, partly in some, does not hold
    in none; not measured without a shared case."""
    if drop_in is None or pairs.empty:
        what = f"{drop_in[0]} and {drop_in[1]} {drop_in[2]}" if drop_in else backend
        return [claim, f"{NOT_MEASURED}: no rows of {what} on the same case",
                NOT_MEASURED]
    mine, other, theirs, kernel = drop_in
    edge = 1 + stats.MIN_EFFECT
    faster = pairs["ratio"] >= edge
    n, k = len(pairs), int(faster.sum())
    verdict = "holds" if k == n else "partly" if k else "does not hold"
    slow = pairs[~faster]
    worst = "".join(f"; not faster: {r.kernel}/{r.variant} {r.dtype} at {int(r.size_key):,} "
                    f"({_x(float(r.ratio))})" for r in slow.head(3).itertuples())
    return [claim, f"{backend} {mine} over {other} {theirs}, caller's clock (CPU: wall), "
            f"hot, {n} shared {kernel} cases ({_sizes(pairs)}), every one correct: faster "
            f"(≥ {edge:g}×) in {k}, median {_x(float(pairs['ratio'].median()))} "
            f"({_range(float(pairs['ratio'].min()), float(pairs['ratio'].max()))}){worst}",
            verdict]


def claims(matrix: Matrix) -> pd.DataFrame | None:
    """The source documents' assertions beside this run's answer: holds, does not hold
    or partly."""
    gpus = [b for b in matrix.backends if split_backend_id(b)[1] == "gpu"]
    rows = []
    # "Typical Speedup: 10-100x over NumPy"
    lo, hi = SOURCE_SPEEDUP
    per, flags = [], []
    for b in gpus:
        vals = [matrix.cells[(b, f"speedup: {c}")].value for c in classes()]
        vals = [v for v in vals if math.isfinite(v)]
        if vals:
            inside = [lo <= v <= hi for v in vals]
            flags += inside
            per.append(f"{b}: {sum(inside)} of {len(vals)} classes in 10–100× "
                       f"(range {_x(min(vals))}–{_x(max(vals))})")
    rows.append(["typical speedup 10–100× over NumPy (comparison guide)",
                 "; ".join(per) or NOT_MEASURED, _verdict(flags)])
    # "Small datasets (< 10,000 elements): use the CPU"
    per, flags = [], []
    for b in gpus:
        c = matrix.crossovers.get((b, "elementwise"))
        if c is not None and c.n and math.isfinite(c.median):
            flags.append(SOURCE_CROSSOVER / 3 <= c.median <= SOURCE_CROSSOVER * 3)
            per.append(f"{b}: {c.text()}")
    rows.append(["the GPU loses below ~10,000 elements, within 3× (workshop book)",
                 "; ".join(per) or NOT_MEASURED, _verdict(flags)])
    # code verbosity
    code = {b: matrix.cells[(b, "code per kernel")].value for b in matrix.backends}
    known = {b: v for b, v in code.items() if math.isfinite(v)}
    overall = float(np.median(list(known.values()))) if known else math.nan
    classes_of = backend_classes()
    said = [(b, kind, expect, claim) for b, cls in classes_of.items()
            for kind, expect, claim in cls.claims]
    for name, verbose, claim in ((b, e, c) for b, k, e, c in said if k == "verbosity"):
        if name in known and math.isfinite(overall):
            v = known[name]
            ok = v >= 1.5 * overall if verbose else v <= overall
            rows.append([claim, f"{v:.0f} lines per kernel against a median of "
                         f"{overall:.0f} over all frameworks", "holds" if ok else
                         "does not hold"])
        else:
            rows.append([claim, NOT_MEASURED, NOT_MEASURED])
    # compilation, judged where it happens: the first size, cold caches, no interop
    # (those that expect compilation first); a framework's own compiled implementations
    # are left out of a "no compilation" claim
    jit = sorted(((b, e, c) for b, k, e, c in said if k == "jit"), key=lambda t: not t[1])
    for name, expect, claim in jit:
        exclude = () if expect else sorted(classes_of[name].compiled_implementations)
        rows.append(_jit_claim(matrix, name, claim, expect, exclude=exclude))
    # compiled loops against the same loops interpreted (python-cpu)
    for name, expect, claim in ((b, e, c) for b, k, e, c in said if k == "loops"):
        rows.append(loop_claim(matrix, name, claim, expect))
    # claims judged case by case on paired rows (a matrix built without them: empty)
    pairs = matrix.pairs
    for name, _expect, claim in ((b, e, c) for b, k, e, c in said if k == "cuda_c"):
        rows.append(cuda_c_claim(pairs.get(("cuda_c", name), pd.DataFrame(columns=["ratio"])),
                                 name, classes_of[name].cuda_c_reference, claim))
    rows.append(fusion_claim(pairs.get("fusion", {})))
    for name, _expect, claim in ((b, e, c) for b, k, e, c in said if k == "often_fast"):
        rows.append(often_fast_claim(pairs.get(("often_fast", name), {}), name, claim))
    for name, _expect, claim in ((b, e, c) for b, k, e, c in said if k == "drop_in"):
        rows.append(drop_in_claim(pairs.get(("drop_in", name), pd.DataFrame(
            columns=["ratio"])), name, classes_of[name].drop_in, claim))
    return text_table(["claim", "measured here", "verdict"], rows)


@dataclass
class Which:
    """The "Which framework?" section: the recommendations (one line each, and in full),
    the first screen's figure, the compact matrix, the full matrix (as one table and
    split in tables that fit a page), the source documents' claims and every cell's
    rows (table None: no backend)."""

    table: pd.DataFrame | None
    lines: list[str]
    claims: pd.DataFrame | None
    sources: pd.DataFrame | None
    short: list[str] = field(default_factory=list)
    compact: pd.DataFrame | None = None
    compact_notes: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame | None, list[str]]] = field(default_factory=list)
    overview: Any = None
    #: a GPU framework is in the matrix (else the notes leave the crossover out)
    gpu: bool = True


@functools.lru_cache(maxsize=1)
def _backend_ids() -> re.Pattern[str]:
    ids = sorted(backend_classes(), key=len, reverse=True)
    return re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, ids)) + r")(?![\w-])")


def in_words(text: str) -> str:
    """The answer's prose and cells with each backend id replaced by its reader's name
    (:func:`gpubench.backends.reader_name`: "PyTorch on GPU"): the answer is read by
    people who do not know the ids; the rows behind it keep them."""
    return _backend_ids().sub(lambda m: reader_name(m.group(1)), text)


def frame_in_words(t: pd.DataFrame | None) -> pd.DataFrame | None:
    """:func:`in_words` over a table's cells and headers (its HTML attributes kept)."""
    if t is None:
        return None
    out = t.map(lambda v: in_words(v) if isinstance(v, str) else v)
    out.columns = [in_words(str(c)) for c in t.columns]
    out.attrs = {**t.attrs, "numeric": [in_words(str(c)) for c in t.attrs.get("numeric", [])]}
    return out


def section(matrix: Matrix, lines: list[str], claims: pd.DataFrame | None,
            df: pd.DataFrame | None = None, overview: Any = None) -> Which:
    """The section's data; ``df`` (the prepared frame) gives the rows behind each cell;
    ``overview`` is the first screen's figure (:func:`.headline.overview`)."""
    table = matrix.table()
    sources = matrix.sources(df) if table is not None and df is not None else None
    compact, notes = headline.compact(matrix)
    if compact is not None and not matrix.gpu:  # a column of "— (CPU)" alone
        compact = compact.drop(columns=[c for c in compact.columns
                                        if str(c).startswith("crossover")])
    if overview is not None:
        overview = dataclasses.replace(overview, caption=in_words(overview.caption),
                                       alt=in_words(overview.alt))
    return Which(frame_in_words(table), [in_words(x) for x in lines], frame_in_words(claims),
                 sources, [in_words(x) for x in headline.short_lines(matrix)],
                 frame_in_words(compact), [in_words(x) for x in notes],
                 [(in_words(title), frame_in_words(t), [in_words(x) for x in n])
                  for title, t, n in matrix.tables()], overview, matrix.gpu)


def render_html(matrix: Matrix, lines: list[str], claims: pd.DataFrame | None,
                df: pd.DataFrame, overview: Any = None, figure: Any = None) -> str:
    """The section as HTML (``matrix.html.j2``; empty without a backend); ``figure``
    queues the overview's figure on the page (:func:`.sections.figure_drawer`)."""
    return render.render_html("matrix.html.j2", s=section(matrix, lines, claims, df, overview),
                              figure=figure)


def render_markdown(matrix: Matrix, lines: list[str], claims: pd.DataFrame | None,
                    overview: Any = None, overview_png: str | None = None) -> str:
    """The section as Markdown (``matrix.md.j2``; empty without a backend), the
    overview's PNG linked from ``overview_png`` (relative to summary.md)."""
    return render.render_md("matrix.md.j2", s=section(matrix, lines, claims, None, overview),
                            png=overview_png)


def for_inputs(df: pd.DataFrame, samples: stats.Samples, crossings: Sequence[Any],
               mpi: pd.DataFrame, code: pd.DataFrame | None = None,
               energy_uncertainty: float | None = None,
               power_limit_w: float | None = None
               ) -> tuple[Matrix, list[str], pd.DataFrame | None]:
    """The matrix, its sentences and the source documents' claims; ``code``: the
    code-size section's sizes when already measured."""
    from gpubench.report.sections import code_size

    matrix = build(df, crossings, code_size(df) if code is None else code, mpi, samples,
                   energy_uncertainty, power_limit_w)
    return matrix, sentences(matrix), claims(matrix)


# -- two machines side by side ----------------------------------------------------------------


def _speedup_change(base: tuple[pd.DataFrame, stats.Samples],
                    new: tuple[pd.DataFrame, stats.Samples], backend: str, cls: str) -> str:
    """Noise-aware: per case of the class, the backend's best row on each machine at the
    same size (small arrays: small sizes only), compared on the caller's clock with the
    recorded samples: each machine's own time, not its speedup over its own NumPy."""
    kernels = _class_kernels(cls)
    keyed = []
    for df, _ in (base, new):
        t = verdicts.case_table(df)
        t = t[(t["backend"] == backend) & t["kernel"].isin(kernels)]
        if cls == SMALL:
            t = t[t["band"] == "small"]
        keyed.append(t.set_index(["kernel", "variant", "dtype", "size_key"]))
    (bt, (bdf, bs)), (nt, (ndf, ns)) = (keyed[0], base), (keyed[1], new)
    counts = dict.fromkeys(stats.LABELS, 0)
    for key in bt.index.intersection(nt.index):
        b, n = bdf.loc[int(bt.loc[key, "row"])], ndf.loc[int(nt.loc[key, "row"])]
        v = stats.compare(float(b["caller_s"]), float(n["caller_s"]),
                          bs.get(int(b.name), "pipelined"), ns.get(int(n.name), "pipelined"),
                          (b["caller_q1"], b["caller_q3"]), (n["caller_q1"], n["caller_q3"]))
        counts[v.label] += 1
    total = sum(counts.values())
    if not total:
        return "no shared cases"
    f, s, u, w = (counts[stats.FASTER], counts[stats.SAME], counts[stats.UNRESOLVED],
                  counts[stats.SLOWER])
    label = (stats.FASTER if f > total - f else stats.SLOWER if w > total - w
             else stats.SAME if s > total - s else "MIXED")
    return (f"{label}: new faster in {f} of {total} cases, within ±{stats.MIN_EFFECT:.0%} in "
            f"{s}, unresolved in {u}, slower in {w}")


def side_by_side(base: tuple[Matrix, pd.DataFrame, stats.Samples],
                 new: tuple[Matrix, pd.DataFrame, stats.Samples]) -> pd.DataFrame | None:
    """Both machines' matrices, aspect by aspect, with a noise-aware label where the
    samples allow one (the speedup classes, on the caller's clock: each row's time, not
    the ratio to each machine's NumPy, so a faster host CPU does not pass for a slower
    GPU); single readings (energy, first call, code) are shown, not labelled."""
    (bm, bdf, bs), (nm, ndf, ns) = base, new
    rows = []
    for b in [x for x in bm.backends if x in nm.backends]:
        for a in ASPECTS:
            cb, cn = bm.cells[(b, a)], nm.cells[(b, a)]
            if not (cb.measured or cn.measured):
                continue
            if a.startswith("speedup: ") and split_backend_id(b)[0] != BASELINE_FRAMEWORK:
                label = _speedup_change((bdf, bs), (ndf, ns), b, a[len("speedup: "):])
            elif a.startswith("speedup: "):
                continue
            elif math.isfinite(cb.value) and math.isfinite(cn.value) and cb.value > 0:
                label = f"new / base {cn.value / cb.value:.3g} (one reading each: not tested)"
            else:
                label = "—"
            rows.append([b, a, cb.text, cn.text, label])
    if not rows:
        return None
    return text_table(["framework-device", "aspect", "base", "new", "difference"], rows)
