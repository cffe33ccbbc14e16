"""The report's decision logic, behaviourally: like-for-like class verdicts, size bands,
one crossover per framework and class, first-call cost where compilation happens, energy
per case, the noise test's labels, and the correctness check's edge.

Each test states a rule a user could check by hand and would be broken by one small
wrong change in the code (the mutation testing of ``make mutation`` looks for the ones
that are not). Synthetic frames only: the columns the decisions read, no CSV.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from gpubench.report import cells as report_cells
from gpubench.report import claims as guide
from gpubench.report import headline, matrix, stats, verdicts
from gpubench.report.base import baseline_quartiles, speedup_range
from gpubench.report.sections.crossover import Crossing, crossover
from gpubench.spec import Case, get_kernel

#: fewer examples under mutation testing (every mutant reruns these), 60 otherwise
FAST = settings(max_examples=20 if os.environ.get("MUTMUT_DEPENDENCY_DEPTH") else 60,
                deadline=None, suppress_health_check=[HealthCheck.too_slow])


def frame(rows: Iterable[tuple]) -> pd.DataFrame:
    """A prepared-frame stand-in from (backend, kernel, variant, dtype, size, caller_s,
    implementation) tuples; NumPy rows are the baseline of their case."""
    recs = []
    for backend, kernel, variant, dtype, size, t, *impl in rows:
        framework, _, device = backend.rpartition("-")
        recs.append({"backend": backend, "framework": framework, "device": device,
                     "kernel": kernel, "variant": variant, "dtype": dtype,
                     "size_key": size, "caller_s": t, "caller_q1": t * 0.99,
                     "caller_q3": t * 1.01, "sync_s": t * 1.5, "median_s": t * 0.9,
                     "implementation": impl[0] if impl else "impl", "status": "ok",
                     "mode": "hot", "first_call_s": math.nan, "setup_s": math.nan,
                     "energy_j": math.nan, "bytes": 1e6, "flops": math.nan})
    df = pd.DataFrame(recs)
    base = df[df["framework"] == "numpy"].groupby(
        ["kernel", "variant", "dtype", "size_key"])["caller_s"].min().rename("baseline_s")
    df = df.join(base, on=["kernel", "variant", "dtype", "size_key"])
    df["speedup"] = df["baseline_s"] / df["caller_s"]
    return with_ranges(df)


def with_ranges(df: pd.DataFrame) -> pd.DataFrame:
    """The speedup ranges of ``df``'s rows from their quartiles (after a test set them)."""
    case = ["kernel", "variant", "dtype", "size_key"]
    df = df.drop(columns=["baseline_q1", "baseline_q3"], errors="ignore")
    df = df.join(baseline_quartiles(df[df["framework"] == "numpy"], case), on=case)
    df["speedup_lo"], df["speedup_hi"] = speedup_range(
        df["baseline_q1"], df["baseline_q3"], df["caller_q1"], df["caller_q3"])
    return df


def cases(kernel: str, variants: Iterable[str], dtypes: Iterable[str], size: int
          ) -> list[tuple[str, str, str, int]]:
    return [(kernel, v, d, size) for v in variants for d in dtypes]


REDUCTIONS = cases("reduction", ["sumsq", "dot", "weighted_mean"], ["float32", "float64"],
                   16_777_216)


def suite(times: dict[str, float], only: dict[str, list] | None = None,
          case_list: list | None = None, per_case: dict | None = None) -> pd.DataFrame:
    """NumPy at 1 s on every case; each backend at ``times[backend]`` s (``per_case``
    overrides one case), on ``only[backend]`` cases where given."""
    case_list = case_list or REDUCTIONS
    rows = [("numpy-cpu", *c, 1.0) for c in case_list]
    for backend, t in times.items():
        for c in (only or {}).get(backend, case_list):
            rows.append((backend, *c, (per_case or {}).get((backend, c), t)))
    return frame(rows)


def verdict(df: pd.DataFrame, cls: str = "reductions", band: str = "large"
            ) -> verdicts.ClassVerdict:
    v = verdicts.class_verdict(verdicts.case_table(df), cls, band, df=df)
    assert v is not None
    return v


# -- like for like ----------------------------------------------------------------------------


def test_a_framework_that_measured_only_its_best_cases_does_not_win() -> None:
    # the stand-in is 100x NumPy on the two cases it measured and absent elsewhere; cupy
    # is 40x on all six. The old rule (each framework's median over its own cases) chose
    # the stand-in.
    df = suite({"cupy-gpu": 1 / 40, "standin-gpu": 1 / 100},
               only={"standin-gpu": REDUCTIONS[:2]})
    v = verdict(df)
    assert v.winner is not None and v.winner.backend == "cupy-gpu"
    assert [s.backend for s in v.partial] == ["standin-gpu"]
    assert len(v.cases) == 6
    text = matrix.sentence(v, {})
    assert "choose cupy-gpu" in text and "standin-gpu is not ranked: it measured 2 of the 6" \
        in text


def test_the_winner_is_ranked_over_the_same_cases_for_everyone() -> None:
    df = suite({"a-gpu": 1 / 10, "b-gpu": 1 / 20})
    v = verdict(df)
    assert [s.backend for s in v.ranked] == ["b-gpu", "a-gpu"]
    assert all(s.cases == v.cases for s in v.ranked)
    assert v.winner.median == pytest.approx(20)


def test_a_sentence_changes_when_one_shared_case_changes() -> None:
    times = {"a-gpu": 1 / 10, "b-gpu": 1 / 11}
    before = matrix.sentence(verdict(suite(times)), {})
    # one of six cases: b becomes 1,000x faster there; the median of b moves
    c = REDUCTIONS[0]
    after_df = suite(times, per_case={("b-gpu", c): 1e-3, ("b-gpu", REDUCTIONS[1]): 1e-3,
                                      ("b-gpu", REDUCTIONS[2]): 1e-3})
    after = matrix.sentence(verdict(after_df), {})
    assert before != after
    assert verdict(after_df).winner.median > verdict(suite(times)).winner.median


def test_gemm_and_linalg_are_separate_classes() -> None:
    gemm = cases("matmul", ["default"], ["float32", "float64"], 4096)
    lin = cases("linalg", ["solve", "inv", "eigh", "svd"], ["float32", "float64"], 1024)
    rows = [("numpy-cpu", *c, 1.0) for c in gemm + lin]
    rows += [("cuda_python-gpu", *c, 1 / 16) for c in gemm]
    rows += [("cupy-gpu", *c, 1 / 60) for c in gemm] + [("cupy-gpu", *c, 1 / 2) for c in lin]
    df = frame(rows)
    found = verdicts.verdicts(df)
    assert found["GEMM"]["large"].winner.backend == "cupy-gpu"
    assert found["linear algebra"]["medium"].winner.backend == "cupy-gpu"
    assert verdicts.classes()["GEMM"] == ("matmul",)
    assert verdicts.classes()["linear algebra"] == ("linalg",)


def test_when_nobody_measured_everything_the_rarest_cases_are_left_out_and_named() -> None:
    # a lacks case 0, b lacks case 1: nobody covers all; case 0 and 1 are each measured
    # by one framework, so one is left out, then the other, until someone covers the rest
    df = suite({"a-gpu": 1 / 10, "b-gpu": 1 / 20},
               only={"a-gpu": REDUCTIONS[1:], "b-gpu": [REDUCTIONS[0], *REDUCTIONS[2:]]})
    v = verdict(df)
    assert v.left_out and v.winner is not None
    assert all(c in s.cases for s in v.ranked for c in v.cases)
    left = [c for c, _ in v.left_out]
    assert not set(left) & set(v.cases)
    assert "left out, measured by too few frameworks" in matrix.sentence(v, {})


