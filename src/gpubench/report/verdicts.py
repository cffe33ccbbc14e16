"""The decisions behind "Which framework?": like-for-like class verdicts, one crossover
figure per framework and class, first-call cost where compilation happens.

Everything here is a pure function of the prepared timings frame (and the samples), so
the decision logic can be tested on its own, edge cases and properties included
(``tests/test_verdicts.py``). The rules, each of which a user can check by hand:

* **Like for like.** A class (elementwise, reductions, GEMM, linalg, FFT, random numbers,
  autodiff) is judged per size band (:data:`BANDS`, bounds stated in every sentence). Per
  kernel of the class the band's comparison size is the one size at which the most
  (framework, case) pairs were measured (the largest on ties), NumPy among them; a case
  not measured there is left out and named; each framework enters with its fastest
  implementation there on the caller's clock. Only frameworks that measured *every* case
  of the class may win it, and they are ranked by their median speedup over NumPy over
  those same cases. A framework with cases missing (not implemented, failed, wrong,
  implausible, or measured at other sizes) is named with what it lacks and compared with
  the winner on the cases both have; it cannot win by having measured fewer. Where no
  framework measured every case, the cases measured by the fewest frameworks are left out,
  one at a time, and named.
* **Noise.** Winner against runner-up, case by case, with
  :func:`gpubench.report.stats.compare`: *surely faster*, *within ±5 %* (equivalence
  shown by the samples) or *unresolved*. "Either will do" needs equivalence shown in at
  least half of the cases and no case where the runner-up is surely faster.
* **Leaders by one rule.** Each speedup has a range from the rows' quartiles
  (:func:`gpubench.report.base.speedup_range`); a class's median speedup, the median of
  its cases' low and high ends. The verdict names the best (highest median) and every
  ranked framework that is not surely slower than it (:func:`surely_slower`: its range
  wholly below the best's), by median; one framework where every other range lies below.
* **One crossover per framework and class**: the median over the class's cases of the
  per-case crossover (:mod:`gpubench.report.sections.crossover`), "never" counted as
  larger than any size, with its range; the figure with host transfers beside it. The
  bullet, the matrix cell, the crossover section and the claims check all read it here.
* **First call at the first size.** Only the first (smallest) size of each case and
  implementation compiles; later sizes reuse the in-process cache. Rows whose first call
  met a warm persistent cache (``cache_state``) and ``interop`` rows (whose first call
  starts a second framework) are not compilation cost.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpubench.backends import split_backend_id
from gpubench.report import stats
from gpubench.report.base import BASELINE_FRAMEWORK, _kernel_spec
from gpubench.spec import kernel_specs, report_classes
from gpubench.workloads import SMALL_ARRAYS, class_title, crossover_class, workload_class


def classes() -> dict[str, tuple[str, ...]]:
    """Workload classes and their kernels (each kernel's
    :attr:`~gpubench.spec.KernelSpec.report_class`), in the order of their first kernel."""
    return report_classes()


#: the class of small arrays: the small band of these classes, where fixed costs rule
SMALL = SMALL_ARRAYS.key
#: a cell or claim this run has no rows for
NOT_MEASURED = "not measured"
#: a crossover's device-resident cell where the rows have no caller's clock (schema 1)
NO_CALLER_CLOCK = "— (no caller's clock)"


def speedup_classes() -> tuple[str, ...]:
    """The speedup columns: one per workload class, then small arrays."""
    return (*classes(), SMALL)


def speedup_aspect(cls: str) -> str:
    """The matrix's aspect (its column) of a class's speedup: "speedup: <title>"."""
    return f"speedup: {class_title(cls)}"


def aspect_class(aspect: str) -> str:
    """The class key of a :func:`speedup_aspect`; '' if ``aspect`` is none."""
    return next((c for c in speedup_classes() if speedup_aspect(c) == aspect), "")


def small_kernels_of() -> tuple[str, ...]:
    """The small-arrays class's kernels: those of every class whose record says
    :attr:`~gpubench.workloads.WorkloadClass.small`."""
    return tuple(k for c, ks in classes().items() if workload_class(c).small for k in ks)

#: size bands, by what a kernel's size counts: (name, largest size in the band)
ELEMENT_BANDS: tuple[tuple[str, float], ...] = (
    ("small", 16_384), ("medium", 4_194_304), ("large", math.inf))
ORDER_BANDS: tuple[tuple[str, float], ...] = (
    ("small", 128), ("medium", 1_024), ("large", math.inf))
BAND_NAMES = ("small", "medium", "large")

#: first-call extra cost from which compilation counts as visible (the claims' rule)
JIT_VISIBLE_S = 0.01


def bands_for(kernel: str) -> tuple[tuple[str, float], ...]:
    """The size bands of a kernel: matrix order n or element counts."""
    spec = _kernel_spec(kernel)
    meaning = spec.size_meaning if spec else "elements"
    return ORDER_BANDS if meaning.startswith("matrix order") else ELEMENT_BANDS


def band_of(kernel: str, size: float) -> str:
    """small, medium or large: the first band whose bound is at least ``size``."""
    for name, top in bands_for(kernel):
        if size <= top:
            return name
    return BAND_NAMES[-1]  # pragma: no cover - the last bound is infinite


def band_bounds(kernel: str, band: str) -> str:
    """The band's bounds in words: "≤ 16,384", "16,385–4,194,304", "> 4,194,304"."""
    bands = bands_for(kernel)
    names = [n for n, _ in bands]
    i = names.index(band)
    lo = bands[i - 1][1] if i > 0 else None
    hi = bands[i][1]
    if lo is None:
        return f"≤ {hi:,.0f}"
    if math.isinf(hi):
        return f"> {lo:,.0f}"
    return f"{lo + 1:,.0f}–{hi:,.0f}"


