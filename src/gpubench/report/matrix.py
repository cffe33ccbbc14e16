"""'Which framework?': the seeds' comparison matrix, filled from this run's rows.

One row per framework and device, one column per aspect the seeds assert (speedup per
workload class, call overhead, first-call cost, % of ceiling, code size, multi-GPU
scaling, crossover, autodiff, correctness, work per joule). Every cell keeps the rows it
came from (:attr:`Cell.rows`, indices of the prepared timings frame), which the page
lists, so each number can be traced to ``timings.csv``. A cell without data says
``not measured``, never a guess. Sentences ("Choose X when ...") and the seeds' claims
with a verdict are generated from the same cells, with the noise test of
:func:`gpubench.report.stats.compare` behind every "faster" and "within noise".

Speedups are on the caller's clock (pipelined; CPU: wall), against the fastest NumPy
row of the same case: what a Python loop waits for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpubench.report import render, stats
from gpubench.report.base import BASELINE_FRAMEWORK, fmt_time
from gpubench.report.render import text_table

NOT_MEASURED = "not measured"

#: workload classes and their kernels; "small arrays" is the smallest size measured of
#: the memory-bound kernels, where a call's fixed cost dominates
CLASSES: dict[str, tuple[str, ...]] = {
    "elementwise": ("vector_add", "elementwise", "moving_average"),
    "reductions": ("reduction",),
    "GEMM and linalg": ("matmul", "linalg"),
    "FFT": ("fft",),
    "random numbers": ("monte_carlo_pi",),
    "autodiff": ("autodiff",),
    "small arrays": ("vector_add", "elementwise", "reduction"),
}
SMALL = "small arrays"
#: the seeds' figures the claims are checked against
SEED_SPEEDUP = (10.0, 100.0)
SEED_CROSSOVER = 10_000


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


def _best_rows_all(df: pd.DataFrame, smallest: bool) -> pd.DataFrame:
    """:func:`best_rows` for every backend and kernel at once, in (kernel, variant,
    dtype) order."""
    rows = _ok_hot(df)
    rows = rows[rows["speedup"] > 0]
    keys = ["backend", "kernel", "variant", "dtype"]
    size = rows.groupby(keys)["size_key"].transform("min" if smallest else "max")
    at = rows[rows["size_key"] == size].sort_values(["caller_s", "implementation"],
                                                     kind="mergesort")
    return at.drop_duplicates(keys, keep="first").sort_values(keys[1:], kind="mergesort")


def best_rows(df: pd.DataFrame, backend: str, kernels: Sequence[str],
              smallest: bool = False) -> pd.DataFrame:
    """Per (kernel, variant, dtype) of ``kernels``: the backend's fastest row on the
    caller's clock at the largest (or smallest) size that NumPy measured too."""
    best = _memo(df, ("best", smallest), lambda: _best_rows_all(df, smallest))
    return best[(best["backend"] == backend) & best["kernel"].isin(kernels)]


def _range_cell(values: pd.Series, rows: pd.Index, fmt: Any, unit: str = "") -> Cell:
    v = values.to_numpy(float)
    med, lo, hi = float(np.median(v)), float(v.min()), float(v.max())
    spread = f" ({fmt(lo)}–{fmt(hi)}, {len(v)} cases)" if len(v) > 1 else " (1 case)"
    return Cell(f"{fmt(med)}{unit}{spread}", med, [int(i) for i in rows], lo, hi)


def speedup_cell(df: pd.DataFrame, backend: str, cls: str) -> Cell:
    if backend.startswith(f"{BASELINE_FRAMEWORK}-"):
        return Cell("1× (baseline)", 1.0)
    best = best_rows(df, backend, CLASSES[cls], smallest=cls == SMALL)
    if best.empty:
        return _nm(f"no ok {'/'.join(CLASSES[cls])} rows with a NumPy baseline")
    return _range_cell(best["speedup"], best.index, _x)


def overhead_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = _ok_hot(df)
    rows = rows[(rows["backend"] == backend) & (rows["kernel"] == "launch_overhead")
                & (rows["caller_s"] > 0)].sort_values("caller_s", kind="mergesort")
    if rows.empty:
        return _nm("no ok launch_overhead rows")
    r = rows.iloc[0]
    sync = f", sync {fmt_time(r['sync_s'])}" if r["device"] == "gpu" else " wall"
    return Cell(f"{fmt_time(r['caller_s'])}{sync} ({r['implementation']})",
                float(r["caller_s"]), [int(rows.index[0])])