def test_the_comparison_size_is_the_one_most_frameworks_measured_largest_on_ties() -> None:
    big, bigger = 16_777_216, 67_108_864
    rows = [("numpy-cpu", "reduction", "sumsq", "float32", s, 1.0) for s in (big, bigger)]
    rows += [("a-gpu", "reduction", "sumsq", "float32", s, 0.1) for s in (big, bigger)]
    rows += [("b-gpu", "reduction", "sumsq", "float32", big, 0.05)]
    v = verdict(frame(rows))
    assert v.cases == [("reduction", "sumsq", "float32", big)]
    rows += [("b-gpu", "reduction", "sumsq", "float32", bigger, 0.05)]
    assert verdict(frame(rows)).cases == [("reduction", "sumsq", "float32", bigger)]


def test_stay_on_numpy_when_the_best_framework_is_slower() -> None:
    v = verdict(suite({"a-gpu": 2.0}))
    text = matrix.sentence(v, {})
    assert "stay on NumPy" in text and "is 2× slower than NumPy" in text


@pytest.mark.parametrize(("kernel", "size", "band"), [
    ("reduction", 16_384, "small"), ("reduction", 16_385, "medium"),
    ("reduction", 4_194_304, "medium"), ("reduction", 4_194_305, "large"),
    ("matmul", 128, "small"), ("matmul", 129, "medium"), ("matmul", 1_024, "medium"),
    ("matmul", 1_025, "large"), ("linalg", 1_024, "medium")])
def test_band_edges(kernel: str, size: int, band: str) -> None:
    assert verdicts.band_of(kernel, size) == band


def test_band_bounds_are_stated() -> None:
    assert verdicts.band_bounds("reduction", "small") == "≤ 16,384"
    assert verdicts.band_bounds("reduction", "medium") == "16,385–4,194,304"
    assert verdicts.band_bounds("matmul", "large") == "> 1,024"


@FAST
@given(st.lists(st.floats(0.01, 100), min_size=6, max_size=6),
       st.lists(st.floats(0.01, 100), min_size=6, max_size=6),
       st.integers(0, 5))
def test_property_a_partial_framework_never_wins(a: list[float], b: list[float],
                                                 missing: int) -> None:
    per_case = {("a-gpu", c): 1 / x for c, x in zip(REDUCTIONS, a, strict=True)}
    per_case |= {("b-gpu", c): 1 / x for c, x in zip(REDUCTIONS, b, strict=True)}
    only = {"b-gpu": [c for i, c in enumerate(REDUCTIONS) if i != missing]}
    v = verdict(suite({"a-gpu": 1.0, "b-gpu": 1.0}, only=only, per_case=per_case))
    assert v.winner.backend == "a-gpu"
    assert [s.backend for s in v.partial] == ["b-gpu"]


@FAST
@given(st.dictionaries(st.sampled_from(["a-gpu", "b-gpu", "c-gpu", "d-cpu"]),
                       st.floats(1e-3, 10), min_size=1))
def test_property_the_winner_has_the_highest_median_over_the_shared_cases(
        times: dict[str, float]) -> None:
    v = verdict(suite(times))
    meds = {s.backend: s.median for s in v.ranked}
    assert v.winner.median == max(meds.values())
    assert v.winner.median == pytest.approx(1 / times[v.winner.backend])


@FAST
@given(st.floats(1e-3, 10), st.floats(1.001, 100))
def test_property_a_framework_made_faster_everywhere_cannot_lose_its_rank(
        t: float, factor: float) -> None:
    v1 = verdict(suite({"a-gpu": t, "b-gpu": 0.5}))
    v2 = verdict(suite({"a-gpu": t / factor, "b-gpu": 0.5}))
    rank = [s.backend for s in v1.ranked].index("a-gpu")
    assert [s.backend for s in v2.ranked].index("a-gpu") <= rank


# -- the runner-up and "either will do" --------------------------------------------------------


def test_either_will_do_needs_equivalence_in_half_the_cases_and_no_loss() -> None:
    assert verdicts.Tally("x", same=3, unresolved=3).either
    assert not verdicts.Tally("x", same=2, unresolved=3).either
    assert not verdicts.Tally("x", same=4, slower=1).either
    assert not verdicts.Tally("x").either
    assert verdicts.Tally("x", faster=1, same=1).either


# -- the noise test ---------------------------------------------------------------------------


def _samples(center: float, spread: float, n: int, seed: int) -> np.ndarray:
    return center * (1 + spread * np.random.default_rng(seed).uniform(-1, 1, n))


def test_clear_differences_are_faster_or_slower() -> None:
    a, b = _samples(1.0, 0.01, 10, 1), _samples(1.5, 0.01, 10, 2)
    v = stats.compare(float(np.median(a)), float(np.median(b)), a, b)
    assert v.label == stats.SLOWER and v.lo > 1 and v.differs
    v = stats.compare(float(np.median(b)), float(np.median(a)), b, a)
    assert v.label == stats.FASTER and v.hi < 1


def test_tight_equal_samples_are_the_same_within_the_bound() -> None:
    a, b = _samples(1.0, 0.005, 20, 1), _samples(1.0, 0.005, 20, 2)
    v = stats.compare(float(np.median(a)), float(np.median(b)), a, b)
    assert v.label == stats.SAME and v.equivalent
    assert 1 / 1.05 <= v.lo and v.hi <= 1.05


def test_noisy_samples_are_unresolved_never_same() -> None:
    a, b = _samples(1.0, 0.3, 6, 1), _samples(1.0, 0.3, 6, 2)
    v = stats.compare(float(np.median(a)), float(np.median(b)), a, b)
    assert v.label == stats.UNRESOLVED


def test_five_against_six_overlapping_samples_are_unresolved() -> None:
    # the case: 5 vs 6 samples, a real 10 % gap, one overlap: no verdict either
    # way, and certainly not "within noise, either will do"
    a = np.array([1.00, 1.01, 1.02, 1.03, 1.12])
    b = np.array([1.11, 1.12, 1.13, 1.14, 1.15, 1.16])
    v = stats.compare(float(np.median(a)), float(np.median(b)), a, b)
    assert v.label == stats.UNRESOLVED


def test_a_small_significant_difference_below_the_effect_is_not_a_win() -> None:
    a, b = _samples(1.0, 0.001, 30, 1), _samples(1.02, 0.001, 30, 2)
    v = stats.compare(float(np.median(a)), float(np.median(b)), a, b)
    assert v.label == stats.SAME  # 2 % apart, shown to be within ±5 %
    a, b = _samples(1.0, 0.001, 30, 1), _samples(1.049, 0.001, 30, 2)
    assert stats.compare(float(np.median(a)), float(np.median(b)), a, b).label in (
        stats.SAME, stats.UNRESOLVED)
    b = _samples(1.07, 0.001, 30, 2)
    assert stats.compare(float(np.median(a)), float(np.median(b)), a, b).label == stats.SLOWER


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_non_positive_or_non_finite_medians_are_unresolved(bad: float) -> None:
    assert stats.compare(1.0, bad).label == stats.UNRESOLVED
    assert stats.compare(bad, 1.0).label == stats.UNRESOLVED