def unit_of(kernel: str) -> str:
    spec = _kernel_spec(kernel)
    meaning = spec.size_meaning if spec else "elements"
    return "n" if meaning.startswith("matrix order") else "elements"


# -- the case table -------------------------------------------------------------------------


def case_table(df: pd.DataFrame, mode: str = "hot") -> pd.DataFrame:
    """Per (backend, kernel, variant, dtype, size): the backend's fastest ok row on the
    caller's clock (ties broken by implementation name), with its speedup over NumPy's
    fastest row of the same case; only cases NumPy measured, only data on the device
    (``+transfers`` rows are another question), never NumPy itself. Columns: backend,
    kernel, variant, dtype, size_key, band, implementation, caller_s, speedup,
    speedup_lo, speedup_hi (its range: :func:`gpubench.report.base.speedup_range`), row
    (the index in ``df``)."""
    rows = df[(df["status"] == "ok") & (df["mode"] == mode)
              & ~df["implementation"].astype(str).str.endswith("+transfers")
              & (df["caller_s"] > 0) & (df["speedup"] > 0)
              & (df["framework"] != BASELINE_FRAMEWORK)]
    keys = ["backend", "kernel", "variant", "dtype", "size_key"]
    rows = rows.assign(row=rows.index).sort_values(
        [*keys, "caller_s", "implementation"], kind="mergesort")
    best = rows.drop_duplicates(keys, keep="first")
    out = best[[*keys, "implementation", "caller_s", "speedup", "row"]].reset_index(drop=True)
    for col in ("speedup_lo", "speedup_hi"):  # a frame without quartiles: the point
        out[col] = (best[col] if col in best.columns else best["speedup"]).to_numpy(float)
    out["band"] = [band_of(k, s) for k, s in zip(out["kernel"], out["size_key"], strict=True)]
    return out


# -- class verdicts -------------------------------------------------------------------------


Case = tuple[str, str, str, int]  # kernel, variant, dtype, size


@dataclass
class Standing:
    """One framework in one class and band: its speedups over the cases it measured."""

    backend: str
    cases: list[Case]
    speedups: list[float]
    rows: list[int]
    #: each case's speedup range (:func:`gpubench.report.base.speedup_range`)
    lows: list[float] = field(default_factory=list)
    highs: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return float(np.median(self.speedups)) if self.speedups else math.nan

    @property
    def range_lo(self) -> float:
        """The median's range, low end: the median of the cases' low ends (with every
        case inside its range, the median over the cases lies inside this one)."""
        return _median_or(self.lows, self.median)

    @property
    def range_hi(self) -> float:
        return _median_or(self.highs, self.median)

    @property
    def lo(self) -> float:
        return float(min(self.speedups)) if self.speedups else math.nan

    @property
    def hi(self) -> float:
        return float(max(self.speedups)) if self.speedups else math.nan