def first_call_cell(df: pd.DataFrame, backend: str) -> Cell:
    """The first call's extra cost over a steady call (compilation, autotuning, first
    allocation): median and largest over the backend's hot rows."""
    rows = _ok_hot(df)
    rows = rows[(rows["backend"] == backend) & (rows["first_call_s"] > 0)
                & (rows["caller_s"] > 0)]
    if rows.empty:
        return _nm("no first-call times")
    # building (tracing, allocation, ahead-of-time compiling) and the first call's wait,
    # less what a steady call costs
    extra = (rows["setup_s"].fillna(0) + rows["first_call_s"] - rows["caller_s"]).clip(
        lower=0)
    worst = extra.idxmax()
    return Cell(f"median {fmt_time(float(extra.median()))}, largest "
                f"{fmt_time(float(extra.max()))} ({rows.loc[worst, 'kernel']} "
                f"{rows.loc[worst, 'implementation']})", float(extra.median()),
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
    return Cell(f"{int(ranks.max())} {unit}: efficiency {eff.median():.2f} (median of "
                f"{len(eff)} MPI rows: {', '.join(sorted(set(top['job'].astype(str))))})",
                float(eff.median()))


def crossover_cell(crossings: Sequence[Any], backend: str) -> Cell:
    for c in crossings:
        if (c.backend == backend and c.kernel == "vector_add" and c.dtype == "float32"):
            text, size = c.device_resident
            return Cell(f"{text} elements (vector_add float32, data on the device)",
                        float(size) if size is not None else math.nan)
    return _nm("no vector_add float32 rows on both CPU and GPU")


def autodiff_cell(df: pd.DataFrame, backend: str) -> Cell:
    rows = df[(df["backend"] == backend) & (df["kernel"] == "autodiff")]
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


def energy_cell(df: pd.DataFrame, backend: str) -> Cell:
    """Work per joule: GB/J for the memory-bound classes, GFLOP/J for GEMM; the mean
    power range beside it."""
    rows = _ok_hot(df)
    rows = rows[rows["backend"] == backend]
    measured = rows[rows["energy_j"] > 0]
    if measured.empty:
        why = rows["energy_reason"].dropna().astype(str)
        why = why[why != ""]
        return Cell(why.iloc[0][:160] if len(why) else f"{NOT_MEASURED}: no energy readings")
    parts, used = [], []
    mem = measured[measured["kernel"].isin(("vector_add", "elementwise", "reduction",
                                            "moving_average")) & (measured["bytes"] > 0)]
    if len(mem):
        gbj = mem["bytes"] / mem["energy_j"] / 1e9
        parts.append(f"{gbj.median():.3g} GB/J memory-bound")
        used += list(mem.index)
    gemm = measured[(measured["kernel"] == "matmul") & (measured["flops"] > 0)]
    if len(gemm):
        gfj = gemm["flops"] / gemm["energy_j"] / 1e9
        parts.append(f"{gfj.max():.3g} GFLOP/J GEMM")
        used += list(gemm.index)
    if not parts:
        return _nm("energy read only for kernels without a byte or flop count")
    p = measured["energy_power_w"]
    parts.append(f"{p.min():.0f}–{p.max():.0f} W")
    value = float((mem["bytes"] / mem["energy_j"] / 1e9).median()) if len(mem) else math.nan
    return Cell("; ".join(parts), value, [int(i) for i in used])


ASPECTS = (
    *(f"speedup: {c}" for c in CLASSES),
    "call overhead", "first call, JIT", "% of ceiling", "code per kernel", "multi-GPU / ranks",
    "CPU/GPU crossover", "autodiff", "correctness incidents", "work per joule")


@dataclass
class Matrix:
    backends: list[str]
    cells: dict[tuple[str, str], Cell]

    def table(self) -> pd.DataFrame | None:
        if not self.backends:
            return None
        rows = [[b] + [self.cells[(b, a)].text for a in ASPECTS] for b in self.backends]
        return text_table(["framework-device", *ASPECTS], rows)

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
          mpi: pd.DataFrame) -> Matrix:
    """The matrix for every backend with rows, NumPy first, then CPU, then GPU."""
    backends = sorted(set(df["backend"]), key=lambda b: (
        not b.startswith(f"{BASELINE_FRAMEWORK}-"), b.endswith("-gpu"), b))
    cells: dict[tuple[str, str], Cell] = {}
    for b in backends:
        framework, _, device = b.rpartition("-")
        for cls in CLASSES:
            cells[(b, f"speedup: {cls}")] = speedup_cell(df, b, cls)
        cells[(b, "call overhead")] = overhead_cell(df, b)
        cells[(b, "first call, JIT")] = first_call_cell(df, b)
        cells[(b, "% of ceiling")] = ceiling_cell(df, b)
        cells[(b, "code per kernel")] = code_cell(code, framework)
        cells[(b, "multi-GPU / ranks")] = mpi_cell(mpi, framework, device)
        cells[(b, "CPU/GPU crossover")] = (crossover_cell(crossings, b) if device == "gpu"
                                           else Cell("— (CPU)"))
        cells[(b, "autodiff")] = autodiff_cell(df, b)
        cells[(b, "correctness incidents")] = incidents_cell(df, b)
        cells[(b, "work per joule")] = energy_cell(df, b)
    return Matrix(backends, cells)