def test_the_interval_excludes_the_right_number_of_pairs() -> None:
    # exact null distribution: for 6 vs 6, P(U <= 2) = 4/924 < 0.005 < P(U <= 3) = 7/924
    assert stats.excluded_per_side(6, 6, 0.01) == 3
    assert stats.excluded_per_side(5, 6, 0.01) == 2
    assert stats.excluded_per_side(3, 3, 0.01) == 0  # no 99 % interval from 3 vs 3
    # the normal approximation takes over for large samples and agrees closely
    exact = stats.excluded_per_side(50, 50, 0.01)
    assert exact == pytest.approx(stats.excluded_per_side(60, 60, 0.01) * 2500 / 3600,
                                  rel=0.1)


def test_iqr_fallback_without_samples() -> None:
    assert stats.compare(1.0, 2.0, base_iqr=(0.9, 1.1), new_iqr=(1.9, 2.1)).label == \
        stats.SLOWER
    assert stats.compare(1.0, 1.01, base_iqr=(0.995, 1.005), new_iqr=(1.0, 1.02)).label == \
        stats.SAME
    assert stats.compare(1.0, 1.1, base_iqr=(0.8, 1.2), new_iqr=(0.9, 1.3)).label == \
        stats.UNRESOLVED


@FAST
@given(st.lists(st.floats(0.5, 2.0), min_size=3, max_size=15),
       st.lists(st.floats(0.5, 2.0), min_size=3, max_size=15),
       st.floats(1e-6, 1e3))
@example(a=[1.0, 1.0, 1.0, 1.0, 1.0, 0.5000000000000001], b=[0.5, 0.5, 0.5, 0.5],
         scale=0.25)  # tied samples put an end of the interval at 1, up to an ulp
def test_property_labels_are_antisymmetric_and_scale_free(a: list[float], b: list[float],
                                                         scale: float) -> None:
    x, y = np.array(a), np.array(b)
    v = stats.compare(float(np.median(x)), float(np.median(y)), x, y)
    w = stats.compare(float(np.median(y)), float(np.median(x)), y, x)
    flip = {stats.FASTER: stats.SLOWER, stats.SLOWER: stats.FASTER}
    assert w.label == flip.get(v.label, v.label)
    s = stats.compare(float(np.median(x * scale)), float(np.median(y * scale)), x * scale,
                      y * scale)
    assert s.label == v.label


@FAST
@given(st.lists(st.floats(0.5, 2.0), min_size=3, max_size=12),
       st.lists(st.floats(0.5, 2.0), min_size=3, max_size=12))
def test_property_the_interval_holds_the_estimate(a: list[float], b: list[float]) -> None:
    est, lo, hi = stats.ratio_interval(np.array(b), np.array(a))
    assert lo <= est * (1 + 1e-12) and est <= hi * (1 + 1e-12)


# -- the crossover ----------------------------------------------------------------------------


def test_the_crossover_is_where_the_gpu_wins_at_every_larger_size() -> None:
    sizes = np.array([1e3, 1e4, 1e5, 1e6])
    gpu = np.array([1.0, 3.0, 1.0, 1.0])  # wins at 1e3, loses at 1e4, wins from 1e5
    cpu = np.array([2.0, 2.0, 2.0, 2.0])
    text, at = crossover(sizes, gpu, cpu)
    assert 1e4 < at < 1e5 and "between 10,000 and 100,000" in text


def test_crossover_edges() -> None:
    s = np.array([1e3, 1e4, 1e5])
    assert crossover(s, np.array([1.0, 1.0, 1.0]), np.array([2.0] * 3))[1] == 1e3
    assert math.isnan(crossover(s, np.array([1.0, 1.0, 3.0]), np.array([2.0] * 3))[1])
    # equal times are not a win
    assert math.isnan(crossover(s, np.array([1.0, 1.0, 2.0]), np.array([2.0] * 3))[1])


@FAST
@given(st.lists(st.floats(0.01, 100), min_size=2, max_size=8),
       st.lists(st.floats(0.01, 100), min_size=2, max_size=8))
def test_property_the_gpu_wins_at_every_size_above_its_crossover(g: list[float],
                                                                 c: list[float]) -> None:
    n = min(len(g), len(c))
    sizes = np.logspace(3, 3 + n - 1, n)
    gpu, cpu = np.array(g[:n]), np.array(c[:n])
    assume(np.all(gpu != cpu))
    _, at = crossover(sizes, gpu, cpu)
    if math.isnan(at):
        assert gpu[-1] >= cpu[-1]
    else:
        above = sizes > at * 1.0001
        assert np.all(gpu[above] < cpu[above])


def _crossing(backend: str, kernel: str, size: float, transfers: float | None = None,
              bound: bool = False) -> Crossing:
    text = (f"≤ {size:,.0f} (faster at every size)" if bound else f"≈ {size:,.0f}") \
        if math.isfinite(size) else "> 1 (slower)"
    t = (f"≈ {transfers}", transfers) if transfers is not None else None
    return Crossing(kernel, "v", "float32", backend, (text, size), t, None, True)


def test_one_crossover_per_framework_and_class_with_its_range() -> None:
    found = [_crossing("a-gpu", "vector_add", x, t) for x, t in
             ((1_000, 1e5), (5_000, 2e5), (20_000, math.nan))]
    found.append(_crossing("a-gpu", "reduction", 40_000, math.nan))
    summary = verdicts.class_crossovers(found)
    c = summary[("a-gpu", "elementwise work")]
    assert c.n == 3 and c.median == 5_000 and c.lo == 1_000 and c.hi == 20_000
    assert c.t_never == 1 and c.t_median == 2e5
    assert "≈ 5,000 elements (cases 1,000–20,000 over 3 cases)" == c.text()
    assert summary[("a-gpu", "reductions")].n == 1


def test_never_ranks_above_every_size_and_can_be_the_median() -> None:
    med, lo, hi, never, _ = verdicts.median_with_never([1e3, math.nan, math.nan])
    assert math.isnan(med) and never == 2 and lo == 1e3 and math.isinf(hi)
    med, *_ = verdicts.median_with_never([1e3, 2e3, math.nan])
    assert med == 2e3


def test_a_median_that_is_an_upper_bound_says_so() -> None:
    med, *_, bound = verdicts.median_with_never([1e3, 1e3, 5e3], [True, True, False])
    assert med == 1e3 and bound


@FAST
@given(st.lists(st.one_of(st.floats(1, 1e8), st.just(math.nan)), min_size=1, max_size=20))
def test_property_the_median_crossover_is_a_measured_case(values: list[float]) -> None:
    med, lo, hi, never, _ = verdicts.median_with_never(values)
    finite = [v for v in values if math.isfinite(v)]
    assert never == len(values) - len(finite)
    if math.isnan(med):
        assert 2 * never >= len(values)
    else:
        assert med in finite and lo <= med <= hi


@FAST
@given(st.lists(st.floats(1, 1e8), min_size=1, max_size=20), st.integers(0, 19),
       st.floats(1.0, 10.0))
def test_property_a_later_crossover_never_lowers_the_median(values: list[float], i: int,
                                                            factor: float) -> None:
    i = i % len(values)
    before = verdicts.median_with_never(values)[0]
    raised = list(values)
    raised[i] *= factor
    assert verdicts.median_with_never(raised)[0] >= before