def _median_or(values: Sequence[float], default: float) -> float:
    v = [x for x in values if math.isfinite(x)]
    return float(np.median(v)) if len(v) == len(values) and v else default


def surely_slower(st: Standing, best: Standing) -> bool:
    """Whether ``st``'s median speedup range lies wholly below ``best``'s: the one rule
    that keeps a framework out of a class's leaders."""
    return st.range_hi < best.range_lo


@dataclass
class Tally:
    """Winner against another framework over their shared cases."""

    other: str
    faster: int = 0
    same: int = 0
    unresolved: int = 0
    slower: int = 0
    #: of the cases, how many were judged on the rows' quartiles (a row kept no samples)
    by_quartiles: int = 0

    @property
    def n(self) -> int:
        return self.faster + self.same + self.unresolved + self.slower

    @property
    def either(self) -> bool:
        """Either will do: equivalence (±5 %) shown in at least half of the cases and
        the other surely faster in none."""
        return self.n > 0 and 2 * self.same >= self.n and self.slower == 0

    @property
    def decisive(self) -> bool:
        """The winner is surely faster in more than half of the shared cases: a ranking a
        re-run keeps (cases within noise or unresolved flip between runs)."""
        return 2 * self.faster > self.n


@dataclass
class ClassVerdict:
    """The verdict for one class and band: who was compared on which cases, who wins."""

    cls: str
    band: str
    kernels: tuple[str, ...]
    cases: list[Case]
    ranked: list[Standing]
    partial: list[Standing]
    left_out: list[tuple[Case, list[str]]] = field(default_factory=list)
    tallies: dict[str, Tally] = field(default_factory=dict)
    #: (kernel, variant, dtype) of the band not measured at the class's comparison size
    other_sizes: list[tuple[str, str, str]] = field(default_factory=list)
    #: where the fastest framework at the GPU's largest size differs from the verdict's
    #: best (:func:`largest_size_note`); "" otherwise
    largest: str = ""
    #: matrix classes: what the rows' frameworks allowed their products to round to
    #: (:func:`precision_note`); "" for the others
    precision: str = ""

    @property
    def title(self) -> str:
        """The class as the report shows it."""
        return class_title(self.cls)

    @property
    def winner(self) -> Standing | None:
        return self.ranked[0] if self.ranked else None

    @property
    def runner_up(self) -> Standing | None:
        return self.ranked[1] if len(self.ranked) > 1 else None

    @property
    def leaders(self) -> list[Standing]:
        """The best (highest median) and every ranked framework that is not surely slower
        than it (:func:`surely_slower`: its range wholly below the best's), by median: the
        answer a re-run keeps. One framework where every other range lies below the
        best's."""
        w = self.winner
        if w is None:
            return []
        return [w, *(s for s in self.ranked[1:] if not surely_slower(s, w))]

    @property
    def rows(self) -> list[int]:
        return sorted({r for s in (*self.ranked, *self.partial) for r in s.rows})

    def sizes_text(self) -> str:
        """The sizes the verdict stands on, per kernel: "vector_add at 16,777,216,
        matmul at n = 4,096"."""
        by_kernel: dict[str, set[int]] = {}
        for k, _v, _d, s in self.cases:
            by_kernel.setdefault(k, set()).add(s)
        parts = []
        for k in sorted(by_kernel):
            sizes = sorted(by_kernel[k])
            txt = f"{sizes[0]:,}" if len(sizes) == 1 else f"{sizes[0]:,}–{sizes[-1]:,}"
            parts.append(f"{k} at {'n = ' if unit_of(k) == 'n' else ''}{txt}")
        return ", ".join(parts)

    def bounds_text(self) -> str:
        return "; ".join(sorted({_bounds_words(band_bounds(k, self.band), unit_of(k) == "n")
                                 for k in self.kernels if _kernel_spec(k)})) or self.band


def _bounds_words(bounds: str, matrix_order: bool) -> str:
    """A band's bounds as a reader writes them: "> 4,194,304 elements", and for a
    matrix's order "n > 1,024" or "n = 129–1,024" (not "> 1,024 (matrix order n)")."""
    if not matrix_order:
        return f"{bounds} elements"
    return f"n {bounds}" if bounds[:1] in "<>≤≥" else f"n = {bounds}"


