"""The pure-Python backend (python-cpu): its loops pass the correctness check,
sizes above an implementation's cap become ``skipped`` rows with the reason, its plan is
float64 at one thread, and the "Numba: 10–100× faster than plain Python loops" claim is
judged from numba-cpu against python-cpu rows of the same cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from kernel_helpers import cpu_backend
from report_data import _sample_frame, row, write_set

from gpubench import results
from gpubench.harness import Settings, measure
from gpubench.report import claims as guide
from gpubench.report import load_inputs, matrix
from gpubench.runner import plan
from gpubench.spec import Case, get_kernel, implementations

KERNELS = ("vector_add", "reduction", "moving_average", "monte_carlo_pi")
FAST = Settings(max_time_s=0.01, min_samples=2, warmup=1)
CLAIM = "Numba: 10–100× faster than plain Python loops"


def _impl(kernel: str):
    return next(iter(implementations(kernel, "python", "cpu")))


def test_the_python_loops_are_serial_float64_and_capped() -> None:
    for kernel in KERNELS:
        impls = implementations(kernel, "python", "cpu")
        assert [i.name for i in impls] == ["loop"]
        impl = impls[0]
        assert not impl.parallel and impl.max_size is not None
        assert impl.dtypes == ("float64",)
        assert not impl.supports(Case(kernel, get_kernel(kernel).variants[0], 1024,
                                      "float32"))[0]
    assert implementations("matmul", "python") == []


def test_a_python_result_list_is_checked_like_an_array() -> None:
    """The loop returns a list; the check reads it as float64 and still bites."""
    case = Case("vector_add", "default", 1000, "float64")
    spec = get_kernel("vector_add")
    inputs = spec.make_inputs(case, np.random.default_rng(0))
    ref = spec.reference(case, inputs)
    from gpubench.spec import BuildContext

    ctx = BuildContext(case, cpu_backend("python"), dict(inputs), {}, 0)
    out = _impl("vector_add").builder(ctx)()
    assert isinstance(out, list) and spec.check(case, out, ref).passed
    out[500] += 1e-3
    assert not spec.check(case, out, ref).passed


def test_a_size_above_the_cap_is_a_skipped_row_with_the_reason() -> None:
    impl = _impl("vector_add")
    case = Case("vector_add", "default", impl.max_size * 2, "float64")
    spec = get_kernel("vector_add")
    # skipped before any input is placed or any call is made: no inputs needed
    m = measure(spec, impl, case, cpu_backend("python"), FAST, {}, None)
    assert m.fields["status"] == "skipped"
    assert f"capped at size {impl.max_size}" in m.fields["reason"]
    at_cap = Case("monte_carlo_pi", "default", 4096, "float64")
    ok = measure(get_kernel("monte_carlo_pi"), _impl("monte_carlo_pi"), at_cap,
                 cpu_backend("python"), FAST, {}, get_kernel("monte_carlo_pi").reference(
                     at_cap, {}))
    assert ok.fields["status"] == "ok", ok.fields["reason"]


def test_the_plan_runs_float64_at_one_thread_and_keeps_sizes_above_the_cap() -> None:
    big = 1 << 22
    cfg = {"threads": [1, "max"], "kernels": {
        "moving_average": {"sizes": [1024, big], "dtypes": ["float32", "float64"]},
        "matmul": {"sizes": [64]}}}
    items = plan("python-cpu", cfg, cores=4)
    assert {(i.kernel, i.size, i.dtype, i.threads) for i in items} == {
        ("moving_average", 1024, "float64", 1), ("moving_average", big, "float64", 1)}
    assert big > _impl("moving_average").max_size  # that row is recorded as skipped


# -- the claim ---------------------------------------------------------------------------


def _rows(specs: list[tuple]) -> pd.DataFrame:
    """(backend, kernel, variant, size, caller_s, implementation, threads) -> a frame."""
    keys = ["backend", "kernel", "variant", "size_key", "caller_s", "implementation",
            "threads"]
    df = pd.DataFrame([dict(zip(keys, s, strict=True)) for s in specs])
    return df.assign(dtype="float64", status="ok", mode="hot")


def test_loop_speedups_pair_the_best_one_thread_rows_of_shared_cases() -> None:
    df = _rows([
        ("python-cpu", "vector_add", "default", 1024, 1e-4, "loop", 1),
        ("numba-cpu", "vector_add", "default", 1024, 4e-6, "njit_loop", 1),
        ("numba-cpu", "vector_add", "default", 1024, 2e-6, "vectorize_cpu", 1),
        ("numba-cpu", "vector_add", "default", 1024, 1e-7, "njit_prange", 8),
        ("numba-cpu", "vector_add", "default", 4096, 1e-6, "njit_loop", 1),  # no loop row
        ("python-cpu", "reduction", "dot", 1024, 1e-4, "loop", 1),
        ("numba-cpu", "reduction", "dot", 1024, 1e-6, "njit_loop", 1),
    ])
    s = guide.loop_speedups(df, "numba-cpu")
    assert list(s["kernel"]) == ["reduction", "vector_add"]
    assert list(s["implementation"]) == ["njit_loop", "vectorize_cpu"]
    assert s["speedup"].tolist() == pytest.approx([100.0, 50.0])
    assert list(s["row"]) == [6, 2] and list(s["loop_row"]) == [5, 0]
    assert guide.loop_speedups(df, "jax-cpu").empty


@pytest.mark.parametrize(("speedups", "verdict"), [
    ([50.0, 8.0, 12.0], "holds"), ([400.0, 300.0], "holds"),
    ([12.0, 3.0, 2.0], "partly"), ([3.0, 9.9], "does not hold")])
def test_the_loops_claim_verdict(speedups: list[float], verdict: str) -> None:
    rows = pd.DataFrame({"kernel": "vector_add", "size_key": 1024 * (1 + np.arange(
        len(speedups))), "speedup": speedups})
    m = matrix.Matrix(["numba-cpu"], {}, loops={"numba-cpu": rows})
    got = guide.loop_claim(m, "numba-cpu", CLAIM, True)
    assert got[0] == CLAIM and got[2] == verdict
    assert f"{len(speedups)} shared cases" in got[1]
    inverse = {"holds": "does not hold", "does not hold": "holds", "partly": "partly"}
    assert guide.loop_claim(m, "numba-cpu", CLAIM, False)[2] == inverse[verdict]


def test_the_loops_claim_without_shared_rows_is_not_measured() -> None:
    empty = matrix.Matrix(["numba-cpu"], {}, loops={"numba-cpu": pd.DataFrame(
        columns=["kernel", "size_key", "speedup"])})
    got = guide.loop_claim(empty, "numba-cpu", CLAIM, True)
    assert got[2] == "not measured" and "python-cpu" in got[1]
    assert guide.loop_claim(matrix.Matrix([], {}), "numba-cpu", CLAIM, True)[2] == \
        "not measured"


def test_the_report_judges_the_claim_from_the_rows(tmp_path: Path) -> None:
    """End to end: numba-cpu and python-cpu rows added to a synthetic set reach the
    claims table with the speedup they imply."""
    paths = write_set(tmp_path)
    extra, samples = [], []
    for seed, size in enumerate((1 << 10, 1 << 14, 1 << 18), start=500):
        for fw, impl, per_element in (("python", "loop", 6e-8), ("numba", "njit_loop", 1e-9)):
            r, s = row(fw, "cpu", impl, "vector_add", size, "float64", per_element * size,
                       threads=1, seed=seed + (fw == "numba"))
            extra.append(r)
            samples.append(_sample_frame(r, s))
    timings = pd.concat([pd.read_csv(paths["timings"]), results.rows_frame(extra)],
                        ignore_index=True)
    timings.to_csv(paths["timings"], index=False)
    pd.concat([pd.read_csv(paths["samples"]), *samples], ignore_index=True).to_csv(
        paths["samples"], index=False)
    inputs = load_inputs(paths["timings"], paths["env"], paths["samples"])
    table = inputs.choice[2]
    got = {r[0]: (r[1], r[2]) for r in table.itertuples(index=False)}
    text, verdict = got[CLAIM]
    assert verdict == "holds" and "3 shared cases" in text and "median 60×" in text