# -- sentences ------------------------------------------------------------------------------


def _class_verdicts(df: pd.DataFrame, samples: stats.Samples, a: str, b: str,
                    kernels: Sequence[str], smallest: bool) -> tuple[int, int, int]:
    """Over the class's cases both backends measured: (a surely faster, within noise,
    b surely faster), on the caller's clock with the recorded samples."""
    ra = best_rows(df, a, kernels, smallest).set_index(["kernel", "variant", "dtype"],
                                                       drop=False)
    rb = best_rows(df, b, kernels, smallest).set_index(["kernel", "variant", "dtype"],
                                                       drop=False)
    counts = [0, 0, 0]
    for key in ra.index.intersection(rb.index):
        x, y = ra.loc[key], rb.loc[key]
        if x["size_key"] != y["size_key"]:
            continue
        v = stats.compare(float(y["caller_s"]), float(x["caller_s"]),
                          samples.get(int(y["_row"]), "pipelined"),
                          samples.get(int(x["_row"]), "pipelined"),
                          (y["caller_q1"], y["caller_q3"]), (x["caller_q1"], x["caller_q3"]))
        counts[0 if v.label == stats.FASTER else 2 if v.label == stats.SLOWER else 1] += 1
    return counts[0], counts[1], counts[2]


def sentences(matrix: Matrix, df: pd.DataFrame, samples: stats.Samples) -> list[str]:
    """'Choose X when' per workload class, from the matrix and the noise test."""
    df = df.assign(_row=df.index)
    out = []
    for cls, kernels in CLASSES.items():
        ranked = sorted(((matrix.cells[(b, f"speedup: {cls}")], b) for b in matrix.backends
                         if not b.startswith(f"{BASELINE_FRAMEWORK}-")
                         and matrix.cells[(b, f"speedup: {cls}")].measured),
                        key=lambda cb: (-cb[0].value, cb[1]))
        if not ranked:
            continue
        (c1, b1) = ranked[0]
        where = "at the smallest sizes measured" if cls == SMALL else "at the largest sizes"
        if c1.value < 1:
            out.append(f"{cls[0].upper() + cls[1:]} {where}: stay on NumPy; the fastest other "
                       f"framework, {b1}, reaches {_x(c1.value)} of NumPy's speed (median).")
            continue
        name = cls[0].upper() + cls[1:]
        text = f"{name} {where}: choose {b1}, {_x(c1.value)} faster than NumPy"
        text += f" (median of {len(c1.rows)} cases, {_x(c1.lo)}–{_x(c1.hi)})"
        if len(ranked) > 1:
            c2, b2 = ranked[1]
            win, same, lose = _class_verdicts(df, samples, b1, b2, kernels, cls == SMALL)
            n = win + same + lose
            if n and same >= win + lose:
                text += (f"; {b2} ({_x(c2.value)}) is within noise of it in {same} of {n} "
                         "cases, so either will do")
            elif n:
                text += (f"; against {b2} ({_x(c2.value)}), {b1} is surely faster in {win} "
                         f"of {n} cases, within noise in {same}, slower in {lose}")
        if cls == "elementwise":
            cross = matrix.cells.get((b1, "CPU/GPU crossover"))
            if cross and math.isfinite(cross.value):
                text += f"; below about {cross.value:,.0f} elements stay on NumPy"
        out.append(text + ".")
    return out