# -- first call and energy ---------------------------------------------------------------------


def _first_call_frame() -> pd.DataFrame:
    df = frame([("numba-gpu", "vector_add", "default", "float32", s, 1e-5, "cuda_jit")
                for s in (1_024, 65_536, 1_048_576)]
               + [("numba-gpu", "interop", "default", "float32", 1_024, 1e-5, "from_torch"),
                  ("numba-gpu", "reduction", "sumsq", "float32", 1_024, 1e-5, "cuda_reduce")])
    df["first_call_s"] = [0.2, 1e-4, 1e-4, 4.0, 0.3]
    df["setup_s"] = 0.0
    df["cache_state"] = ["cold", "cold", "cold", "cold", "warm"]
    return df


def test_first_call_cost_is_read_at_the_first_size_without_interop_or_warm_caches() -> None:
    rows = verdicts.first_call_rows(_first_call_frame(), "numba-gpu")
    assert list(rows["kernel"]) == ["vector_add"] and list(rows["size_key"]) == [1_024]
    assert rows["extra"].iloc[0] == pytest.approx(0.2 - 1.5e-5)
    typical, worst = verdicts.jit_visible(rows["extra"])
    assert typical and worst


def test_a_first_call_at_each_new_size_is_read_beside_the_first_sizes() -> None:
    """JAX traces and compiles per shape, Numba once per type: the later sizes' first
    calls (cold caches) show it, in the matrix cell and the first-call section, with the
    same statistic as the first size (building and the first call less a steady call)."""
    from gpubench.report.sections import first_call

    rows = [(b, "vector_add", "default", "float32", s, 1e-5, impl)
            for b, impl in (("jax-gpu", "jit"), ("numba-gpu", "cuda_jit"))
            for s in (1_024, 65_536, 1_048_576)]
    df = frame(rows)
    df["first_call_s"] = [0.10, 0.13, 0.13, 0.40, 4e-4, 4e-4]
    df["setup_s"], df["cache_state"] = 0.0, "cold"
    later = verdicts.first_call_rows(df, "jax-gpu", new_shape=True)
    assert list(later["size_key"]) == [65_536, 1_048_576]
    assert later["extra"].median() == pytest.approx(0.13 - 1.5e-5)
    jax_cell = report_cells.first_call_cell(df, "jax-gpu").text
    numba_cell = report_cells.first_call_cell(df, "numba-gpu").text
    assert "at each new size: median 130 ms over 2 rows" in jax_cell, jax_cell
    assert "at each new size: median 385 µs over 2 rows" in numba_cell, numba_cell
    table = first_call.first_call_backend_table(df)
    jax = table[table["backend"] == "jax-gpu"].iloc[0]
    assert jax["new sizes"] == "2" and jax["new size: extra (median)"] == "130 ms"
    assert jax["first size: extra (median)"] == "100 ms"
    # torch.compile's compile time is said to be its own where eager's met warm caches
    torch = frame([("torch-gpu", "vector_add", "default", "float32", 1_024, 1e-5, impl)
                   for impl in ("eager", "compile")])
    torch["first_call_s"], torch["setup_s"] = [1e-4, 0.568], 0.0
    torch["cache_state"] = ["warm", "cold"]
    cell = report_cells.first_call_cell(torch, "torch-gpu").text
    assert "(all compile: the others met warm caches)" in cell, cell


def test_the_jit_claim_holds_on_the_first_size() -> None:
    df = _first_call_frame()
    m = matrix.Matrix(["numba-gpu"], {}, first_calls={
        "numba-gpu": verdicts.first_call_rows(df, "numba-gpu")})
    row = guide._jit_claim(m, "numba-gpu", "claim", True)
    assert row[2] == "holds" and "from_torch" not in row[1]
    assert guide._jit_claim(m, "numba-gpu", "claim", False)[2] == "does not hold"


def test_jit_visibility_edge() -> None:
    at = verdicts.JIT_VISIBLE_S
    assert verdicts.jit_visible(pd.Series([at, at, at])) == (True, True)
    below = np.nextafter(at, 0)
    assert verdicts.jit_visible(pd.Series([below, below, at])) == (False, True)


def test_energy_uses_the_best_implementation_per_case_at_the_largest_size() -> None:
    df = frame([("cupy-gpu", "vector_add", "default", "float32", 1 << 24, 1e-4, "slow"),
                ("cupy-gpu", "vector_add", "default", "float32", 1 << 24, 5e-5, "fast"),
                ("cupy-gpu", "vector_add", "default", "float32", 1 << 20, 1e-6, "fast")])
    df["energy_j"] = [1.0, 0.5, 1e-3]
    df["bytes"] = 1e9
    values, rows = verdicts.energy_per_case(df, "cupy-gpu", ["vector_add"], "bytes")
    assert values == [pytest.approx(2.0)] and rows == [1]


# -- the correctness check ----------------------------------------------------------------------


def test_the_correctness_check_passes_at_its_tolerance_and_fails_just_above() -> None:
    spec = get_kernel("vector_add")
    case = Case("vector_add", "default", 1_000, "float64", {})
    tol = spec.tolerance(case)
    ref = np.ones(1_000)
    at = ref.copy()
    at[0] += tol * math.sqrt(1_000) * 0.999  # relative 2-norm error just under tol
    assert spec.check(case, at, ref).passed
    over = ref.copy()
    over[0] += tol * math.sqrt(1_000) * 1.01
    check = spec.check(case, over, ref)
    assert not check.passed and check.rel_err > tol
    twice = ref.copy()
    twice[0] += tol * math.sqrt(1_000) * 2
    assert not spec.check(case, twice, ref).passed
    nan = ref.copy()
    nan[3] = math.nan
    assert not spec.check(case, nan, ref).passed
    assert not spec.check(case, ref[:10], ref).passed


# -- size grids that meet -----------------------------------------------------------------------


def test_every_default_gpu_size_up_to_2_24_has_a_numpy_row() -> None:
    """The default config's NumPy step measures every GPU size up to 2**24 elements (and
    n = 4096 for GEMM): no speedup in the report stands on a size NumPy did not measure."""
    from pathlib import Path

    import yaml

    from gpubench.runner import plan
    from gpubench.spec import implementations

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml")
                            .read_text())
    numpy = {(i.kernel, i.size) for i in plan("numpy-cpu", config, 4)}
    limit = {"matmul": 4096, "linalg": 4096}
    for name, k in config["kernels"].items():
        if name in ("transfer", "launch_overhead", "interop"):
            continue  # no NumPy speedup: host-device copies, a call's floor, hand-offs
        if not implementations(name, "numpy"):
            continue  # nothing of NumPy's to compare with (a GPU-only sweep, tensor cores)
        for size in k.get("gpu_sizes", []):
            if size <= limit.get(name, 1 << 24):
                assert (name, size) in numpy, f"{name} at {size} has no NumPy row"


def test_baseline_sizes_run_for_numpy_only_at_the_full_thread_count() -> None:
    from gpubench.runner import plan

    config = {"threads": [1, "max"], "kernels": {
        "matmul": {"sizes": [64], "baseline_sizes": [128], "dtypes": ["float64"]}}}
    numpy = plan("numpy-cpu", config, 4)
    assert {(i.size, i.threads) for i in numpy} == {(64, 1), (64, 4), (128, 4)}
    assert {i.size for i in plan("torch-cpu", config, 4)} == {64}


