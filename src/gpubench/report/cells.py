"""The cells of the comparison matrix (:mod:`gpubench.report.matrix`): one function per
aspect, each turning this run's rows into a :class:`Cell` that keeps the rows it came
from (:attr:`Cell.rows`, indices of the prepared timings frame), so each number can be
traced to ``timings.csv``. A cell without data says ``not measured``, never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpubench.backends import reader_name, split_backend_id
from gpubench.kernels.autodiff import SPEC as AUTODIFF
from gpubench.kernels.launch_overhead import SPEC as LAUNCH_OVERHEAD
from gpubench.report import verdicts
from gpubench.report.base import BASELINE_FRAMEWORK, fmt_time
from gpubench.report.verdicts import NOT_MEASURED, SMALL, classes
from gpubench.spec import get_kernel, kernel_specs
from gpubench.workloads import class_title, crossover_class


def class_kernels(cls: str) -> tuple[str, ...]:
    """The kernels of a class; small arrays: :func:`verdicts.small_kernels_of`."""
    if cls == SMALL:
        return verdicts.small_kernels_of()
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


def not_measured(why: str) -> Cell:
    return Cell(f"{NOT_MEASURED}: {why}")


def times(v: float) -> str:
    if not math.isfinite(v):
        return "—"
    return f"{v:,.0f}×" if v >= 100 else f"{v:.3g}×"


#: results computed once per prepared frame (which is never changed after it is
#: prepared): the matrix asks for the same rows for every backend and aspect
_MEMO: dict[tuple[int, Any], tuple[pd.DataFrame, Any]] = {}


def memo(df: pd.DataFrame, key: Any, make: Any) -> Any:
    slot = (id(df), key)
    hit = _MEMO.get(slot)
    if hit is not None and hit[0] is df:
        return hit[1]
    if len(_MEMO) > 32:
        _MEMO.clear()
    value = make()
    _MEMO[slot] = (df, value)  # the frame is kept, so its id cannot be reused meanwhile
    return value


def ok_hot(df: pd.DataFrame) -> pd.DataFrame:
    return memo(df, "ok_hot", lambda: df[
        (df["status"] == "ok") & (df["mode"] == "hot")
        & ~df["implementation"].astype(str).str.endswith("+transfers")])


def range_cell(values: pd.Series, rows: pd.Index, fmt: Any, unit: str = "") -> Cell:
    v = values.to_numpy(float)
    med, lo, hi = float(np.median(v)), float(v.min()), float(v.max())
    spread = f" ({fmt(lo)}–{fmt(hi)}, {len(v)} cases)" if len(v) > 1 else " (1 case)"
    return Cell(f"{fmt(med)}{unit}{spread}", med, [int(i) for i in rows], lo, hi)


def range_text(lo: float, hi: float) -> str:
    return f"{times(lo)}–{times(hi)}"


def speedup_cell(found: Mapping[str, Mapping[str, verdicts.ClassVerdict]], backend: str,
                 cls: str) -> Cell:
    """The backend's speedup over NumPy in the class's headline band (the largest
    band measured; small arrays: the small band), over the cases of the verdict."""
    if split_backend_id(backend)[0] == BASELINE_FRAMEWORK:
        return Cell("1× (baseline)", 1.0)
    per = found.get(cls, {})
    band = next((b for b in reversed(verdicts.BAND_NAMES) if b in per), None)
    if band is None:
        kernels = "/".join(class_kernels(cls))
        return not_measured(f"no ok {kernels} rows with a NumPy baseline")
    v = per[band]
    where = f"{band}: {v.sizes_text()}"
    for st in v.ranked:
        if st.backend == backend:
            n = len(st.speedups)
            spread = f"; cases {range_text(st.lo, st.hi)}" if n > 1 else ""
            span = range_text(st.range_lo, st.range_hi)
            return Cell(f"{times(st.median)} (range {span}{spread}, "
                        f"{n} case{'s' if n != 1 else ''}; {where})", st.median, st.rows,
                        st.range_lo, st.range_hi)
    for st in v.partial:
        if st.backend == backend:
            return Cell(f"{times(st.median)} over {len(st.cases)} of {len(v.cases)} cases, "
                        f"not ranked: lacks {_missing(v, st)} ({where})", st.median, st.rows,
                        st.lo, st.hi)
    return not_measured(f"no ok {'/'.join(v.kernels)} rows with a NumPy baseline ({band} sizes)")


def _missing(v: verdicts.ClassVerdict, st: verdicts.Standing) -> str:
    """The cases of the verdict a partly measured framework lacks, briefly."""
    lacks = [c for c in v.cases if c not in st.cases]
    text = ", ".join(f"{k}/{var} {d}" for k, var, d, _s in lacks[:3])
    return text + (f" and {len(lacks) - 3} more" if len(lacks) > 3 else "")


def overhead_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = ok_hot(df)
    rows = rows[(rows["backend"] == backend) & (rows["kernel"] == LAUNCH_OVERHEAD.name)
                & (rows["caller_s"] > 0)].sort_values("caller_s", kind="mergesort")
    if rows.empty:
        return not_measured("no ok launch_overhead rows")
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
        return not_measured(note or "no first-call times")
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
    rows = ok_hot(df)
    rows = rows[(rows["backend"] == backend) & (rows["pct_of_ceiling"] > 0)]
    if rows.empty:
        return not_measured("no row has a ceiling to compare with (the probe's)")
    top = rows.loc[rows.groupby(["kernel", "variant", "dtype"])["size_key"].idxmax()]
    return range_cell(top["pct_of_ceiling"], top.index, lambda v: f"{v:.0f}", " %")


def code_cell(code: pd.DataFrame, framework: str) -> Cell:
    mine = code[code["framework"] == framework] if not code.empty else code
    if mine.empty:
        return not_measured("no implementation source found")
    lines = mine["python"] + mine["cuda_c"]
    per_kernel = lines.groupby(mine["kernel"]).min()
    return Cell(f"{per_kernel.median():.0f} lines (shortest per kernel, median of "
                f"{len(per_kernel)} kernels)", float(per_kernel.median()))


def mpi_cell(mpi: pd.DataFrame, framework: str, device: str) -> Cell:
    if mpi.empty:
        return not_measured("MPI was not run")
    rows = mpi[(mpi["framework"] == framework) & (mpi["device"] == device)
               & (mpi["status"] == "ok") & (pd.to_numeric(mpi["ranks"]) > 1)
               & pd.to_numeric(mpi["efficiency"], errors="coerce").notna()]
    if rows.empty:
        return not_measured(f"no ok multi-rank scaling rows for {framework}-{device}")
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
    """The crossover class's crossover (:func:`~gpubench.workloads.crossover_class`: the
    same figure as the bullet, the crossover section and the claims check), with host
    transfers beside it."""
    c = cross.get((backend, crossover_class()))
    title = class_title(crossover_class())
    if c is None or not c.n:
        return not_measured(f"no {title} rows on both CPU and GPU")
    return Cell(f"{c.sentence()} ({title} class: {', '.join(c.cases)})", c.median,
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


def sig2(x: float) -> str:
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
    rows = ok_hot(df)
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
        parts.append(f"{sig2(float(np.median(gbj)))}{pm} GB/J memory-bound (median of "
                     f"{len(gbj)} cases)")
        used += mem_rows
    gfj, gemm_rows = verdicts.energy_per_case(df, backend, energy_kernels("flops"), "flops")
    if gfj:
        parts.append(f"{sig2(float(np.median(gfj)))}{pm} GFLOP/J GEMM (median of "
                     f"{len(gfj)} cases)")
        used += gemm_rows
    if not parts:
        return not_measured("energy read only for kernels without a byte or flop count")
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
    rows = ok_hot(df)
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
        mine = ok_hot(df)
        why = mine.loc[mine["backend"] == backend, "memory_reason"].dropna().astype(str)
        why = why[why != ""]
        return Cell(why.iloc[0][:160] if len(why) else f"{NOT_MEASURED}: no memory readings")
    top = _frugal(rows)
    m = top["memory_multiple"].astype(float)
    most = top.loc[m.idxmax()]
    spread = f", {times(m.min())}–{times(m.max())}" if len(m) > 1 else ""
    return Cell(f"{times(float(m.median()))} its inputs+outputs (median of {len(m)} cases at "
                f"their largest size{spread}; most: {most['kernel']}/{most['variant']} "
                f"{most['dtype']} {times(float(most['memory_multiple']))}, "
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
    parts = [f"{_display(b)} {times(float(v))}" for b, v in per.items()]
    first, *rest = parts
    name, _, x = first.rpartition(" ")
    tail = "".join(f", {p}" for p in rest)
    return (f"Device memory: {name} needs {x} the inputs plus outputs for {what} "
            f"({kernel}/{variant} {dtype}, size {int(size):,}){tail}.")
