"""Threads: for each CPU implementation measured at several thread counts, which count
was fastest at each size, what it gained over one thread and how much of the added
cores it used (parallel efficiency).

Why. The workshop book tells its readers to "test with different thread counts to find
the optimum" (its OpenMP and Numba ``prange`` chapters): more threads are not always
faster, since a small array's work is shorter than waking the threads, and a
memory-bound loop saturates the memory bus before the cores run out. Runs with
``threads: sweep`` (1, 2, 4, ... up to the step's cores) measure every count; runs with
``[1, max]`` still give the two ends.

One rule for "fastest": the count with the lowest median; it is *surely* faster than
another count when their interquartile ranges do not overlap (the same rule as the
report's other "surely"), and a best count below the most threads measured that is not
surely faster than the most threads is reported as too close to call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpubench.report.base import fmt_int, fmt_sig, fmt_speedup, fmt_time
from gpubench.report.render import text_table
from gpubench.report.sections.common import Judged, primary_mode, swept

#: what identifies one case swept over thread counts
CASE = ["backend", "implementation", "kernel", "variant", "dtype"]

#: the book's statement these rows judge
STATEMENT = ("test with different thread counts to find the optimum: the most threads "
             "are not always the fastest")


@dataclass
class SizeResult:
    """One case at one size: the thread counts measured and what they gave."""

    size: int
    threads: list[int]
    medians: list[float]
    best: int
    #: the best count is below the most threads and surely faster than them
    interior: bool
    #: the best count below the most threads, but not surely faster than them
    close: bool
    speedup: float
    efficiency: float
    efficiency_most: float


@dataclass
class Threads(Judged):
    """The Threads section (table None: no case measured at two or more thread counts)
    and the thread counts it compares."""

    statement: str = STATEMENT
    counts: list[int] = field(default_factory=list)


def _surely_faster(a_q3: float, b_q1: float) -> bool:
    return bool(np.isfinite(a_q3) and np.isfinite(b_q1) and a_q3 < b_q1)


def size_result(rows: pd.DataFrame) -> SizeResult | None:
    """One case at one size; None unless one thread and at least one more count were
    measured (the speedup and efficiency are over one thread)."""
    found = swept(rows, "threads")
    if found is None or found[0][0] != 1:
        return None
    threads, med, q1, q3 = found
    i = int(np.argmin(med))
    most = len(threads) - 1
    below = i < most
    surely = below and _surely_faster(q3[i], q1[most])
    speedup = med[0] / med[i]
    return SizeResult(size=int(rows["size_key"].iloc[0]), threads=threads,
                      medians=[float(m) for m in med], best=threads[i], interior=surely,
                      close=below and not surely, speedup=float(speedup),
                      efficiency=float(speedup / threads[i]),
                      efficiency_most=float(med[0] / med[most] / threads[most]))


def sweep_results(df: pd.DataFrame) -> dict[tuple[str, ...], list[SizeResult]]:
    """Per case (:data:`CASE`), its sizes measured at one thread and at least one more
    count, smallest first: the CPU rows that are ``ok`` in the report's primary mode."""
    out: dict[tuple[str, ...], list[SizeResult]] = {}
    needed = {*CASE, "status", "device", "mode", "threads", "size_key", "median_s", "q1_s",
              "q3_s"}
    if not needed <= set(df.columns):
        return out  # rows without thread counts (a partial frame): nothing to sweep
    mode = primary_mode(df)
    ok = df[(df["status"] == "ok") & (df["device"] == "cpu") & (df["mode"] == mode)
            & (df["threads"] > 0)]
    if ok.empty:
        return out
    multi = ok.groupby(CASE, dropna=False)["threads"].transform("nunique") > 1
    for case, rows in ok[multi].groupby(CASE, dropna=False, sort=True):
        per = [size_result(r) for _, r in rows.groupby("size_key", sort=True)]
        kept = [r for r in per if r is not None]
        if kept:
            out[tuple(str(c) for c in case)] = kept
    return out


def _best_by_size(results: Sequence[SizeResult]) -> str:
    def one(r: SizeResult) -> str:
        mark = "*" if r.interior else ("~" if r.close else "")
        return f"{fmt_int(r.size)}: {r.best}{mark}"
    return ", ".join(one(r) for r in results)