def test_work_per_joule_states_the_cross_checks_uncertainty() -> None:
    from gpubench.probe import energy_crosscheck

    assert report_cells.energy_uncertainty({"energy_crosscheck": {"rel_diff": -0.021}}) == \
        pytest.approx(0.021)
    assert report_cells.energy_uncertainty({"energy_crosscheck": {"reason": "no GPU"}}) is None
    assert report_cells.energy_uncertainty({}) is None
    assert energy_crosscheck(False) == {"reason": "no GPU"}
    df = frame([("cupy-gpu", "vector_add", "default", "float32", 1 << 24, 1e-4, "a")])
    df["energy_j"], df["bytes"], df["energy_power_w"] = 0.5, 1e9, 400.0
    df["energy_reason"] = ""
    cell = report_cells.energy_cell(df, "cupy-gpu", 0.021)
    assert cell.text.startswith("2 ±2 % GB/J memory-bound")
    assert report_cells.energy_cell(df, "cupy-gpu").text.startswith("2 GB/J")


def test_a_window_above_the_boards_power_limit_leaves_work_per_joule_unresolved() -> None:
    """Six 0.5 s windows of one H100 read 735-778 W against its 700 W limit: no board
    draws that, so the figure is unresolved and not ranked; at the limit it stands."""
    assert report_cells.power_limit({"gpus": [{"power_limit_w": 700.0}]}) == 700.0
    assert report_cells.power_limit({"gpus": [{"power_limit_w": None}]}) is None
    assert report_cells.power_limit({"gpus": []}) is None and report_cells.power_limit({}) is None
    df = frame([("cupy-gpu", "vector_add", "default", "float32", 1 << 24, 1e-4, "a"),
                ("cupy-gpu", "elementwise", "hypot", "float32", 1 << 24, 1e-4, "a")])
    df["energy_j"], df["bytes"], df["energy_reason"] = 0.5, 1e9, ""
    df["energy_power_w"] = [700.0, 778.0]
    cell = report_cells.energy_cell(df, "cupy-gpu", None, 700.0)
    assert cell.text.startswith("unresolved: 1 of 2 energy windows read above the "
                                "board's 700 W power limit (up to 778 W)"), cell.text
    assert math.isnan(cell.value)
    df["energy_power_w"] = [700.0, 690.0]
    cell = report_cells.energy_cell(df, "cupy-gpu", None, 700.0)
    assert cell.text.startswith("2 GB/J") and cell.value == pytest.approx(2.0)
    unread = report_cells.energy_cell(df.assign(energy_power_w=900.0), "cupy-gpu")
    assert not unread.text.startswith("unresolved")  # no limit read: nothing to judge against


def test_tally_counts_each_label_of_the_shared_cases() -> None:
    """Winner against another framework, case by case, with the recorded samples: one
    case each surely faster, within ±5 %, slower and unresolved; a case the other lacks
    is not counted."""
    cases_ = [("k", v, "float32", 1024) for v in ("a", "b", "c", "d", "e")]
    winner_t = [1.0, 1.0, 2.0, 1.0, 1.0]
    other_t = [2.0, 1.0, 1.0, 1.0]  # the other lacks case "e"
    noisy = [False, False, False, True]
    rows, by_row = [], {}
    for i, t in enumerate(winner_t):
        rows.append(("w-gpu", *cases_[i], t))
        by_row[(len(rows) - 1, "pipelined")] = _samples(t, 0.002, 12, i)
    for i, t in enumerate(other_t):
        rows.append(("o-gpu", *cases_[i], t))
        by_row[(len(rows) - 1, "pipelined")] = _samples(t, 0.5 if noisy[i] else 0.002, 12,
                                                        100 + i)
    df = frame(rows)
    samples = stats.Samples(by_row, "")
    winner = verdicts.Standing("w-gpu", cases_, [1.0] * 5, [0, 1, 2, 3, 4])
    other = verdicts.Standing("o-gpu", cases_[:4], [1.0] * 4, [5, 6, 7, 8])
    t = verdicts.tally(winner, other, df, samples)
    assert (t.faster, t.same, t.slower, t.unresolved) == (1, 1, 1, 1)
    assert t.n == 4 and t.other == "o-gpu" and not t.either
    # twice the equivalent case: still one loss, so still not "either will do"
    both = verdicts.tally(winner, verdicts.Standing("o-gpu", cases_[:2], [1.0] * 2, [5, 6]),
                          df, samples)
    assert (both.faster, both.same, both.slower, both.unresolved) == (1, 1, 0, 0)
    assert both.either


# -- the edges mutation testing found unchecked ---------------------------------------------------


def test_the_case_table_keeps_each_backends_fastest_implementation_on_the_device() -> None:
    c = ("vector_add", "default", "float32", 1 << 24)
    df = frame([("numpy-cpu", *c, 1.0), ("cupy-gpu", *c, 0.01, "slow"),
                ("cupy-gpu", *c, 0.002, "fast"), ("cupy-gpu", *c, 0.001, "array_ops+transfers")])
    t = verdicts.case_table(df)
    assert list(t["implementation"]) == ["fast"] and list(t["backend"]) == ["cupy-gpu"]
    assert t["speedup"].iloc[0] == pytest.approx(500.0) and t["row"].iloc[0] == 2
    # ties on the caller's clock go to the implementation's name, whatever the row order
    tie = frame([("numpy-cpu", *c, 1.0), ("cupy-gpu", *c, 0.002, "zeta"),
                 ("cupy-gpu", *c, 0.002, "alpha")])
    assert list(verdicts.case_table(tie)["implementation"]) == ["alpha"]


def test_a_class_verdict_reads_only_its_own_kernels_and_band() -> None:
    red = REDUCTIONS[:1]
    vec = [("vector_add", "default", "float32", 1 << 24)]
    small = [("reduction", "sumsq", "float32", 1024)]
    rows = [("numpy-cpu", *c, 1.0) for c in red + vec + small]
    rows += [("a-gpu", *red[0], 0.1), ("b-gpu", *vec[0], 0.001), ("b-gpu", *small[0], 1e-4)]
    v = verdict(frame(rows))
    assert [s.backend for s in v.ranked] == ["a-gpu"] and v.cases == red and not v.partial


def test_a_partial_framework_keeps_its_own_speedups_and_is_tallied() -> None:
    df = suite({"a-gpu": 1 / 40, "b-gpu": 1 / 100}, only={"b-gpu": REDUCTIONS[:2]})
    v = verdict(df)
    (p,) = v.partial
    assert p.speedups == pytest.approx([100.0, 100.0]) and p.median == pytest.approx(100.0)
    t = v.tallies["b-gpu"]
    # no samples: the quartiles decide, and b's are far from a's in both shared cases
    assert t.n == 2 and t.slower == 2


def test_left_out_cases_name_who_measured_them() -> None:
    # case 0: only c; case 1: only a. Cases go in sorted order: "sumsq float64" (case 1)
    # after "sumsq float32" (case 0), so case 1 goes first, after which c covers the rest
    df = suite({"a-gpu": 1 / 10, "b-gpu": 1 / 20, "c-gpu": 1 / 5},
               only={"a-gpu": REDUCTIONS[1:], "b-gpu": REDUCTIONS[2:],
                     "c-gpu": REDUCTIONS[:1] + REDUCTIONS[2:]})
    v = verdict(df)
    assert v.left_out == [(REDUCTIONS[1], ["a-gpu"])]
    assert sorted(v.cases) == sorted(REDUCTIONS[:1] + REDUCTIONS[2:])
    assert [s.backend for s in v.ranked] == ["c-gpu"]
    assert [s.backend for s in v.partial] == ["a-gpu", "b-gpu"]