def _choose_sizes(table: pd.DataFrame) -> dict[str, int]:
    """Per kernel: the one size in the band at which the most (framework, case) pairs
    were measured (largest on ties): every case of a kernel is compared at one size."""
    out = {}
    for k, g in table.groupby("kernel", sort=True):
        count = g.groupby("size_key").size()
        top = count.max()
        out[str(k)] = int(max(count[count == top].index))
    return out


def class_verdict(table: pd.DataFrame, cls: str, band: str,
                  samples: stats.Samples | None = None,
                  kernels: Sequence[str] | None = None,
                  df: pd.DataFrame | None = None) -> ClassVerdict | None:
    """The like-for-like verdict of ``cls`` in ``band`` from :func:`case_table` rows;
    None when no framework measured a case of it. ``df`` (the prepared frame) and
    ``samples`` give the noise test; without them tallies use the quartiles or nothing."""
    kernels = tuple(kernels or classes()[cls])
    mine = table[table["kernel"].isin(kernels) & (table["band"] == band)]
    if mine.empty:
        return None
    sizes = _choose_sizes(mine)
    at = mine[[sizes[str(k)] == s for k, s in zip(mine["kernel"], mine["size_key"],
                                                  strict=True)]]
    elsewhere = sorted({(str(k), str(v), str(d)) for k, v, d in zip(
        mine["kernel"], mine["variant"], mine["dtype"], strict=True)}
        - {(str(k), str(v), str(d)) for k, v, d in zip(
            at["kernel"], at["variant"], at["dtype"], strict=True)})
    have: dict[str, dict[Case, tuple[float, int, float, float]]] = {}
    for r in at.itertuples(index=False):
        case = (str(r.kernel), str(r.variant), str(r.dtype), int(r.size_key))
        have.setdefault(str(r.backend), {})[case] = (
            float(r.speedup), int(r.row), float(r.speedup_lo), float(r.speedup_hi))
    universe = sorted({c for per in have.values() for c in per})
    left_out: list[tuple[Case, list[str]]] = []
    cases = list(universe)
    while cases and not any(all(c in per for c in cases) for per in have.values()):
        # the case measured by the fewest frameworks goes first (the last such in order)
        fewest = min(sum(c in per for per in have.values()) for c in cases)
        drop = [c for c in cases if sum(c in per for per in have.values()) == fewest][-1]
        cases.remove(drop)
        left_out.append((drop, sorted(b for b, per in have.items() if drop in per)))
    ranked, partial = [], []
    for backend in sorted(have):
        per = have[backend]
        full = bool(cases) and all(c in per for c in cases)
        own = list(cases) if full else [c for c in universe if c in per]
        st = Standing(backend, own, [per[c][0] for c in own], [per[c][1] for c in own],
                      [per[c][2] for c in own], [per[c][3] for c in own])
        (ranked if full else partial).append(st)
    ranked.sort(key=lambda s: (-s.median, s.backend))
    verdict = ClassVerdict(cls, band, kernels, cases, ranked, partial, left_out,
                           other_sizes=elsewhere)
    if verdict.winner is not None:
        for other in [*ranked[1:], *partial]:
            verdict.tallies[other.backend] = tally(verdict.winner, other, df, samples)
    if df is not None and workload_class(cls).precision:
        verdict.precision = precision_note(df.loc[verdict.rows])
    return verdict


#: how :func:`precision_note` names a reduced format
PRECISION_NAMES = {"tf32": "TF32", "bf16": "bfloat16"}


def precision_note(rows: pd.DataFrame) -> str:
    """What the rows' frameworks allowed their matrix products to round to (the rows'
    ``matmul_precision``): every row in full precision, the backends that allowed a
    reduced format, or that the rows do not say."""
    values = rows.get("matmul_precision", pd.Series("", index=rows.index))
    values = values.fillna("").astype(str)
    reduced = sorted({(str(b), PRECISION_NAMES.get(p, p)) for b, p in
                      zip(rows["backend"], values, strict=True) if p not in ("", "full")})
    if reduced:
        return "reduced precision allowed: " + ", ".join(f"{b} ({p})" for b, p in reduced)
    if (values == "").any():
        return "precision not recorded (an older results file)" if (values == "").all() \
            else f"precision not recorded in {int((values == '').sum())} of {len(values)} rows"
    return "full precision (no TF32 or bfloat16) in every row"