def build(df: pd.DataFrame) -> Threads:
    """The section from the run's rows."""
    found = sweep_results(df)
    if not found:
        return Threads(None)
    counts = sorted({t for rs in found.values() for r in rs for t in r.threads})
    rows = []
    for case, results in found.items():
        backend, impl, kernel, variant, dtype = case
        last = results[-1]
        what = kernel if variant in ("", "nan", "None") else f"{kernel} ({variant})"
        rows.append([backend, impl, f"{what}, {dtype}", _best_by_size(results),
                     fmt_int(last.size), fmt_time(last.medians[0]),
                     f"{fmt_time(min(last.medians))} at {last.best}",
                     f"{fmt_sig(last.speedup)}×", f"{last.efficiency:.0%}",
                     f"{last.efficiency_most:.0%} at {last.threads[-1]}"])
    table = text_table(
        ["framework", "implementation", "case", "fastest thread count by size",
         "largest size", "1 thread", "fastest", "speedup over 1 thread",
         "parallel efficiency at the fastest", "parallel efficiency at the most threads"],
        rows, frozenset({"largest size", "1 thread", "fastest", "speedup over 1 thread",
                         "parallel efficiency at the fastest",
                         "parallel efficiency at the most threads"}))
    all_sizes = [r for rs in found.values() for r in rs]
    interior = [r for r in all_sizes if r.interior]
    close = [r for r in all_sizes if r.close]
    one = [r for r in all_sizes if r.best == 1]
    largest = [rs[-1] for rs in found.values()]
    sentences = [
        f"{len(found)} CPU case(s) measured at {len(counts)} thread counts "
        f"({', '.join(str(c) for c in counts)}), {len(all_sizes)} case-size(s) in all.",
        f"The fastest count was below the most threads, surely (quartiles apart), in "
        f"{len(interior)} of {len(all_sizes)} case-sizes, and too close to call in "
        f"{len(close)} more; one thread was fastest in {len(one)}.",
    ]
    collapse = [r for r in interior if r.medians[-1] > 2 * min(r.medians)]
    if collapse:
        sentences.append(
            f"The most threads were more than twice as slow as the fastest count in "
            f"{len(collapse)} case-size(s) ({_examples(found, collapse)}).")
    if largest:
        eff = np.median([r.efficiency_most for r in largest])
        sentences.append(
            f"At each case's largest size the most threads used a median {eff:.0%} of the "
            "added cores (parallel efficiency: the speedup over one thread divided by the "
            "thread count).")
    if interior:
        verdict = "holds"
        evidence = (f"the fastest count was below the most threads, quartiles apart, in "
                    f"{len(interior)} of {len(all_sizes)} case-sizes "
                    f"({_examples(found, interior)})")
    elif len(counts) < 3:
        verdict = "not judged"
        evidence = (f"only {len(counts)} thread counts measured ({', '.join(map(str, counts))}), "
                    "and the most threads were never surely slower; an optimum between "
                    "them needs a sweep (threads: sweep)")
    else:
        verdict = "does not hold here"
        evidence = (f"the most threads were fastest, or too close to call, in all "
                    f"{len(all_sizes)} case-sizes")
    return Threads(table, sentences, verdict, evidence, counts=counts)


def _examples(found: dict[tuple[str, ...], list[SizeResult]],
              chosen: Sequence[SizeResult], most: int = 3) -> str:
    """The chosen case-sizes where the most threads lose most to the fastest count, named:
    'numba-cpu njit_prange reduction (sumsq) float32 at 1,048,576: 8 threads 3.1× faster
    than 16'."""
    ids = {id(r) for r in chosen}
    named = [(r.medians[-1] / min(r.medians), case, r)
             for case, results in found.items() for r in results if id(r) in ids]
    named.sort(key=lambda t: -t[0])
    out = []
    for ratio, case, r in named[:most]:
        what = case[2] if case[3] in ("", "nan", "None", "default") else f"{case[2]} ({case[3]})"
        out.append(f"{case[0]} {case[1]} {what} {case[4]} at {fmt_int(r.size)}: {r.best} "
                   f"thread{'s' if r.best != 1 else ''} {fmt_speedup(ratio)} faster than "
                   f"{r.threads[-1]}")
    return "; ".join(out)