def test_the_last_of_the_rarest_cases_goes_first() -> None:
    # a: cases 0-3, b: 1-4 (nobody measured 5): cases 0 and 4 are each measured once;
    # the later in sorted order (4, "weighted_mean") goes, after which a covers the rest
    df = suite({"a-gpu": 1 / 10, "b-gpu": 1 / 20},
               only={"a-gpu": REDUCTIONS[:4], "b-gpu": REDUCTIONS[1:5]})
    v = verdict(df)
    assert v.left_out == [(REDUCTIONS[4], ["b-gpu"])]
    assert [s.backend for s in v.ranked] == ["a-gpu"]
    assert [s.backend for s in v.partial] == ["b-gpu"]


def test_first_call_falls_back_to_the_caller_then_the_device_clock() -> None:
    df = _first_call_frame()
    df["sync_s"] = math.nan  # no sync clock: the pipelined caller's clock stands in
    rows = verdicts.first_call_rows(df, "numba-gpu")
    assert rows["extra"].iloc[0] == pytest.approx(0.2 - 1e-5)
    df["caller_s"] = math.nan  # nor that: the device clock
    rows = verdicts.first_call_rows(df, "numba-gpu")
    assert rows["extra"].iloc[0] == pytest.approx(0.2 - 0.9e-5)
    df["setup_s"] = math.nan  # no setup time recorded: nothing added
    assert verdicts.first_call_rows(df, "numba-gpu")["extra"].iloc[0] == \
        pytest.approx(0.2 - 0.9e-5)
    df["setup_s"], df["first_call_s"] = 0.0, 1e-6  # faster than steady: no negative cost
    df.loc[df["size_key"] > 1024, "first_call_s"] = 1.0  # not the first size: not read
    assert (verdicts.first_call_rows(df, "numba-gpu")["extra"] == 0).all()


def test_a_kernel_the_code_does_not_know_is_sized_in_elements() -> None:
    assert verdicts.band_of("no_such_kernel", 10) == "small"
    assert verdicts.unit_of("no_such_kernel") == "elements"


def test_bounds_break_ties_towards_the_bound_only_when_given() -> None:
    assert verdicts.median_with_never([1e3, 1e3, 5e3])[4] is False
    # the middle case is measured, not a bound, even where a bound has the same size
    assert verdicts.median_with_never([1e3, 1e3, 5e3], [True, False, False])[4] is False
    assert verdicts.median_with_never([1e3, 2e3, 5e3], [False, True, False])[4] is True


def test_energy_reads_only_the_backends_ok_hot_device_resident_rows_with_work() -> None:
    c = ("vector_add", "default", "float32", 1 << 24)
    df = frame([("cupy-gpu", *c, 1e-4, "best"),
                ("torch-gpu", *c, 1e-5, "other backend"),
                ("cupy-gpu", *c, 1e-6, "x+transfers"),
                ("cupy-gpu", "reduction", "sumsq", "float32", 1 << 24, 1e-6, "other kernel"),
                ("cupy-gpu", *c, 2e-6, "wrong"), ("cupy-gpu", *c, 3e-6, "cold"),
                ("cupy-gpu", *c, 4e-6, "no work"), ("cupy-gpu", *c, 5e-6, "no reading")])
    df["energy_j"] = [0.5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.0]
    df["bytes"] = [1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 0.0, 1e9]
    df.loc[4, "status"], df.loc[5, "mode"] = "wrong_result", "cold"
    values, rows = verdicts.energy_per_case(df, "cupy-gpu", ["vector_add"], "bytes")
    assert rows == [0] and values == [2.0]  # 1e9 bytes / 0.5 J = 2 GB/J, exactly


def test_the_class_verdict_reads_the_recorded_samples_before_the_quartiles() -> None:
    df = suite({"a-gpu": 1 / 20, "b-gpu": 1 / 10}, case_list=REDUCTIONS[:1])
    # the rows' quartiles are apart (±1 %), but the recorded samples of b overlap a's
    rows = {b: int(df.index[df["backend"] == b][0]) for b in ("a-gpu", "b-gpu")}
    noisy = stats.Samples({(rows["a-gpu"], "pipelined"): _samples(1 / 20, 0.9, 6, 1),
                           (rows["b-gpu"], "pipelined"): _samples(1 / 10, 0.9, 6, 2)}, "")
    quartiles = verdicts.class_verdict(verdicts.case_table(df), "reductions", "large", df=df)
    sampled = verdicts.class_verdict(verdicts.case_table(df), "reductions", "large", noisy,
                                     df=df)
    assert quartiles.tallies["b-gpu"].faster == 1
    assert sampled.tallies["b-gpu"].unresolved == 1


def test_of_three_equally_rare_cases_the_last_goes_first() -> None:
    # a: cases 0-2, b: 3, c: 4, d: 5 (each case measured once): the last case in sorted
    # order goes first, then the next last, until someone covers what is left
    df = suite({"a-gpu": 1 / 10, "b-gpu": 1 / 20, "c-gpu": 1 / 30, "d-gpu": 1 / 40},
               only={"a-gpu": REDUCTIONS[:3], "b-gpu": REDUCTIONS[3:4],
                     "c-gpu": REDUCTIONS[4:5], "d-gpu": REDUCTIONS[5:]})
    order = sorted(REDUCTIONS)
    v = verdict(df)
    assert [c for c, _ in v.left_out] == order[::-1][:len(v.left_out)]
    assert all(c in s.cases for s in v.ranked for c in v.cases)


# -- the sentences and claims, word for word ------------------------------------------------------


def test_a_jit_claim_is_partly_when_only_the_largest_first_call_compiles() -> None:
    df = _first_call_frame()
    rows = verdicts.first_call_rows(df, "numba-gpu")
    m = matrix.Matrix(["numba-gpu"], {}, first_calls={"numba-gpu": rows})
    # median under 10 ms, largest over it
    mixed = pd.concat([rows.assign(extra=1e-3), rows.assign(extra=1e-3),
                       rows.assign(extra=0.5)], ignore_index=True)
    m.first_calls["numba-gpu"] = mixed
    assert guide._jit_claim(m, "numba-gpu", "c", True)[2] == "partly"
    assert guide._jit_claim(m, "numba-gpu", "c", False)[2] == "partly"
    m.first_calls["numba-gpu"] = mixed.assign(extra=1e-3)
    assert guide._jit_claim(m, "numba-gpu", "c", True)[2] == "does not hold"
    assert guide._jit_claim(m, "numba-gpu", "c", False)[2] == "holds"
    m.first_calls["numba-gpu"] = mixed.iloc[0:0]
    assert guide._jit_claim(m, "numba-gpu", "c", True)[1:] == ["not measured", "not measured"]
    assert guide._jit_claim(m, "jax-gpu", "c", True)[2] == "not measured"
    row = guide._jit_claim(matrix.Matrix(["numba-gpu"], {}, first_calls={"numba-gpu": mixed}),
                            "numba-gpu", "claim", True)
    assert row[1] == ("first size of 3 cases, cold caches: median 1 ms, largest 500 ms "
                      "(vector_add cuda_jit)")