def tally(winner: Standing, other: Standing, df: pd.DataFrame | None,
          samples: stats.Samples | None) -> Tally:
    """Winner against ``other`` case by case over the cases both measured, on the
    caller's clock with the recorded samples (quartiles where there are none)."""
    out = Tally(other.backend)
    theirs = dict(zip(other.cases, other.rows, strict=True))
    for case, row in zip(winner.cases, winner.rows, strict=True):
        if case not in theirs:
            continue
        v = _compare_rows(df, samples, theirs[case], row)
        out.by_quartiles += v.method == "iqr"
        if v.label == stats.FASTER:
            out.faster += 1
        elif v.label == stats.SLOWER:
            out.slower += 1
        elif v.label == stats.SAME:
            out.same += 1
        else:
            out.unresolved += 1
    return out


def _compare_rows(df: pd.DataFrame | None, samples: stats.Samples | None, base: int,
                  new: int) -> stats.Verdict:
    """stats.compare of row ``new`` against row ``base`` on the caller's clock."""
    if df is None:
        return stats.Verdict(stats.UNRESOLVED, math.nan, math.nan, "none")
    b, n = df.loc[base], df.loc[new]
    get = samples.get if samples is not None else (lambda i, c: None)
    return stats.compare(float(b["caller_s"]), float(n["caller_s"]),
                         get(int(base), "pipelined"), get(int(new), "pipelined"),
                         (b["caller_q1"], b["caller_q3"]), (n["caller_q1"], n["caller_q3"]))


def largest_size_note(df: pd.DataFrame, v: ClassVerdict, mode: str = "hot") -> str:
    """Where the GPU frameworks measured the class's cases beyond the comparison size
    (no NumPy row there): at each case's largest such size, the GPU framework fastest on
    the caller's clock in most cases, said where it is not the verdict's best, with the
    best's time over its own in those cases. "" where it is the same or nothing larger."""
    w = v.winner
    if w is None or not v.cases:
        return ""
    gpu = df[(df["status"] == "ok") & (df["mode"] == mode) & (df["device"] == "gpu")
             & ~df["implementation"].astype(str).str.endswith("+transfers")
             & (df["caller_s"] > 0)]
    wins: dict[str, list[tuple[Case, float]]] = {}
    for k, var, d, size in v.cases:
        rows = gpu[(gpu["kernel"] == k) & (gpu["variant"] == var) & (gpu["dtype"] == d)]
        top = rows["size_key"].max() if not rows.empty else size
        if not top > size:
            continue
        at = rows[rows["size_key"] == top].groupby("backend")["caller_s"].min()
        if w.backend not in at.index:
            continue
        best = str(at.sort_values(kind="mergesort").index[0])
        wins.setdefault(best, []).append(((k, var, d, int(top)), float(at[w.backend] /
                                                                       at[best])))
    if not wins:
        return ""
    n = sum(len(x) for x in wins.values())
    top_backend = max(sorted(wins), key=lambda b: len(wins[b]))
    if top_backend == w.backend:
        return ""
    ratios = [r for _, r in wins[top_backend]]
    sizes = sorted({c[3] for c, _ in wins[top_backend]})
    where = f"{sizes[0]:,}" if len(sizes) == 1 else f"{sizes[0]:,}–{sizes[-1]:,}"
    return (f"at the GPU's largest sizes ({where}, no NumPy row) {top_backend} is the "
            f"fastest in {len(ratios)} of {n} cases, {w.backend} taking "
            f"{min(ratios):.2g}–{max(ratios):.2g}× its time")


def headline_band(table: pd.DataFrame, cls: str) -> str | None:
    """The band a class's verdict is given for: the largest band with a case."""
    kernels = classes()[cls]
    bands = set(table.loc[table["kernel"].isin(kernels), "band"])
    for band in reversed(BAND_NAMES):
        if band in bands:
            return band
    return None


def verdicts(df: pd.DataFrame, samples: stats.Samples | None = None,
             mode: str = "hot") -> dict[str, dict[str, ClassVerdict]]:
    """Every class's verdict per band, and the small-arrays class (the small band of
    the classes whose record says :attr:`~gpubench.workloads.WorkloadClass.small`):
    ``{class: {band: verdict}}``."""
    table = case_table(df, mode)
    out: dict[str, dict[str, ClassVerdict]] = {}
    for cls in classes():
        per = {b: v for b in BAND_NAMES
               if (v := class_verdict(table, cls, b, samples, df=df)) is not None}
        if per:
            out[cls] = per
    for per in out.values():
        if "large" in per:
            per["large"].largest = largest_size_note(df, per["large"], mode)
    small_kernels = small_kernels_of()
    v = class_verdict(table, SMALL, "small", samples, small_kernels, df)
    if v is not None:
        out[SMALL] = {"small": v}
    return out


