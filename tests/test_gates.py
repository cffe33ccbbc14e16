"""The gates, the correctness check, the noise test and the crossover at their edges, with
the numbers they give: the GEMM-rate gate per dtype, the escaped-work gate, the reason
texts of the memory, transfer and sync gates, ``KernelSpec.check`` / ``relative_error``,
the fields and edges of :func:`gpubench.report.stats.compare` and the crossover's
interpolation.

Each case sits just inside or just outside one threshold, so a comparison turned from
``>`` into ``>=``, a constant nudged, a key misspelt or a branch dropped fails a test
(``make mutation`` looks for the ones that would not)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpubench import plausibility, spec
from gpubench.report import stats
from gpubench.report.sections.crossover import crossover
from gpubench.spec import Case, get_kernel

CEIL = {"d2d_copy_gbps": 3000.0, "sgemm_gflops": 50_000.0, "dgemm_gflops": 60_000.0,
        "l2_bytes": 50 * 2**20, "l2_copy_gbps": 6000.0}
OVER, UNDER = plausibility.MAX_OVER_CEILING * 1.001, plausibility.MAX_OVER_CEILING * 0.999


def gpu_row(**kw) -> dict:
    row = {"device": "gpu", "kernel": "matmul", "dtype": "float32", "timer": "cuda_event",
           "bytes": 0.0, "flops": 0.0, "gbps": math.nan, "gflops": math.nan,
           "median_s": 1e-3, "q1_s": 1e-3, "sync_median_s": math.nan, "sync_q3_s": math.nan,
           "pipelined_wait_s": math.nan, "pipelined_median_s": math.nan}
    row.update(kw)
    return row


# -- the GEMM rate ------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "key", "name"), [
    ("float32", "sgemm_gflops", "SGEMM"), ("complex64", "sgemm_gflops", "SGEMM"),
    ("float64", "dgemm_gflops", "DGEMM"), ("complex128", "dgemm_gflops", "DGEMM")])
def test_the_gemm_gate_reads_the_rate_of_the_rows_dtype(dtype: str, key: str, name: str
                                                        ) -> None:
    rate = CEIL[key]
    over = plausibility.reason(gpu_row(dtype=dtype, gflops=rate * OVER), CEIL)
    assert over.startswith(f"device time gives {rate * OVER:,.0f} GFLOP/s, 110 % of the "
                           f"measured {name} ceiling ({rate:,.0f} GFLOP/s)")
    assert plausibility.reason(gpu_row(dtype=dtype, gflops=rate * UNDER), CEIL) == ""
    # exactly at the bound is still plausible
    assert plausibility.reason(gpu_row(dtype=dtype,
                                       gflops=rate * plausibility.MAX_OVER_CEILING), CEIL) == ""


def test_the_gemm_gate_needs_a_rate_for_the_dtype_and_a_gpu() -> None:
    fast = 1e9
    assert plausibility.reason(gpu_row(dtype="int32", gflops=fast), CEIL) == ""
    assert plausibility.reason(gpu_row(gflops=fast), {"dgemm_gflops": 1.0}) == ""
    assert plausibility.reason(gpu_row(gflops=fast, device="cpu"), CEIL) == ""
    assert "SGEMM" in plausibility.reason(gpu_row(gflops=fast), {"sgemm_gflops": 1.0})


def test_a_reduced_precision_gemm_is_not_read_against_the_float32_rate() -> None:
    """gemm_reduced runs TF32/bfloat16/float16 on tensor cores, 8-16x SGEMM: its rows pass
    the GEMM gate, which still refuses the float32 matmul at the same rate; other gates
    still read them (here the sync clock below the device clock)."""
    fast = CEIL["sgemm_gflops"] * 15
    assert not get_kernel("gemm_reduced").gemm_gate and get_kernel("matmul").gemm_gate
    assert plausibility.reason(gpu_row(kernel="gemm_reduced", gflops=fast), CEIL) == ""
    assert "SGEMM" in plausibility.reason(gpu_row(gflops=fast), CEIL)
    assert "sync clock" in plausibility.reason(gpu_row(
        kernel="gemm_reduced", gflops=fast, sync_median_s=0.5e-3, sync_q3_s=0.6e-3), CEIL)


# -- work that escaped the timed stream -----------------------------------------------------------


def escaped(device_s: float, busy_s: float, work_s: float = 1e-3, **kw) -> str:
    """A vector_add row whose counted bytes need ``work_s`` at the copy ceiling."""
    nbytes = work_s * CEIL["d2d_copy_gbps"] * 1e9
    return plausibility.reason(gpu_row(
        kernel="vector_add", bytes=nbytes, gbps=1.0,  # far under the copy ceiling
        median_s=device_s, pipelined_wait_s=busy_s, pipelined_median_s=busy_s * 1.1, **kw),
        {k: v for k, v in CEIL.items() if k != "l2_bytes"} | {"l2_bytes": 1.0})


def test_device_time_under_half_the_wait_is_escaped_work() -> None:
    text = escaped(0.49e-3, 1e-3)
    assert text.startswith("device time 490.0 µs is 49.0 % of the 1,000.0 µs per call a "
                           "caller waited for the device after its calls had returned "
                           "(pipelined 1,100.0 µs per call; the counted work needs at "
                           "least 1,000.0 µs at the measured ceilings)")
    assert escaped(0.51e-3, 1e-3) == ""
    assert escaped(0.5e-3, 1e-3) == ""  # exactly half: not below it


def test_the_escape_gate_needs_work_a_wait_and_a_device_clock() -> None:
    assert escaped(1e-6, 1e-3, work_s=0.99e-4) == ""  # under 100 µs of work: not judged
    assert escaped(1e-6, 1e-3, work_s=1.0e-4) != ""   # exactly 100 µs: judged
    assert escaped(1e-6, 0.0) == ""                   # no wait recorded
    assert escaped(1e-6, math.nan) == ""
    assert escaped(1e-6, 1e-3, timer="perf_counter+sync") == ""  # the host's clock


def test_least_work_is_the_longer_of_bytes_and_flops_except_for_transfers() -> None:
    row = gpu_row(kernel="matmul", bytes=3e9, flops=1e12, dtype="float64")
    assert plausibility.least_work_s(row, CEIL) == pytest.approx(max(3e9 / 3e12, 1e12 / 6e13))
    row = gpu_row(kernel="vector_add", bytes=3e12, flops=1.0)
    assert plausibility.least_work_s(row, CEIL) == pytest.approx(1.0)
    assert math.isnan(plausibility.least_work_s(gpu_row(kernel="transfer", bytes=1e9), CEIL))
    assert math.isnan(plausibility.least_work_s(gpu_row(), {}))


# -- what the other reasons say -------------------------------------------------------------------


def test_the_memory_and_l2_reasons_give_their_numbers() -> None:
    big = 256 * 2**20
    text = plausibility.reason(gpu_row(kernel="vector_add", bytes=float(big), gbps=3500.0),
                               CEIL)
    assert text.startswith("device time gives 3,500 GB/s, 117 % of the measured copy ceiling "
                           "(3,000 GB/s) on 256 MiB, over 2x the 50 MiB L2")
    small = 24 * 2**20
    text = plausibility.reason(gpu_row(kernel="vector_add", bytes=float(small), gbps=7000.0),
                               CEIL)
    assert "7,000 GB/s, 117 % of the measured L2-resident" in text and "50 MiB L2" in text
    # one byte of memory-bound work is still judged
    assert plausibility.reason(gpu_row(kernel="vector_add", bytes=1.0, gbps=1e5), CEIL)
    assert plausibility.reason(gpu_row(kernel="vector_add", bytes=0.0, gbps=1e5), CEIL) == ""


def test_the_transfer_and_sync_reasons_give_their_numbers() -> None:
    ceil = {"pinned_gbps": {"h2d": {"4194304": 50.0}}}
    row = gpu_row(kernel="transfer", variant="h2d_pinned", size=1 << 20, bytes=4194304.0,
                  gbps=58.0)
    text = plausibility.reason(row, ceil)
    assert text.startswith("device time gives 58.0 GB/s, 116 % of the measured pinned rate")
    sync = gpu_row(kernel="linalg", median_s=100e-6, q1_s=95e-6, sync_median_s=80e-6,
                   sync_q3_s=85e-6)
    text = plausibility.reason(sync, CEIL)
    assert "80.0 µs (upper quartile 85.0 µs) in its median, 20 % less than the device " \
           "clock's 100.0 µs" in text


# -- the correctness check ------------------------------------------------------------------------


@pytest.fixture
def vector_add() -> tuple[spec.KernelSpec, Case, float]:
    s = get_kernel("vector_add")
    case = Case("vector_add", "default", 1000, "float64", {})
    return s, case, s.tolerance(case)


def test_the_check_passes_at_exactly_its_tolerance(monkeypatch, vector_add) -> None:
    s, case, tol = vector_add
    ref = np.ones(1000)
    monkeypatch.setattr(spec, "relative_error", lambda out, ref: tol)
    at = s.check(case, ref, ref)
    assert at.passed and at.rel_err == tol and at.tolerance == tol and at.reason == ""
    monkeypatch.setattr(spec, "relative_error", lambda out, ref: np.nextafter(tol, 1.0))
    over = s.check(case, ref, ref)
    assert not over.passed and over.reason == f"relative error {over.rel_err:.3g} > {tol:.3g}"


def test_a_wrong_shape_or_an_unwritten_output_fails_with_the_reason(vector_add) -> None:
    s, case, tol = vector_add
    ref = np.ones(1000)
    shape = s.check(case, ref[:10], ref)
    assert not shape.passed and math.isnan(shape.rel_err) and shape.tolerance == tol
    assert shape.reason == "shape (10,) != expected (1000,)"
    out = ref.copy()
    out[[3, 7]] = [math.nan, math.inf]
    bad = s.check(case, out, ref)
    assert bad.passed is False and math.isnan(bad.rel_err) and bad.tolerance == tol
    assert bad.reason == "2 of 1000 outputs not finite (unwritten?)"


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_relative_error_is_the_2_norm_ratio_across_chunks(dtype: str) -> None:
    rng = np.random.default_rng(3)
    shape = (300, 700)  # 210,000 elements: more than three chunks of 65,536
    ref = rng.random(shape).astype(dtype)
    if dtype.startswith("complex"):
        ref = ref + 1j * rng.random(shape).astype(dtype)
    out = ref + (1e-3 * rng.standard_normal(shape)).astype(ref.real.dtype)
    want = np.linalg.norm((out - ref).ravel()) / np.linalg.norm(ref.ravel())
    got = spec.relative_error(out, ref)
    assert got == pytest.approx(float(want), rel=1e-5)
    # an error only in the last chunk counts as much as one in the first
    last = ref.copy()
    last.ravel()[-1] += 1.0
    first = ref.copy()
    first.ravel()[0] += 1.0
    assert spec.relative_error(last, ref) == pytest.approx(spec.relative_error(first, ref),
                                                           rel=1e-6)


def test_relative_error_against_a_small_or_zero_reference() -> None:
    ref = np.full(4, 0.1)
    out = ref + np.array([0.1, 0, 0, 0])
    assert spec.relative_error(out, ref) == pytest.approx(0.1 / 0.2)
    zero = np.zeros(4)
    assert spec.relative_error(np.array([3.0, 4.0, 0, 0]), zero) == pytest.approx(5.0)
    assert math.isnan(spec.relative_error(np.array([math.nan, 0, 0, 0]), ref))
    with pytest.raises(ValueError, match="4 elements against 3"):
        spec.relative_error(ref, ref[:3])


# -- the noise test's fields and edges ------------------------------------------------------------


def _tight(center: float, n: int = 8, seed: int = 0) -> np.ndarray:
    return center * (1 + 0.002 * np.random.default_rng(seed).uniform(-1, 1, n))


def test_a_verdict_carries_its_ratio_p_value_method_and_interval() -> None:
    from scipy import stats as scipy_stats

    a, b = _tight(1.0, seed=1), _tight(2.0, seed=2)
    v = stats.compare(1.0, 2.0, a, b)
    want = scipy_stats.mannwhitneyu(b, a, use_continuity=True, alternative="two-sided",
                                    method="asymptotic").pvalue
    assert v.label == stats.SLOWER and v.ratio == 2.0 and v.method == "hodges-lehmann"
    assert v.p_value == pytest.approx(want) and 1.9 < v.lo <= v.hi < 2.1
    u = stats.compare(1.0, 1.0, _tight(1.0, 6, 3) * [1, 1.3, 0.8, 1, 1.2, 0.9], _tight(1.0))
    assert u.label == stats.UNRESOLVED and u.ratio == 1.0 and u.method == "hodges-lehmann"
    assert math.isfinite(u.p_value) and u.lo < 1 < u.hi
    s = stats.compare(1.0, 1.0, _tight(1.0, seed=4), _tight(1.0, seed=5))
    assert s.label == stats.SAME and s.ratio == 1.0 and math.isfinite(s.p_value)
    assert s.method == "hodges-lehmann" and 1 / 1.05 <= s.lo <= s.hi <= 1.05
    bad = stats.compare(0.0, 1.0)
    assert (bad.label, bad.method, math.isnan(bad.p_value)) == (stats.UNRESOLVED, "none", True)
    assert math.isnan(bad.ratio)
    iqr = stats.compare(1.0, 2.0, base_iqr=(0.9, 1.1), new_iqr=(1.9, 2.1))
    assert iqr.method == "iqr" and math.isnan(iqr.p_value) and math.isnan(iqr.lo)


def test_samples_on_one_side_only_fall_back_to_the_quartiles() -> None:
    v = stats.compare(1.0, 2.0, _tight(1.0), None, (0.9, 1.1), (1.9, 2.1))
    assert v.method == "iqr" and v.label == stats.SLOWER
    assert stats.compare(1.0, 2.0, _tight(1.0), _tight(2.0)[:2]).method == "iqr"
    # neither samples nor quartiles: nothing can be said
    assert stats.compare(1.0, 2.0).label == stats.UNRESOLVED
    assert stats.compare(1.0, 1.0, base_iqr=None, new_iqr=(1.0, 1.0)).label == \
        stats.UNRESOLVED


def test_exactly_the_smallest_effect_is_not_a_difference() -> None:
    a = _tight(1.0, 12, 6)
    v = stats.compare(1.0, 1.05, a, a * 1.05)
    assert v.label != stats.SLOWER and v.label != stats.FASTER


def test_the_quartiles_edges() -> None:
    # ranges that touch are not apart
    assert stats.compare(2.05, 1.5, base_iqr=(2.0, 2.1), new_iqr=(1.0, 2.0)).label == \
        stats.UNRESOLVED
    assert stats.compare(1.5, 2.05, base_iqr=(1.0, 2.0), new_iqr=(2.0, 2.1)).label == \
        stats.UNRESOLVED
    # both inside a window of exactly 5 %: the same
    assert stats.compare(1.0, 1.02, base_iqr=(1.0, 1.0), new_iqr=(1.0, 1.05)).label == \
        stats.SAME
    # zero quartiles prove nothing
    assert stats.compare(1.0, 1.0, base_iqr=(0.0, 0.0), new_iqr=(0.0, 0.0)).label == \
        stats.UNRESOLVED


def test_a_looser_level_gives_a_narrower_interval() -> None:
    a = np.array([1.00, 1.01, 1.02, 1.03, 1.12])
    b = np.array([1.11, 1.12, 1.13, 1.14, 1.15, 1.16])
    assert stats.compare(1.02, 1.135, a, b).label == stats.UNRESOLVED  # alpha 0.01
    assert stats.compare(1.02, 1.135, a, b, alpha=0.2).label == stats.SLOWER


def test_the_normal_approximation_beyond_the_exact_counts() -> None:
    # 60 x 60 = 3,600 pairs: floor(1,800 - 2.5758 * sqrt(60 * 60 * 121 / 12)) = 1,309
    assert stats.excluded_per_side(60, 60, 0.01) == 1309
    assert stats.excluded_per_side(60, 60, 0.05) == math.floor(
        1800 - 1.959964 * math.sqrt(60 * 60 * 121 / 12))
    # 50 x 50 = 2,500 pairs is still counted exactly
    cdf = stats._u_null_cdf(50, 50)
    exact = int(np.flatnonzero(cdf <= 0.005 + 1e-12)[-1] + 1)
    assert stats.excluded_per_side(50, 50, 0.01) == exact


# -- the crossover's numbers ----------------------------------------------------------------------


def test_the_crossover_interpolates_log_log_between_the_last_loss_and_the_first_win() -> None:
    s = np.array([1e3, 1e4])
    # GPU/CPU time: 4x at 1,000, 0.5x at 10,000: the log ratio crosses zero 2/3 of the way
    text, at = crossover(s, np.array([4.0, 0.5]), np.array([1.0, 1.0]))
    assert at == float(f"{10 ** (3 + 2 / 3):.2g}") == 4600.0
    assert text == "≈ 4,600 (between 1,000 and 10,000)"


def test_the_crossovers_texts_name_the_sizes() -> None:
    s = np.array([1e3, 1e4, 1e5])
    assert crossover(s, np.array([1.0] * 3), np.array([2.0] * 3))[0] == \
        "≤ 1,000 (faster at every size)"
    assert crossover(s, np.array([3.0] * 3), np.array([2.0] * 3))[0] == \
        "> 100,000 (slower at the largest size compared)"
    assert crossover(np.array([]), np.array([]), np.array([])) == ("—", pytest.approx(
        math.nan, nan_ok=True))