def test_the_sentence_names_its_cases_and_what_each_other_framework_did() -> None:
    one = verdict(suite({"a-gpu": 1 / 1.5}, case_list=REDUCTIONS[:1]))
    text = matrix.sentence(one, {})
    assert "1 case)" in text and "choose a-gpu, 1.5× faster than NumPy (median over the " \
        "cases; range 1.47–1.53×)" in text
    assert "no other framework measured these cases" in text
    at_one = matrix.sentence(verdict(suite({"a-gpu": 1.0})), {})
    assert "choose a-gpu, as fast as NumPy (median over the cases; range 0.98–1.02×)" in at_one
    assert "6 cases)" in at_one
    # a runner-up within 5 % everywhere: either will do (no samples: quartiles ±1 %)
    tied = verdict(suite({"a-gpu": 1 / 10, "b-gpu": 1 / 10.01}))
    text = matrix.sentence(tied, {})
    assert "choose any of b-gpu, 10× faster than NumPy (median over the cases; range" in text \
        and " or a-gpu, 10× faster than NumPy (median over the cases; range" in text
    assert "a-gpu is within ±5% of b-gpu in 6 of 6 cases (99 % confidence), so either will " \
        "do" in text
    partial = verdict(suite({"a-gpu": 1 / 10, "b-gpu": 1 / 20}, only={"b-gpu": REDUCTIONS[:2]}))
    text = matrix.sentence(partial, {})
    assert "no other framework" not in text
    assert ("b-gpu is not ranked: it measured 2 of the 6 cases; on those a-gpu is surely "
            "faster in 0 of 2 cases, within ±5% in 0, unresolved in 0, slower in 2") in text


def test_the_sentence_names_up_to_three_left_out_cases_and_counts_the_rest() -> None:
    only = {"a-gpu": REDUCTIONS[:1], "b-gpu": REDUCTIONS[1:2], "c-gpu": REDUCTIONS[2:3],
            "d-gpu": REDUCTIONS[3:4], "e-gpu": REDUCTIONS[4:5], "f-gpu": REDUCTIONS[5:]}
    v = verdict(suite(dict.fromkeys(only, 0.1), only=only))
    text = matrix.sentence(v, {})
    assert len(v.left_out) == 5
    assert text.count(" (only ") == 3 and " and 2 more" in text
    assert "left out, measured by too few frameworks: reduction/weighted_mean float64 at " \
           "16,777,216 (only f-gpu), " in text
    few = verdict(suite({"a-gpu": 0.1, "b-gpu": 0.1},
                        only={"a-gpu": REDUCTIONS[:4], "b-gpu": REDUCTIONS[1:5]}))
    assert " more" not in matrix.sentence(few, {})


# -- a winner that survives a re-run ---------------------------------------------------------------


def test_decisive_needs_more_than_half_the_shared_cases_surely_faster() -> None:
    assert verdicts.Tally("x", faster=2, unresolved=1).decisive
    assert not verdicts.Tally("x", faster=1, unresolved=1).decisive  # half is not more
    # one loss in 16 does not undo 15 wins (numba-cpu against torch-cpu, small arrays)
    assert verdicts.Tally("x", faster=15, slower=1).decisive
    assert not verdicts.Tally("x", faster=2, slower=2).decisive
    assert not verdicts.Tally("x", same=4).decisive
    assert not verdicts.Tally("x").decisive
    assert verdicts.Tally("x", faster=1).decisive


def _three_way(a: float, b: float, c: float, noisy: tuple[str, ...] = ()) -> pd.DataFrame:
    """NumPy at 1 s; a-, b- and c-gpu at 1/a, 1/b, 1/c s on the six reduction cases;
    the backends in ``noisy`` with wide quartiles (±30 %: their ranges overlap)."""
    df = suite({"a-gpu": 1 / a, "b-gpu": 1 / b, "c-gpu": 1 / c})
    wide = df["backend"].isin(noisy)
    df.loc[wide, "caller_q1"] = df.loc[wide, "caller_s"] * 0.7
    df.loc[wide, "caller_q3"] = df.loc[wide, "caller_s"] * 1.3
    return with_ranges(df)


def test_leaders_are_the_best_and_whoever_is_not_surely_slower_by_median() -> None:
    # clear gaps, tight quartiles: the best alone, the others' ranges below it
    v = verdict(_three_way(100, 50, 10))
    assert [s.backend for s in v.leaders] == ["a-gpu"]
    text = matrix.sentence(v, {})
    assert "choose a-gpu, 100× faster than NumPy (median over the cases; range 98–102×" \
        in text and "choose any of" not in text
    assert "slower, their ranges wholly below a-gpu's: b-gpu 50× (range 49×–51×), " \
           "c-gpu 10× (range 9.8×–10.2×)" in text
    # a and b 10 % apart but noisy: ranges overlap; c far behind and tight: out
    v = verdict(_three_way(100, 110, 10, noisy=("a-gpu", "b-gpu")))
    assert v.winner.backend == "b-gpu"
    assert [s.backend for s in v.leaders] == ["b-gpu", "a-gpu"]  # by median
    text = matrix.sentence(v, {})
    assert "choose any of b-gpu, 110× faster than NumPy (median over the cases; range " \
           "83.8–159×) or a-gpu, 100× faster than NumPy (median over the cases; range" in text
    assert "unresolved in 6, slower in 0 (by quartiles, not the test, in 6: a row kept no " \
           "samples)" in text
    assert "c-gpu (" not in text.split(";")[0]
    assert "their ranges overlap the best's (b-gpu), so this run does not rank them" in text
    line = headline.short_line(v, {})
    assert "b-gpu 110× faster than NumPy (83.8–159×) or a-gpu 100× faster (76.2–144×): " \
           "too close to call" in line
    # a framework fastest in medians but not separable: the leaders, not a winner
    v = verdict(_three_way(120, 100, 10, noisy=("a-gpu",)))
    assert [s.backend for s in v.leaders] == ["a-gpu", "b-gpu"]


def test_a_range_touching_the_best_keeps_a_framework_in() -> None:
    """The edge of :func:`verdicts.surely_slower`: a range that ends exactly at the
    best's low end is not wholly below it."""
    best = verdicts.Standing("a", [], [10.0], [0], [8.0], [12.0])
    assert not verdicts.surely_slower(verdicts.Standing("b", [], [7.0], [1], [6.0], [8.0]),
                                      best)
    assert verdicts.surely_slower(
        verdicts.Standing("b", [], [7.0], [1], [6.0], [float(np.nextafter(8.0, 0))]), best)


def test_the_leaders_do_not_depend_on_which_of_them_measured_faster_this_run() -> None:
    """The re-run property: two runs where two noisy frameworks swap places name the
    same leaders (each run orders them by its own medians)."""
    one = verdict(_three_way(100, 104, 10, noisy=("a-gpu", "b-gpu")))
    two = verdict(_three_way(104, 100, 10, noisy=("a-gpu", "b-gpu")))
    assert one.winner.backend != two.winner.backend
    assert {s.backend for s in one.leaders} == {s.backend for s in two.leaders}


@FAST
@given(st.lists(st.floats(1.5, 1e4), min_size=1, max_size=5),
       st.lists(st.booleans(), min_size=5, max_size=5))