# -- one crossover per framework and class --------------------------------------------------


@dataclass
class CrossSummary:
    """One GPU framework's crossover for one class: median and range over its cases
    (NaN: never), on the caller's clock with the data on the device, and with host
    transfers (measured where a +transfers row exists, else estimated)."""

    backend: str
    cls: str
    n: int
    median: float
    lo: float
    hi: float
    never: int
    t_n: int = 0
    t_median: float = math.nan
    t_lo: float = math.nan
    t_hi: float = math.nan
    t_never: int = 0
    cases: list[str] = field(default_factory=list)
    #: the median is an upper bound: the GPU won at every size compared in the cases
    #: that decide it ("≤ 1,024")
    bound: bool = False
    t_bound: bool = False
    #: the median's range: the medians of the cases' range ends (NaN: none)
    r_lo: float = math.nan
    r_hi: float = math.nan
    t_r_lo: float = math.nan
    t_r_hi: float = math.nan
    #: the CPU references the cases were compared with ("numba-cpu, 16 threads")
    references: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        """The class as the report shows it."""
        return class_title(self.cls)

    def text(self) -> str:
        """"≈ 23,000 elements (range 19,000–27,000; cases 16,000–95,000 over 10; never
        in 1)"."""
        return _cross_text(self.median, self.lo, self.hi, self.n, self.never, self.bound,
                           (self.r_lo, self.r_hi))

    def transfers_text(self) -> str:
        if not self.t_n:
            return "not measured"
        return _cross_text(self.t_median, self.t_lo, self.t_hi, self.t_n, self.t_never,
                           self.t_bound, (self.t_r_lo, self.t_r_hi))

    def reference_text(self) -> str:
        """"against numba-cpu, 16 threads" (the references of the cases, each once)."""
        return f"against {' / '.join(self.references)}" if self.references else ""

    def sentence(self) -> str:
        """Both figures and the reference, as every section shows them."""
        ref = f" ({self.reference_text()})" if self.references else ""
        return f"{self.text()}; with host transfers {self.transfers_text()}{ref}"


def leader_crossovers(v: ClassVerdict, cross: Mapping[tuple[str, str], CrossSummary]
                      ) -> list[tuple[str, CrossSummary]]:
    """(backend, crossover) of each of the verdict's leaders that has one, in the
    leaders' order: where the CPU stays ahead, for the framework(s) the verdict names."""
    return [(s.backend, c) for s in v.leaders
            if (c := cross.get((s.backend, v.cls))) is not None and c.n]


def sig2(x: float) -> str:
    """Two significant digits with thousands separators: 1,612 -> 1,600."""
    return f"{float(f'{x:.2g}'):,.0f}"


def _cross_text(median: float, lo: float, hi: float, n: int, never: int,
                bound: bool = False, rng: tuple[float, float] = (math.nan, math.nan)
                ) -> str:
    if n == 0:
        return "not measured"
    where = f"{n} case{'s' if n != 1 else ''}"
    if not math.isfinite(median):
        return (f"never (the GPU is slower at the largest size compared in {never} of "
                f"{where})")
    mark = "≤" if bound else "≈"
    ranged = (f"range {sig2(rng[0])}–{sig2(rng[1])}; "
              if all(map(math.isfinite, rng)) and sig2(rng[0]) != sig2(rng[1]) else "")
    if n == 1:
        return f"{mark} {sig2(median)} elements ({ranged}1 case)"
    spread = f"{sig2(lo)}–{sig2(hi)}" if math.isfinite(hi) else f"{sig2(lo)}–never"
    extra = f"; never in {never}" if never else ""
    return f"{mark} {sig2(median)} elements ({ranged}cases {spread} over {where}{extra})"


def _case_range(cross: Any, rng: tuple[float, float]) -> tuple[float, float]:
    """A case's crossover range, "never" as above every size (its range: infinite)."""
    return rng if math.isfinite(cross[1]) else (math.inf, math.inf)


