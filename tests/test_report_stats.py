"""SciPy's Mann–Whitney U test gives the committed H100 report's verdicts unchanged.

The report's test used to be written out by hand; it is now ``scipy.stats.mannwhitneyu``.
Two checks on the committed H100 evidence (``evidence/h100-default-suite``): every comparison
the report makes gets the same p-value (so the same label) from SciPy as from the old
code, kept here only as the oracle; and the verdicts rebuilt from the samples (wins,
within ±5 %, unresolved, slower) are the ones the committed summary.md shows.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from gpubench.report import load_inputs, md_esc, sections, stats

H100 = Path(__file__).resolve().parents[1] / "evidence" / "h100-default-suite"


def _oracle(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The report's former, hand-written test: (U of ``a``, two-sided p), normal
    approximation with tie and continuity correction."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    x = np.concatenate([a, b])
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    bounds = np.r_[np.flatnonzero(first), xs.size]
    avg = (bounds[:-1] + bounds[1:] - 1) / 2.0 + 1.0
    ranks = np.empty(xs.size)
    ranks[order] = avg[np.cumsum(first) - 1]
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    n = n1 + n2
    ties = np.diff(bounds).astype(float)
    var = n1 * n2 / 12.0 * ((n + 1) - float((ties**3 - ties).sum()) / (n * (n - 1)))
    if var <= 0:
        return u1, 1.0
    z = (abs(u1 - n1 * n2 / 2.0) - 0.5) / math.sqrt(var)
    return u1, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))


def test_scipy_matches_the_oracle_on_edge_cases() -> None:
    rng = np.random.default_rng(7)
    cases = [(np.array([1.0, 2, 3]), np.array([4.0, 5, 6])), (np.ones(5), np.ones(5)),
             (np.array([1.0, 1, 2, 2, 3]), np.array([2.0, 2, 3, 3, 3, 4])),
             (rng.integers(0, 4, 40).astype(float), rng.integers(1, 5, 30).astype(float)),
             (rng.lognormal(0, 0.3, 200), rng.lognormal(0.05, 0.3, 150))]
    for a, b in cases:
        for x, y in ((a, b), (b, a)):
            u, p = stats.mann_whitney(x, y)
            u0, p0 = _oracle(x, y)
            assert u == u0 and p == pytest.approx(p0, rel=1e-9, abs=1e-15)


@pytest.fixture(scope="module")
def h100() -> tuple[object, list[tuple[float, float]]]:
    """The H100 inputs analysed with SciPy, and (SciPy p, oracle p) for every test run."""
    # committed evidence: its absence fails, never skips
    assert (H100 / "samples.csv.xz").exists(), f"the committed H100 evidence is missing: {H100}"
    calls: list[tuple[float, float]] = []
    scipy_test = stats.mann_whitney

    def recorded(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
        u, p = scipy_test(a, b)
        calls.append((p, _oracle(a, b)[1]))
        return u, p

    mp = pytest.MonkeyPatch()
    mp.setattr(stats, "mann_whitney", recorded)
    try:
        inputs = load_inputs(H100 / "timings.csv.gz", H100 / "host.json",
                             H100 / "samples.csv.xz", sorted((H100 / "raw").glob("*.lock.txt")))
    finally:
        mp.undo()
    return inputs, calls


def test_every_comparison_gets_the_oracles_p_value(h100) -> None:
    _, calls = h100
    assert len(calls) > 200  # the summary and the matrix test hundreds of pairs
    for p, p0 in calls:
        assert p == pytest.approx(p0, rel=1e-9, abs=1e-15)
        assert (p < stats.ALPHA) == (p0 < stats.ALPHA)


def _md_table(md: str, header: str) -> list[list[str]]:
    """The body rows of the markdown table whose header line starts with ``header``."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def _verdict(cell: str) -> str:
    return ("sure" if "; sure:" in cell else "tied" if "; within ±5% of" in cell
            else "unresolved" if "; unresolved against" in cell
            else "none" if "; no verdict" in cell else "alone" if "no other backend" in cell
            else "—")


def test_verdicts_equal_the_committed_summary(h100) -> None:
    inputs, _ = h100
    md = (H100 / "report" / "summary.md").read_text(encoding="utf-8")
    picks = inputs.picks[sections.primary_mode(inputs.df)]
    # wins per backend: "4 sure, 2 within ±5%, 1 unresolved" per size class
    wins = sections.wins_table(picks)
    assert wins is not None
    assert ([[md_esc(c) for c in r] for r in wins.itertuples(index=False)]
            == _md_table(md, "| backend | small wins |"))
    # each case and size class: who wins, and sure / within ±5% / unresolved
    committed = _md_table(md, "| kernel | variant | dtype | small | medium | large |")
    rebuilt = sections.best_table(picks)
    assert rebuilt is not None and len(committed) == len(rebuilt)
    verdicts = [[_verdict(c) for c in row[3:]] for row in rebuilt.itertuples(index=False)]
    assert verdicts == [[_verdict(c) for c in row[3:]] for row in committed]
    # the default suite's cells, most of them decided: the test judges real comparisons
    assert sum(v == "sure" for row in verdicts for v in row) > 20
    assert sum(v in ("tied", "unresolved") for row in verdicts for v in row) > 20
    assert [[md_esc(c) for c in r] for r in rebuilt.itertuples(index=False)] == committed
    # "Which framework?": the sentences count sure wins, ties and losses between backends
    _, sentences, _ = inputs.choice
    # (the answer names frameworks as a reader does: matrix.in_words)
    from gpubench.report.matrix import in_words

    assert sentences and all(f"- {md_esc(in_words(s))}" in md for s in sentences)
    assert any(re.search(r"surely faster in \d+ of \d+ cases", s) for s in sentences)


def test_mann_whitney_is_scipys_asymptotic_test_to_the_bit() -> None:
    """stats.mann_whitney follows SciPy's formula without importing scipy.stats: the
    same U and p, ties and all-tied samples included."""
    import numpy as np
    from scipy import stats as scipy_stats

    from gpubench.report import stats as report_stats

    rng = np.random.default_rng(7)
    for i in range(400):
        m, n = int(rng.integers(1, 30)), int(rng.integers(1, 260))
        if i % 3 == 0:  # many ties
            a, b = rng.integers(1, 5, m).astype(float), rng.integers(1, 5, n).astype(float)
        elif i % 37 == 0:  # all tied: SciPy's p is NaN, read as 1
            a, b = np.full(m, 2.0), np.full(n, 2.0)
        else:
            a, b = rng.random(m) * 1e-3, rng.random(n) * 1e-3 * rng.uniform(0.5, 1.5)
        ref = scipy_stats.mannwhitneyu(a, b, use_continuity=True, alternative="two-sided",
                                       method="asymptotic")
        p = 1.0 if np.isnan(ref.pvalue) else min(1.0, float(ref.pvalue))
        assert report_stats.mann_whitney(a, b) == (float(ref.statistic), p)
    for alpha in (0.01, 0.05):
        c = report_stats.excluded_per_side(60, 70, alpha)
        z = float(scipy_stats.norm.ppf(1 - alpha / 2))
        assert c == max(0, int(np.floor(60 * 70 / 2 - z * np.sqrt(60 * 70 * 131 / 12))))