def test_property_leaders_hold_the_winner_and_only_ranked_frameworks(
        speeds: list[float], noisy: list[bool]) -> None:
    names = [f"{chr(97 + i)}-gpu" for i in range(len(speeds))]
    df = suite(dict(zip(names, (1 / s for s in speeds), strict=True)))
    wide = df["backend"].isin([n for n, z in zip(names, noisy, strict=False) if z])
    df.loc[wide, "caller_q1"] = df.loc[wide, "caller_s"] * 0.7
    df.loc[wide, "caller_q3"] = df.loc[wide, "caller_s"] * 1.3
    v = verdict(with_ranges(df))
    leaders = [s.backend for s in v.leaders]
    medians = [s.median for s in v.leaders]
    assert leaders[0] == v.winner.backend and medians == sorted(medians, reverse=True)
    assert set(leaders) <= {s.backend for s in v.ranked}
    for s in v.ranked[1:]:
        # out of the leaders exactly when its range lies wholly below the best's
        assert (s.backend in leaders) == (s.range_hi >= v.winner.range_lo)
    text = matrix.sentence(v, {})
    assert ("choose any of" in text) == (len(leaders) > 1)


def test_a_class_is_compared_at_one_size_per_kernel_and_band() -> None:
    """Three linalg cases at n = 512 and one measured only at n = 256: the class is
    compared at 512, and the other case is named as left out, not mixed in."""
    lin = cases("linalg", ["solve", "inv", "eigh"], ["float32"], 512)
    rows = [("numpy-cpu", *c, 1.0) for c in lin] + [("a-gpu", *c, 0.1) for c in lin]
    odd = ("linalg", "svd", "float32", 256)
    rows += [("numpy-cpu", *odd, 1.0), ("a-gpu", *odd, 0.01)]
    v = verdict(frame(rows), "linear algebra", "medium")
    assert {c[3] for c in v.cases} == {512} and len(v.cases) == 3
    assert v.other_sizes == [("linalg", "svd", "float32")]
    assert "left out, not measured at the comparison size: linalg/svd float32" in \
        matrix.sentence(v, {})


def test_a_winner_that_changes_at_the_gpus_largest_size_is_said() -> None:
    big = cases("monte_carlo_pi", ["default"], ["float32"], 1 << 24)
    rows = [("numpy-cpu", *big[0], 1.0), ("a-gpu", *big[0], 0.01), ("b-gpu", *big[0], 0.02),
            ("a-gpu", "monte_carlo_pi", "default", "float32", 1 << 28, 0.3),
            ("b-gpu", "monte_carlo_pi", "default", "float32", 1 << 28, 0.2)]
    df = frame(rows)
    cls = next(c for c, ks in verdicts.classes().items() if "monte_carlo_pi" in ks)
    v = verdicts.verdicts(df)[cls]["large"]
    assert v.winner.backend == "a-gpu"
    assert v.largest == ("at the GPU's largest sizes (268,435,456, no NumPy row) b-gpu is "
                         "the fastest in 1 of 1 cases, a-gpu taking 1.5–1.5× its time")
    assert v.largest in matrix.sentence(v, {})
    same = frame([r for r in rows if r[0] != "b-gpu" or r[4] != 1 << 28]
                 + [("b-gpu", "monte_carlo_pi", "default", "float32", 1 << 28, 0.4)])
    assert verdicts.verdicts(same)[cls]["large"].largest == ""


def test_a_speedups_range_is_the_quartiles_crossed() -> None:
    """reference q1 / row q3 to reference q3 / row q1 (README, "How sure")."""
    df = frame([("numpy-cpu", "vector_add", "default", "float32", 1 << 24, 1.0),
                ("a-gpu", "vector_add", "default", "float32", 1 << 24, 0.1)])
    a = df[df["backend"] == "a-gpu"].iloc[0]
    assert a["speedup_lo"] == pytest.approx(0.99 / 0.101)
    assert a["speedup_hi"] == pytest.approx(1.01 / 0.099)
    st = verdict(df, "elementwise work").winner
    assert (st.range_lo, st.range_hi) == (pytest.approx(0.99 / 0.101),
                                          pytest.approx(1.01 / 0.099))


# -- one CPU reference, crossover ranges -----------------------------------------------------


def test_a_crossovers_range_stays_between_the_measured_sizes_beside_it() -> None:
    from gpubench.report.sections.crossover import crossover_range

    sizes = np.array([1e3, 1e4, 1e5, 1e6])
    gpu = np.array([4.0, 2.0, 1.0, 1.0])
    cpu = np.array([1.0, 1.0, 2.0, 10.0])
    point = crossover(sizes, gpu, cpu)[1]
    assert 1e4 < point < 1e5
    # quartiles so wide that, unclipped, the range would reach 1e3 and 1e6
    lo, hi = crossover_range(sizes, (gpu / 4.5, gpu * 11), (cpu / 11, cpu * 4.5), point)
    assert (lo, hi) == (1e4, 1e5)
    # tight quartiles: a range inside the bracket, around the point
    lo, hi = crossover_range(sizes, (gpu * 0.95, gpu * 1.05), (cpu * 0.95, cpu * 1.05), point)
    assert 1e4 < lo < point < hi < 1e5
    assert crossover_range(sizes, (gpu, gpu), (cpu, cpu), math.nan) == (math.nan, math.nan) \
        or all(math.isnan(x) for x in crossover_range(sizes, (gpu, gpu), (cpu, cpu),
                                                       math.nan))


def test_the_cpu_reference_is_one_framework_at_one_thread_count() -> None:
    """The fastest (backend, thread count) over every size, not the fastest row per
    size: a row faster at one size does not take over there."""
    from gpubench.report.sections.crossover import cpu_reference

    rows = []
    for size, a, b, one in ((1e3, 1.0, 2.0, 0.5), (1e4, 2.0, 3.0, 9.0), (1e5, 9.0, 5.0, 90.0)):
        for backend, t, threads in (("a-cpu", a, 16), ("b-cpu", b, 16), ("a-cpu", one, 1)):
            rows.append({"backend": backend, "size_key": size, "caller_s": t,
                         "threads_key": threads, "status": "ok", "median_s": t})
    df = pd.DataFrame(rows)
    backend, threads, ref = cpu_reference(df)
    # geometric means: a/16 (1*2*9)^(1/3) = 2.6, b/16 (2*3*5)^(1/3) = 3.1, a/1 7.7
    assert (backend, threads) == ("a-cpu", 16)
    assert ref["caller_s"].tolist() == [1.0, 2.0, 9.0]
    fewer = df[~((df["backend"] == "a-cpu") & (df["size_key"] == 1e5))]
    assert cpu_reference(fewer)[:2] == ("b-cpu", 16)  # a lacks a size: b has the most


def test_the_class_crossover_carries_the_median_of_its_cases_ranges() -> None:
    cs = [_crossing("g-gpu", "vector_add", x) for x in (1e3, 2e3, 4e3)]
    for c, r in zip(cs, ((900, 1100), (1500, 3000), (3000, 5000)), strict=True):
        c.device_range, c.reference = (float(r[0]), float(r[1])), "a-cpu, 16 threads"
    s = verdicts.class_crossovers(cs)[("g-gpu", "elementwise work")]
    assert (s.r_lo, s.r_hi) == (1500.0, 3000.0)
    assert s.text() == "≈ 2,000 elements (range 1,500–3,000; cases 1,000–4,000 over 3 cases)"
    assert s.sentence().endswith("(against a-cpu, 16 threads)")
