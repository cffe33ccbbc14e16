"""The claims judged case by case on paired rows: "Numba matches CUDA
C", "fusion reduces overhead" and "JAX's CPU backend is often fast". Each compares only
the cases both sides measured, is tested at its threshold, and its sentence follows one
changed case."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_data import _sample_frame, row, write_set

from gpubench import results
from gpubench.report import claims as guide
from gpubench.report import load_inputs, matrix

NUMBA_CLAIM = "Numba matches CUDA C (hand-written kernels, same algorithm)"
JAX_CLAIM = "JAX's CPU backend is often fast (faster than NumPy in ≥ half the cases)"


def _frame(specs: list[tuple]) -> pd.DataFrame:
    """(backend, implementation, kernel, variant, size_key, seconds) -> a prepared-like
    frame, the same time on both clocks."""
    keys = ["backend", "implementation", "kernel", "variant", "size_key", "caller_s"]
    df = pd.DataFrame([dict(zip(keys, s, strict=True)) for s in specs])
    return df.assign(median_s=df["caller_s"], dtype="float32", status="ok", mode="hot",
                     threads=1)


def _numba(pairs: pd.DataFrame) -> list[str]:
    return guide.cuda_c_claim(pairs, "numba-gpu", "cuda_python-gpu", NUMBA_CLAIM)


def _jax(pairs: dict[str, pd.DataFrame]) -> list[str]:
    return guide.often_fast_claim(pairs, "jax-cpu", JAX_CLAIM)


def test_the_claims_are_the_guides_data() -> None:
    """The claim texts the report judges come from the guide's data, so the tests here
    check the rows the report shows."""
    said = {c for g in guide.GUIDE.values() for _k, _e, c in g.claims}
    assert {NUMBA_CLAIM, JAX_CLAIM} <= said
    assert guide.guide("numba-gpu").cuda_c_reference == "cuda_python-gpu"
    assert guide.guide("jax-cpu").fast_against[0] == "numpy-cpu"


def _pairs(ratios: list[float], **extra: str) -> pd.DataFrame:
    """A paired frame with these ratios, one case per size."""
    return pd.DataFrame({"kernel": "vector_add", "variant": "default", "dtype": "float32",
                         "size_key": [1024 << i for i in range(len(ratios))],
                         "implementation": "a", "other_implementation": "b",
                         "ratio": ratios, **extra})


# -- pairing ---------------------------------------------------------------------------------


def test_paired_cases_take_each_sides_fastest_row_of_shared_cases_only() -> None:
    df = _frame([
        ("cuda_python-gpu", "nvrtc", "vector_add", "default", 1024, 4.0),
        ("numba-gpu", "cuda_jit", "vector_add", "default", 1024, 5.0),
        ("numba-gpu", "vectorize_cuda", "vector_add", "default", 1024, 1.0),  # not named
        ("numba-gpu", "cuda_jit", "vector_add", "default", 4096, 6.0),  # no CUDA C row
        ("cuda_python-gpu", "nvrtc", "vector_add", "default", 4096, 0.0),  # no time
        ("cuda_python-gpu", "nvrtc", "vector_add", "default", 16384, 2.0),
        ("numba-gpu", "cuda_jit", "vector_add", "default", 16384, 1.0),
    ])
    p = guide.paired_cases(df, ("cuda_python-gpu", ("nvrtc",)), ("numba-gpu", ("cuda_jit",)),
                            "median_s")
    assert list(p["size_key"]) == [1024, 16384]
    assert p["ratio"].tolist() == [1.25, 0.5]
    assert list(p["row"]) == [0, 5] and list(p["other_row"]) == [1, 6]
    # no implementation named: the fastest of any
    anyone = guide.paired_cases(df, ("cuda_python-gpu", ()), ("numba-gpu", ()), "median_s")
    assert anyone.loc[0, "other_implementation"] == "vectorize_cuda"
    assert guide.paired_cases(df, ("jax-gpu", ()), ("numba-gpu", ()), "median_s").empty


def test_numba_pairs_compare_the_same_algorithm() -> None:
    """Tiled against tiled, naive against naive: never Numba's tiled against the CUDA C
    naive kernel, though both are matmul rows of the same case."""
    df = _frame([
        ("cuda_python-gpu", "naive", "matmul", "default", 1024, 8.0),
        ("cuda_python-gpu", "tiled", "matmul", "default", 1024, 2.0),
        ("numba-gpu", "cuda_jit_naive", "matmul", "default", 1024, 8.0),
        ("numba-gpu", "cuda_jit_tiled", "matmul", "default", 1024, 4.0),
        ("numba-gpu", "xoroshiro", "monte_carlo_pi", "default", 1024, 1.0),  # not paired
        ("cuda_python-gpu", "nvrtc", "monte_carlo_pi", "default", 1024, 1.0),
    ])
    p = guide.cuda_c_pairs(df, "numba-gpu")
    assert dict(zip(p["pair"], p["ratio"], strict=True)) == {
        "cuda_jit_naive/naive": 1.0, "cuda_jit_tiled/tiled": 2.0}


# -- Numba matches CUDA C --------------------------------------------------------------------


@pytest.mark.parametrize(("ratios", "verdict"), [
    ([1.25, 0.5, 1.0], "holds"),  # at the threshold counts as matching
    ([1.2501, 1.0], "partly"),
    ([1.2501, 3.0], "does not hold"),
])
def test_the_numba_claim_at_its_threshold(ratios: list[float], verdict: str) -> None:
    got = _numba(_pairs(ratios, pair="cuda_jit/nvrtc"))
    assert got[0] == NUMBA_CLAIM and got[2] == verdict
    within = sum(r <= guide.CUDA_C_MATCH for r in ratios)
    assert f"{len(ratios)} shared cases" in got[1] and f"in {within};" in got[1]
    assert "device clock" in got[1] and "vector_add cuda_jit/nvrtc" in got[1]


def test_the_numba_claim_without_shared_rows_is_not_measured() -> None:
    got = _numba(guide.cuda_c_pairs(_frame([
        ("numba-gpu", "cuda_jit", "vector_add", "default", 1024, 1.0)]), "numba-gpu"))
    assert got[2] == "not measured" and got[1].startswith("not measured: no numba-gpu")


def test_the_numba_sentence_follows_one_changed_case() -> None:
    before = _numba(_pairs([1.0, 1.1, 1.2], pair="cuda_jit/nvrtc"))
    after = _numba(_pairs([1.0, 1.1, 2.4], pair="cuda_jit/nvrtc"))
    assert before[2] == "holds" and after[2] == "partly"
    assert "slowest: vector_add/default float32 at 4,096 (time ratio 2.4×)" in after[1]
    assert "slowest" not in before[1]


# -- fusion reduces overhead ------------------------------------------------------------------


def test_the_fusion_claim_at_its_threshold() -> None:
    edge = 1 + matrix.stats.MIN_EFFECT
    pairs = {("cupy-gpu", "fuse"): _pairs([edge, 3.0]),
             ("torch-gpu", "compile"): _pairs([2.0])}
    got = guide.fusion_claim(pairs)
    assert got[2] == "holds" and "faster in 2 of 2 cases" in got[1]
    pairs[("cupy-gpu", "fuse")] = _pairs([edge - 1e-4, 3.0])
    got = guide.fusion_claim(pairs)
    assert got[2] == "partly" and "faster in 1 of 2 cases" in got[1]
    assert "not faster: vector_add/default float32 at 1,024" in got[1]
    got = guide.fusion_claim({("cupy-gpu", "fuse"): _pairs([1.0, 0.5])})
    assert got[2] == "does not hold"


def test_the_fusion_claim_names_what_it_could_not_pair() -> None:
    empty = _pairs([]).iloc[0:0]
    got = guide.fusion_claim({("cupy-gpu", "fuse"): _pairs([2.0]),
                               ("jax-gpu", "jit"): empty})
    assert got[2] == "holds" and "not measured (no shared rows): jax-gpu jit" in got[1]
    assert guide.fusion_claim({("jax-gpu", "jit"): empty})[2] == "not measured"
    assert guide.fusion_claim({})[2] == "not measured"


def test_fusion_pairs_stay_within_one_backend_and_the_fusable_kernels() -> None:
    df = _frame([
        ("cupy-gpu", "array_ops", "elementwise", "hypot", 1024, 6.0),
        ("cupy-gpu", "fuse", "elementwise", "hypot", 1024, 2.0),
        ("cupy-gpu", "elementwise_kernel", "elementwise", "hypot", 1024, 3.0),
        ("torch-gpu", "eager", "elementwise", "hypot", 1024, 1.0),  # another backend
        ("cupy-gpu", "array_ops", "vector_add", "default", 1024, 6.0),  # nothing to fuse
        ("cupy-gpu", "elementwise_kernel", "vector_add", "default", 1024, 2.0),
    ])
    p = guide.fusion_pairs(df)
    assert p[("cupy-gpu", "fuse")]["ratio"].tolist() == [3.0]
    assert p[("cupy-gpu", "elementwise_kernel")]["ratio"].tolist() == [2.0]
    assert p[("torch-gpu", "compile")].empty


# -- JAX's CPU backend is often fast ----------------------------------------------------------


@pytest.mark.parametrize(("ratios", "verdict"), [
    ([1.05, 1.05, 0.5, 0.5], "holds"),  # exactly half, at the 5 % edge
    ([1.05, 1.0499, 0.5, 0.5], "partly"),
    ([2.0, 0.5, 0.5], "partly"),  # one of three: under half
    ([1.0, 0.5], "does not hold"),
])
def test_the_jax_cpu_claim_at_its_threshold(ratios: list[float], verdict: str) -> None:
    got = _jax({"numpy-cpu": _pairs(ratios)})
    assert got[0] == JAX_CLAIM and got[2] == verdict
    faster = sum(r >= 1.05 for r in ratios)
    assert f"against numpy-cpu: faster in {faster} of {len(ratios)} shared cases" in got[1]


def test_the_jax_cpu_claim_is_judged_against_numpy_only() -> None:
    got = _jax({"numpy-cpu": _pairs([]).iloc[0:0],
                                "numba-cpu": _pairs([2.0])})
    assert got[2] == "not measured" and "no jax-cpu and numpy-cpu rows" in got[1]
    got = _jax({"numpy-cpu": _pairs([2.0]), "numba-cpu": _pairs([0.1])})
    assert got[2] == "holds" and "against numba-cpu: faster in 0 of 1" in got[1]


# -- end to end: rows of a synthetic set reach the claims table --------------------------------


def _add(paths: dict[str, Path], specs: list[tuple]) -> None:
    """Append rows (framework, device, implementation, kernel, variant, size, seconds)."""
    extra, samples = [], []
    for seed, (fw, dev, impl, kernel, variant, size, t) in enumerate(specs, start=900):
        r, s = row(fw, dev, impl, kernel, size, "float32", t, variant=variant, seed=seed,
                   threads=1 if dev == "cpu" else 4)
        extra.append(r)
        samples.append(_sample_frame(r, s))
    pd.concat([pd.read_csv(paths["timings"]), results.rows_frame(extra)],
              ignore_index=True).to_csv(paths["timings"], index=False)
    pd.concat([pd.read_csv(paths["samples"]), *samples], ignore_index=True).to_csv(
        paths["samples"], index=False)


def _claims(paths: dict[str, Path]) -> dict[str, tuple[str, str]]:
    table = load_inputs(paths["timings"], paths["env"], paths["samples"]).choice[2]
    return {r[0]: (r[1], r[2]) for r in table.itertuples(index=False)}


def test_the_report_judges_the_three_claims_from_the_rows(tmp_path: Path) -> None:
    paths = write_set(tmp_path)
    fusion = next(c for c in _claims(paths) if c.startswith("fusion reduces overhead"))
    assert _claims(paths)[NUMBA_CLAIM][1] == "not measured"  # the base set has none
    assert _claims(paths)[fusion][1] == "not measured"
    assert _claims(paths)[JAX_CLAIM][1] == "not measured"
    specs = []
    for size in (1 << 12, 1 << 16, 1 << 20):  # the base set has an error row at 1,024
        t = size * 1e-12 + 4e-6
        specs += [("cuda_python", "gpu", "nvrtc", "vector_add", "default", size, t),
                  ("numba", "gpu", "cuda_jit", "vector_add", "default", size, t * 1.1),
                  ("cupy", "gpu", "array_ops", "elementwise", "hypot", size, t * 4),
                  ("cupy", "gpu", "fuse", "elementwise", "hypot", size, t),
                  ("numpy", "cpu", "ufunc", "reduction", "sumsq", size, size * 1e-9),
                  ("jax", "cpu", "jit", "reduction", "sumsq", size, size * 5e-10)]
    _add(paths, specs)
    got = _claims(paths)
    assert got[NUMBA_CLAIM][1] == "holds" and "3 shared cases" in got[NUMBA_CLAIM][0]
    assert got[fusion][1] == "holds" and "faster in 3 of 3 cases" in got[fusion][0]
    assert got[JAX_CLAIM][1] == "holds"
    assert ("faster in 3 of 3 shared cases (reduction; 4,096–1,048,576; at 1 thread each)"
            in got[JAX_CLAIM][0])
    # one case changed on each side: each sentence and verdict follows
    _add(paths, [("numba", "gpu", "cuda_jit", "vector_add", "default", 1 << 24, 1e-3),
                 ("cuda_python", "gpu", "nvrtc", "vector_add", "default", 1 << 24, 1e-4),
                 ("cupy", "gpu", "array_ops", "elementwise", "hypot", 1 << 24, 1e-4),
                 ("cupy", "gpu", "fuse", "elementwise", "hypot", 1 << 24, 1e-3)])
    again = _claims(paths)
    assert again[NUMBA_CLAIM][1] == "partly" and "4 shared cases" in again[NUMBA_CLAIM][0]
    assert "slowest: vector_add/default float32 at 16,777,216" in again[NUMBA_CLAIM][0]
    assert again[fusion][1] == "partly" and "faster in 3 of 4 cases" in again[fusion][0]


# -- cupyx.scipy.fft, a drop-in for scipy.fft ---------------------------------------------------

DROP = ("cupyx_scipy_fft", "numpy-cpu", "scipy_fft", "fft")


def _drop(ratios: list[float]) -> list[str]:
    return guide.drop_in_claim(_pairs(ratios).assign(kernel="fft", variant="1d"),
                                "cupy-gpu", DROP, "drop-in")


@pytest.mark.parametrize(("ratios", "verdict"), [
    ([800.0, 1.05], "holds"),            # faster in every shared case, at the edge
    ([800.0, 1.0499], "partly"),          # one case short of the edge
    ([1.0499, 0.5], "does not hold"),
    ([1.05], "holds"),
])
def test_drop_in_claim_at_its_edge(ratios: list[float], verdict: str) -> None:
    row = _drop(ratios)
    assert row[2] == verdict, row
    assert f"{len(ratios)} shared fft cases" in row[1]
    assert ("not faster" in row[1]) == (verdict != "holds")


def test_drop_in_claim_without_shared_cases_is_not_measured() -> None:
    row = guide.drop_in_claim(pd.DataFrame(columns=["ratio"]), "cupy-gpu", DROP, "drop-in")
    assert row[2].startswith("not measured") and "cupyx_scipy_fft" in row[1]


def test_drop_in_pairs_only_the_named_implementations_of_shared_cases() -> None:
    """cupyx.scipy.fft is paired with scipy.fft, not with cupy.fft or numpy.fft, and only
    on the sizes both measured; the claim is said of CuPy."""
    assert guide.guide("cupy-gpu").drop_in == DROP
    df = _frame([("cupy-gpu", "cupyx_scipy_fft", "fft", "1d", 1 << 24, 1e-4),
                 ("cupy-gpu", "cufft", "fft", "1d", 1 << 24, 1e-5),
                 ("numpy-cpu", "scipy_fft", "fft", "1d", 1 << 24, 0.2),
                 ("numpy-cpu", "pocketfft", "fft", "1d", 1 << 24, 0.1),
                 ("numpy-cpu", "scipy_fft", "fft", "1d", 1 << 20, 0.01)])
    pairs = guide.claim_pairs(df)[("drop_in", "cupy-gpu")]
    assert len(pairs) == 1 and pairs.iloc[0]["implementation"] == "cupyx_scipy_fft"
    assert pairs.iloc[0]["other_implementation"] == "scipy_fft"
    assert pairs.iloc[0]["ratio"] == pytest.approx(2000.0)


def test_often_fast_compares_at_equal_thread_counts_and_says_which() -> None:
    """JAX at 16 threads against single-thread NumPy would credit the cores: the pair is
    taken at one thread count, per case the most both measured, and the verdict names
    the thread counts. Here JAX wins only where it had more threads than NumPy."""
    df = _frame([
        # case 1: both at 1 and 16 threads; at 16 NumPy (BLAS) is as fast as JAX
        ("jax-cpu", "jit", "vector_add", "default", 1024, 1.0),
        ("numpy-cpu", "ufunc", "vector_add", "default", 1024, 3.0),
        ("jax-cpu", "jit", "vector_add", "default", 1024, 0.5),
        ("numpy-cpu", "ufunc", "vector_add", "default", 1024, 0.5),
        # case 2: JAX at 16 threads only, NumPy at 1: no equal count, not compared
        ("jax-cpu", "jit", "vector_add", "default", 4096, 1.0),
        ("numpy-cpu", "ufunc", "vector_add", "default", 4096, 4.0),
        # case 3: both at 1 thread only; JAX slower
        ("jax-cpu", "jit", "vector_add", "default", 16384, 2.0),
        ("numpy-cpu", "ufunc", "vector_add", "default", 16384, 1.0),
    ])
    df["threads"] = [1, 1, 16, 16, 16, 1, 1, 1]
    p = guide.paired_cases(df, ("jax-cpu", ()), ("numpy-cpu", ()), "caller_s",
                            equal_threads=True)
    assert list(p["size_key"]) == [1024, 16384] and list(p["threads"]) == [16, 1]
    assert list(p["ratio"]) == [1.0, 0.5]
    text = _jax({"numpy-cpu": p})
    assert "faster in 0 of 2" in text[1] and "at 1 and 16 threads each" in text[1], text
    assert text[2] == "does not hold"
    # any thread count, as before: JAX's 16 threads against NumPy's 1 win both cases
    anyone = guide.paired_cases(df, ("jax-cpu", ()), ("numpy-cpu", ()), "caller_s")
    assert list(anyone["ratio"]) == [1.0, 4.0, 0.5]
