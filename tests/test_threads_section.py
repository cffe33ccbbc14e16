"""The Threads section: the fastest thread count per CPU case and size by one rule (lowest
median; surely faster only with interquartile ranges apart), the speedup and parallel
efficiency over one thread, and the verdict on the book's "find the optimum" statement
(judged only when a sweep measured at least three counts)."""

from __future__ import annotations

import pandas as pd
import pytest
from report_data import row

from gpubench.report import base
from gpubench.report.sections import threads


def _frame(times: dict[int, float], spread: float = 0.01, size: int = 1 << 20,
           impl: str = "njit_prange") -> pd.DataFrame:
    rows = [row("numba", "cpu", impl, "vector_add", size, "float32", t, threads=n,
                spread=spread, seed=n)[0] for n, t in times.items()]
    return base.prepare(pd.DataFrame(rows))


def test_an_interior_optimum_is_found_and_the_statement_holds() -> None:
    df = _frame({1: 8e-3, 2: 4.2e-3, 4: 2.5e-3, 8: 3.5e-3})
    s = threads.build(df)
    r = threads.sweep_results(df)[("numba-cpu", "njit_prange", "vector_add", "default",
                                   "float32")][0]
    assert (r.best, r.interior, r.close) == (4, True, False)
    assert r.speedup == pytest.approx(8e-3 / 2.5e-3, rel=0.05)
    assert r.efficiency == pytest.approx(8 / 2.5 / 4, rel=0.05)
    assert r.efficiency_most == pytest.approx(8 / 3.5 / 8, rel=0.05)
    assert s.verdict == "holds"
    assert "1,048,576: 4*" in s.table.iloc[0]["fastest thread count by size"]


def test_the_most_threads_fastest_does_not_hold() -> None:
    s = threads.build(_frame({1: 8e-3, 2: 4e-3, 4: 2e-3, 8: 1e-3}))
    assert s.verdict == "does not hold here"
    assert s.table.iloc[0]["parallel efficiency at the most threads"] == "100% at 8"


def test_a_best_below_the_most_within_the_quartiles_is_too_close() -> None:
    df = _frame({1: 8e-3, 2: 4e-3, 4: 2.00e-3, 8: 2.02e-3}, spread=0.2)
    r = threads.sweep_results(df)[("numba-cpu", "njit_prange", "vector_add", "default",
                                   "float32")][0]
    assert (r.best, r.interior, r.close) == (4, False, True)
    assert threads.build(df).verdict == "does not hold here"


def test_two_counts_are_not_judged_and_one_count_is_no_case() -> None:
    assert threads.build(_frame({1: 8e-3, 16: 1e-3})).verdict == "not judged"
    # one thread surely faster than the most: the most threads are not always fastest
    assert threads.build(_frame({1: 1e-3, 16: 8e-3})).verdict == "holds"
    assert threads.build(_frame({1: 8e-3})).table is None
    # no one-thread row: no speedup over one thread to give
    assert threads.build(_frame({2: 8e-3, 4: 1e-3})).table is None