# -- the seeds' claims ------------------------------------------------------------------------


def _verdict(flags: Sequence[bool]) -> str:
    if not flags:
        return NOT_MEASURED
    return "holds" if all(flags) else "does not hold" if not any(flags) else "partly"


def claims(matrix: Matrix) -> pd.DataFrame | None:
    """The seeds' assertions beside this run's answer: holds, does not hold or partly."""
    gpus = [b for b in matrix.backends if b.endswith("-gpu")]
    rows = []
    # "Typical Speedup: 10-100x over NumPy"
    lo, hi = SEED_SPEEDUP
    per, flags = [], []
    for b in gpus:
        vals = [matrix.cells[(b, f"speedup: {c}")].value for c in CLASSES if c != SMALL]
        vals = [v for v in vals if math.isfinite(v)]
        if vals:
            inside = [lo <= v <= hi for v in vals]
            flags += inside
            per.append(f"{b}: {sum(inside)} of {len(vals)} classes in 10–100× "
                       f"(range {_x(min(vals))}–{_x(max(vals))})")
    rows.append(["typical speedup 10–100× over NumPy (comparison matrix)",
                 "; ".join(per) or NOT_MEASURED, _verdict(flags)])
    # "Small datasets (< 10,000 elements): use the CPU"
    per, flags = [], []
    for b in gpus:
        c = matrix.cells[(b, "CPU/GPU crossover")]
        if math.isfinite(c.value):
            flags.append(SEED_CROSSOVER / 3 <= c.value <= SEED_CROSSOVER * 3)
            per.append(f"{b}: {c.value:,.0f}")
    rows.append(["the GPU loses below ~10,000 elements (within 3×)",
                 "; ".join(per) or NOT_MEASURED, _verdict(flags)])
    # code verbosity
    code = {b: matrix.cells[(b, "code per kernel")].value for b in matrix.backends}
    known = {b: v for b, v in code.items() if math.isfinite(v)}
    overall = float(np.median(list(known.values()))) if known else math.nan
    for name, verbose, claim in (("cupy-gpu", False, "CuPy: gentle, low verbosity"),
                                 ("cuda_python-gpu", True, "CUDA Python: verbose")):
        if name in known and math.isfinite(overall):
            v = known[name]
            ok = v >= 1.5 * overall if verbose else v <= overall
            rows.append([claim, f"{v:.0f} lines per kernel against a median of "
                         f"{overall:.0f} over all frameworks", "holds" if ok else
                         "does not hold"])
        else:
            rows.append([claim, NOT_MEASURED, NOT_MEASURED])
    # compilation
    for name, claim, big in (("numba-gpu", "Numba: the first call pays JIT compilation", True),
                             ("jax-gpu", "JAX: JIT (XLA) compiles on the first call", True),
                             ("cupy-gpu", "CuPy: no compilation overhead for standard "
                              "operations", False)):
        c = matrix.cells.get((name, "first call, JIT"))
        if c is None or not c.measured:
            rows.append([claim, NOT_MEASURED, NOT_MEASURED])
            continue
        # compilation is visible when the first call's extra cost reaches 10 ms
        typical, worst = c.value >= 0.01, c.hi >= 0.01
        rows.append([claim, c.text, "holds" if typical == worst == big else
                     "partly" if big in (typical, worst) else "does not hold"])
    return text_table(["seed claim", "measured here", "verdict"], rows)


@dataclass
class Which:
    """The "Which framework?" section: the matrix as a table, its sentences, the seeds'
    claims and every cell's rows (None: no backend)."""

    table: pd.DataFrame | None
    lines: list[str]
    seed: pd.DataFrame | None
    sources: pd.DataFrame | None