def _range_median(ranges: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The medians of the cases' range ends ("never": infinite; with an even count the
    lower middle, as :func:`median_with_never` takes), where every case has a range; NaN
    otherwise. With every case inside its range, the median lies inside this one."""
    if not ranges or any(math.isnan(x) for r in ranges for x in r):
        return math.nan, math.nan
    k = (len(ranges) - 1) // 2  # the lower middle, as the median it goes with
    return (float(sorted(r[0] for r in ranges)[k]), float(sorted(r[1] for r in ranges)[k]))


def median_with_never(values: Sequence[float], bounds: Sequence[bool] | None = None
                      ) -> tuple[float, float, float, int, bool]:
    """(median, lo, hi, never, bound) of per-case crossovers, where NaN (never) ranks
    above every size; ``bounds`` marks values that are upper bounds (the GPU won at every
    size compared), and ``bound`` says whether the median is one. With an even count the
    median is the lower of the two middle values: a measured crossover, never an average
    of two cases (and never an average with "never")."""
    v = np.array([x if math.isfinite(x) else math.inf for x in values], dtype=float)
    if v.size == 0:
        return math.nan, math.nan, math.nan, 0, False
    flags = np.asarray(bounds if bounds is not None else [False] * v.size, dtype=bool)
    order = np.lexsort((~flags, v))  # a bound sorts before a measured value of its size
    k = order[(v.size - 1) // 2]
    med = float(v[k])
    never = int(np.isinf(v).sum())
    fin = v[np.isfinite(v)]
    lo = float(fin.min()) if fin.size else math.inf
    hi = float(v.max())
    return (med if math.isfinite(med) else math.nan, lo, hi, never,
            bool(flags[k]) and math.isfinite(med))


def class_crossovers(found: Iterable[Any]) -> dict[tuple[str, str], CrossSummary]:
    """Per (GPU backend, class): the crossover summary over the class's element-sized
    cases (``found``: :func:`gpubench.report.sections.crossover.crossings`)."""
    by: dict[tuple[str, str], list[Any]] = {}
    for c in found:
        if not c.elements or c.device_resident[0] == NO_CALLER_CLOCK:
            continue
        for cls, kernels in classes().items():
            if c.kernel in kernels:
                by.setdefault((c.backend, cls), []).append(c)
    out = {}
    for (backend, cls), cs in sorted(by.items()):
        med, lo, hi, never, bound = median_with_never(
            [c.device_resident[1] for c in cs], [_is_bound(c.device_resident) for c in cs])
        trans = [c.measured_transfers or c.estimated_transfers for c in cs]
        trans = [t for t in trans if t]
        t_med, t_lo, t_hi, t_never, t_bound = median_with_never(
            [t[1] for t in trans], [_is_bound(t) for t in trans])
        r_lo, r_hi = _range_median([_case_range(c.device_resident, c.device_range)
                                    for c in cs])
        t_r_lo, t_r_hi = _range_median([
            _case_range(c.measured_transfers or c.estimated_transfers, c.transfers_range)
            for c in cs if c.measured_transfers or c.estimated_transfers])
        out[(backend, cls)] = CrossSummary(
            backend, cls, len(cs), med, lo, hi, never, len(trans), t_med, t_lo, t_hi,
            t_never, [f"{c.kernel}/{c.variant} {c.dtype}" for c in cs], bound, t_bound,
            r_lo, r_hi, t_r_lo, t_r_hi, sorted({c.reference for c in cs if c.reference}))
    return out


def _is_bound(cross: tuple[str, float]) -> bool:
    """A per-case crossover that is an upper bound: "≤ n (faster at every size)"."""
    return str(cross[0]).startswith("≤")


# -- first call where compilation happens -----------------------------------------------------


def not_own_first_call() -> list[str]:
    """Kernels whose first call is not the framework's own (a hand-off starts another
    one: :attr:`~gpubench.spec.KernelSpec.own_first_call`)."""
    return [s.name for s in kernel_specs() if not s.own_first_call]


def first_call_rows(df: pd.DataFrame, backend: str,
                    implementations: Iterable[str] | None = None,
                    new_shape: bool = False) -> pd.DataFrame:
    """The backend's rows whose first call can show compilation: ok, hot, the first
    (smallest) size of each (kernel, variant, dtype, implementation), not ``interop``,
    not met by a warm persistent cache. Column ``extra``: building plus the first call
    less a steady sync call (the first call is one call and a wait, on the host clock).

    ``new_shape``: the other sizes instead, each a first call at a shape the case has
    not run at (JAX traces and compiles again per shape, Numba compiles once per type
    signature, so the two read very differently here), the first call less a steady
    call without the building (which there makes the new size's inputs)."""
    rows = df[(df["backend"] == backend) & (df["status"] == "ok") & (df["mode"] == "hot")
              & (df["first_call_s"] > 0) & ~df["kernel"].isin(not_own_first_call())]
    if implementations is not None:
        rows = rows[rows["implementation"].isin(list(implementations))]
    if "cache_state" in rows.columns:
        rows = rows[rows["cache_state"].fillna("").astype(str) != "warm"]
    if rows.empty:
        return rows.assign(extra=pd.Series(dtype=float))
    keys = ["kernel", "variant", "dtype", "implementation"]
    first = rows.groupby(keys)["size_key"].transform("min")
    rows = rows[(rows["size_key"] > first) if new_shape else (rows["size_key"] == first)]
    steady = rows["sync_s"].where(rows["sync_s"] > 0, rows["caller_s"])
    steady = steady.where(steady > 0, rows["median_s"]).fillna(0)
    # at a new size the building is mostly making that size's inputs, not compiling:
    # the first call alone says what a new shape costs (JAX and Numba compile on call)
    setup = 0.0 if new_shape else rows["setup_s"].fillna(0)
    extra = (setup + rows["first_call_s"] - steady).clip(lower=0)
    return rows.assign(extra=extra)


def jit_visible(extra: pd.Series) -> tuple[bool, bool]:
    """(typical, worst): whether the median and the largest first-call extra cost
    reach :data:`JIT_VISIBLE_S`."""
    if extra.empty:
        return False, False
    return bool(extra.median() >= JIT_VISIBLE_S), bool(extra.max() >= JIT_VISIBLE_S)


def cache_note(df: pd.DataFrame, backend: str) -> str:
    """What the persistent caches were for the backend's rows: "", or a note that
    every first call met a warm cache (so no compilation cost can be read)."""
    if "cache_state" not in df.columns:
        return ""
    states = df.loc[(df["backend"] == backend) & (df["status"] == "ok"), "cache_state"]
    states = set(states.fillna("").astype(str)) - {""}
    if states == {"warm"}:
        return "every first call met a warm compilation cache: no cold-cache rows"
    return ""


def energy_per_case(df: pd.DataFrame, backend: str, kernels: Sequence[str],
                    per: str) -> tuple[list[float], list[int]]:
    """Work per joule of the backend's best implementation (fastest on the caller's
    clock among rows with an energy reading) per case at its largest read size:
    GB/J (``per`` = "bytes") or GFLOP/J ("flops"). Returns (values, rows)."""
    rows = df[(df["backend"] == backend) & (df["status"] == "ok") & (df["mode"] == "hot")
              & df["kernel"].isin(list(kernels)) & (df["energy_j"] > 0) & (df[per] > 0)
              & ~df["implementation"].astype(str).str.endswith("+transfers")]
    if rows.empty:
        return [], []
    keys = ["kernel", "variant", "dtype"]
    top = rows.groupby(keys)["size_key"].transform("max")
    rows = rows[rows["size_key"] == top].sort_values(
        [*keys, "caller_s", "implementation"], kind="mergesort")
    best = rows.drop_duplicates(keys, keep="first")
    values = (best[per] / best["energy_j"] / 1e9).to_list()
    return [float(v) for v in values], [int(i) for i in best.index]


def ordered_backends(backends: Iterable[str]) -> list[str]:
    """NumPy first, then CPU, then GPU, by name."""
    return sorted(set(backends), key=lambda b: (
        split_backend_id(b)[0] != BASELINE_FRAMEWORK, split_backend_id(b)[1] == "gpu", b))


def crossover_lookup(summaries: Mapping[tuple[str, str], CrossSummary], backend: str,
                     cls: str = "") -> CrossSummary | None:
    """A backend's crossover in ``cls`` (default: :func:`~gpubench.workloads.crossover_class`)."""
    return summaries.get((backend, cls or crossover_class()))
