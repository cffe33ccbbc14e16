"""'Which framework?': the comparison matrix of the source documents, filled from this
run's rows.

One row per framework and device, one column per aspect the source documents assert
(speedup per workload class, call overhead, first-call cost, % of ceiling, code size,
multi-GPU scaling, crossover, autodiff, correctness, work per joule, device memory).
Every cell keeps the rows it came from (:attr:`Cell.rows`, indices of the prepared
timings frame), which the page lists, so each number can be traced to ``timings.csv``.
A cell without data says ``not measured``, never a guess. The decisions (like-for-like
class verdicts, one crossover per framework and class, first-call cost where compilation
happens) are made in :mod:`gpubench.report.verdicts`; :mod:`gpubench.report.cells` turns
them into cells, this module into the matrix and its sentences ("Choose X when ..."),
and :mod:`gpubench.report.claims` judges the source documents' claims.

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

import pandas as pd

from gpubench.backends import backend_classes, reader_name, split_backend_id
from gpubench.report import claims as guide
from gpubench.report import headline, render, stats, verdicts
from gpubench.report.base import BASELINE_FRAMEWORK, cpu_only
from gpubench.report.cells import (
    Cell,
    autodiff_cell,
    ceiling_cell,
    class_kernels,
    code_cell,
    crossover_cell,
    energy_cell,
    first_call_cell,
    incidents_cell,
    memory_cell,
    memory_sentence,
    mpi_cell,
    overhead_cell,
    range_text,
    speedup_cell,
    times,
)
from gpubench.report.render import text_table
from gpubench.report.sections.crossover import reference_speedups
from gpubench.report.verdicts import (
    NOT_MEASURED,
    SMALL,
    aspect_class,
    speedup_aspect,
    speedup_classes,
)
from gpubench.workloads import class_title, crossover_class

CROSSOVER = "CPU/GPU crossover"
ASPECTS = (
    *(speedup_aspect(c) for c in speedup_classes()),
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
    #: the paired rows of the claims judged case by case
    #: (:func:`gpubench.report.claims.claim_pairs`)
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
        cross_title = class_title(crossover_class())
        groups = (
            ("Speedup over NumPy", [speedup_aspect(c) for c in speedup_classes()]),
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
                        band, sizes = self._where(aspect_class(a))
                        if band:
                            where = f"{band}: {sizes}"
                            text = text.replace(f"; {where})", ")").replace(
                                f" ({where})", "")
                            wheres[a] = f"{band} sizes, compared at {sizes}"
                        text = text.replace("×", "")
                    elif a == "CPU/GPU crossover" and f" ({cross_title} class: " in text:
                        text, _, named = text.partition(f" ({cross_title} class: ")
                        cases.add(named.removesuffix(")"))
                    row.append(text)
            for a, where in wheres.items():
                notes.append(f"{a}: {where}")
            for named in sorted(cases):
                notes.append(f"CPU/GPU crossover: median over the {cross_title} class's "
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
            cells[(b, speedup_aspect(cls))] = speedup_cell(found, b, cls)
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
    loops = {b: guide.loop_speedups(df, b) for b in backend_classes()
             if any(kind == "loops" for kind, _, _ in guide.guide(b).claims)}
    memory = [line for line in [memory_sentence(df)] if line]
    return Matrix(backends, cells, found, cross, firsts, loops, pairs=guide.claim_pairs(df),
                  memory_lines=memory, against_reference=reference_speedups(df, found))


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
    cases = f"; cases {range_text(st.lo, st.hi)}" if times(st.lo) != times(st.hi) else ""
    return f"{times(st.median)} (range {range_text(st.range_lo, st.range_hi)}{cases})"


def standing_words(st: verdicts.Standing, than: str = "NumPy") -> str:
    """"990× faster than NumPy (median over the cases; range 928–1,002×; cases
    206–1,439×)", or below 1 the slow-down: "1.7× slower than NumPy (…)", its range and
    the spread over cases turned over with it (:func:`.headline.versus`)."""
    slower = math.isfinite(st.median) and 0 < st.median < 1

    def f(v: float) -> float:
        return (1 / v if v > 0 else math.inf) if slower else v

    lo, hi = sorted((f(st.range_lo), f(st.range_hi)))
    cases = (f"; cases {headline.span(*sorted((f(st.lo), f(st.hi))))}"
             if times(st.lo) != times(st.hi) else "")
    how = ("as fast as" if times(st.median) == "1×" else
           f"{times(f(st.median))} {'slower' if slower else 'faster'} than")
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
    head = (f"{_name(v.title)}, {v.band} sizes ({v.bounds_text()}; compared at "
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
    if v.cls == crossover_class() and w.median >= 1:
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
    return matrix, sentences(matrix), guide.claims(matrix)


# -- two machines side by side ----------------------------------------------------------------


def _speedup_change(base: tuple[pd.DataFrame, stats.Samples],
                    new: tuple[pd.DataFrame, stats.Samples], backend: str, cls: str) -> str:
    """Noise-aware: per case of the class, the backend's best row on each machine at the
    same size (small arrays: small sizes only), compared on the caller's clock with the
    recorded samples: each machine's own time, not its speedup over its own NumPy."""
    kernels = class_kernels(cls)
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
                label = _speedup_change((bdf, bs), (ndf, ns), b, aspect_class(a))
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