def section(matrix: Matrix, lines: list[str], seed: pd.DataFrame | None,
            df: pd.DataFrame | None = None) -> Which:
    """The section's data; ``df`` (the prepared frame) gives the rows behind each cell."""
    table = matrix.table()
    sources = matrix.sources(df) if table is not None and df is not None else None
    return Which(table, lines, seed, sources)


def render_html(matrix: Matrix, lines: list[str], seed: pd.DataFrame | None,
                df: pd.DataFrame) -> str:
    """The section as HTML (``matrix.html.j2``; empty without a backend)."""
    return render.render_html("matrix.html.j2", s=section(matrix, lines, seed, df))


def render_markdown(matrix: Matrix, lines: list[str], seed: pd.DataFrame | None) -> str:
    """The section as Markdown (``matrix.md.j2``; empty without a backend)."""
    return render.render_md("matrix.md.j2", s=section(matrix, lines, seed))


def for_inputs(df: pd.DataFrame, samples: stats.Samples, crossings: Sequence[Any],
               mpi: pd.DataFrame, code: pd.DataFrame | None = None
               ) -> tuple[Matrix, list[str], pd.DataFrame | None]:
    """The matrix, its sentences and the seeds' claims; ``code``: the code-size section's
    sizes when already measured."""
    from gpubench.report.sections import code_size

    matrix = build(df, crossings, code_size(df) if code is None else code, mpi)
    return matrix, sentences(matrix, df, samples), claims(matrix)



# -- two machines side by side ----------------------------------------------------------------


def _speedup_change(base_df: pd.DataFrame, base_samples: stats.Samples, new_df: pd.DataFrame,
                    new_samples: stats.Samples, backend: str, cls: str) -> str:
    """Noise-aware: per case of the class, the backend's best row on each machine at the
    same size, compared on the caller's clock with the recorded samples."""
    small = cls == SMALL
    rb = best_rows(base_df, backend, CLASSES[cls], small).set_index(
        ["kernel", "variant", "dtype", "size_key"], drop=False)
    rn = best_rows(new_df, backend, CLASSES[cls], small).set_index(
        ["kernel", "variant", "dtype", "size_key"], drop=False)
    counts = {stats.FASTER: 0, stats.SAME: 0, stats.SLOWER: 0}
    for key in rb.index.intersection(rn.index):
        b, n = rb.loc[key], rn.loc[key]
        v = stats.compare(float(b["caller_s"]), float(n["caller_s"]),
                          base_samples.get(int(b["_row"]), "pipelined"),
                          new_samples.get(int(n["_row"]), "pipelined"),
                          (b["caller_q1"], b["caller_q3"]), (n["caller_q1"], n["caller_q3"]))
        counts[v.label] += 1
    total = sum(counts.values())
    if not total:
        return "no shared cases"
    f, s, w = counts[stats.FASTER], counts[stats.SAME], counts[stats.SLOWER]
    label = (stats.FASTER if f > s + w else stats.SLOWER if w > f + s
             else stats.SAME if s > f + w else "MIXED")
    return f"{label}: new faster in {f} of {total} cases, same in {s}, slower in {w}"


def side_by_side(base: tuple[Matrix, pd.DataFrame, stats.Samples],
                 new: tuple[Matrix, pd.DataFrame, stats.Samples]) -> pd.DataFrame | None:
    """Both machines' matrices, aspect by aspect, with a noise-aware label where the
    samples allow one (the speedup classes, on the caller's clock: each row's time, not
    the ratio to each machine's NumPy, so a faster host CPU does not pass for a slower
    GPU); single readings (energy, first call, code) are shown, not labelled."""
    (bm, bdf, bs), (nm, ndf, ns) = base, new
    bdf, ndf = bdf.assign(_row=bdf.index), ndf.assign(_row=ndf.index)
    rows = []
    for b in [x for x in bm.backends if x in nm.backends]:
        for a in ASPECTS:
            cb, cn = bm.cells[(b, a)], nm.cells[(b, a)]
            if not (cb.measured or cn.measured):
                continue
            if a.startswith("speedup: ") and not b.startswith(f"{BASELINE_FRAMEWORK}-"):
                label = _speedup_change(bdf, bs, ndf, ns, b, a[len("speedup: "):])
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
