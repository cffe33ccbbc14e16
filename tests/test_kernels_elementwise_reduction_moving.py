"""elementwise, reduction and moving_average: specs are sound and every implementation
passes its check when run through the real harness (small sizes, one thread)."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from gpubench.backends import Backend, load_backend
from gpubench.harness import Settings, measure
from gpubench.kernels.moving_average import series_shape
from gpubench.spec import BuildContext, Case, get_kernel, implementations

KERNELS = ("elementwise", "reduction", "moving_average")
FRAMEWORKS = ("numpy", "numba", "jax", "torch")
# moving_average: shorter than the window, one short series, and 4100 = 4 series of
# 1024 plus 4 elements that are rounded away (not a multiple of series_length).
SIZES = {"elementwise": [1000, 4096], "reduction": [1000, 4096],
         "moving_average": [10, 1000, 4100]}
SETTINGS = Settings(max_time_s=0.01, min_samples=2, warmup=1)

EXPECTED = {
    "elementwise": {
        "numpy": {"array_ops"},
        "numba": {"njit_loop", "njit_prange", "vectorize_cpu", "vectorize_parallel"},
        "jax": {"jit"},
        "torch": {"eager"},
    },
    "reduction": {
        "numpy": {"array_op"},
        "numba": {"njit_loop", "njit_prange"},
        "jax": {"jit"},
        "torch": {"eager"},
    },
    "moving_average": {
        "numpy": {"cumsum"},
        "numba": {"guvectorize_cpu", "guvectorize_parallel", "njit_prange"},
        "jax": {"jit"},
        "torch": {"eager"},
    },
}


@functools.cache
def _backend(framework: str) -> Backend:
    backend = load_backend(f"{framework}-cpu")
    backend.start(threads=1)
    return backend


def _inputs(case: Case) -> tuple[dict[str, np.ndarray], object]:
    spec = get_kernel(case.kernel)
    host = spec.make_inputs(case, np.random.default_rng(case.seed(SETTINGS.seed)))
    return host, spec.reference(case, host)


@pytest.mark.parametrize("kernel", KERNELS)
def test_registered_implementations(kernel: str) -> None:
    for framework, names in EXPECTED[kernel].items():
        impls = implementations(kernel, framework, "cpu")
        assert {i.name for i in impls} == names
        for impl in impls:
            # only NumPy's single ufunc/BLAS-1 calls and the serial Numba forms are serial
            serial = impl.framework == "numpy" or impl.name in (
                "njit_loop", "vectorize_cpu", "guvectorize_cpu")
            assert impl.parallel is not serial, impl.name


@pytest.mark.parametrize("kernel", KERNELS)
def test_inputs_are_random_distinct_and_in_dtype(kernel: str) -> None:
    spec = get_kernel(kernel)
    for case in spec.cases(sizes=SIZES[kernel]):
        host, ref = _inputs(case)
        for arr in host.values():
            assert arr.dtype == np.dtype(case.dtype)
            assert np.all(np.isfinite(arr)) and np.count_nonzero(arr) == arr.size
        for x, y in itertools.combinations(host.values(), 2):
            assert not np.shares_memory(x, y) and not np.array_equal(x, y)
        outs = spec.outputs(case)
        expected_shape = next(iter(outs.values()))[0] if outs else ()
        assert np.asarray(ref).shape == expected_shape
        assert np.asarray(ref).dtype == np.float64
        assert spec.bytes_moved(case) > 0 and spec.flops(case) > 0


def test_bytes_count_only_what_each_variant_reads() -> None:
    spec = get_kernel("elementwise")
    by_variant = {c.variant: spec.bytes_moved(c) for c in spec.cases([1024], ["float32"])}
    assert by_variant == {"hypot": 3 * 4096, "sigmoid": 2 * 4096, "rational": 3 * 4096}
    red = get_kernel("reduction")
    by_variant = {c.variant: red.bytes_moved(c) for c in red.cases([1024], ["float64"])}
    assert by_variant == {"sumsq": 8 * 1025, "dot": 8 * 2049, "weighted_mean": 8 * 2049}


def test_moving_average_shapes_round_down_to_whole_series() -> None:
    spec = get_kernel("moving_average")
    shapes = {c.size: series_shape(c) for c in spec.cases([10, 1000, 1024, 4100], ["float32"])}
    assert shapes == {10: (1, 10), 1000: (1, 1000), 1024: (1, 1024), 4100: (4, 1024)}
    case = spec.cases([4100], ["float64"])[0]
    assert spec.bytes_moved(case) == 2 * 4 * 1024 * 8


def test_moving_average_reference_matches_direct_window_mean() -> None:
    spec = get_kernel("moving_average")
    case = spec.cases([2048], ["float64"], params={"window": 5, "series_length": 64})[0]
    host, ref = _inputs(case)
    x = host["x"]
    direct = np.array([[x[r, max(0, i - 4): i + 1].mean() for i in range(x.shape[1])]
                       for r in range(x.shape[0])])
    np.testing.assert_allclose(ref, direct, rtol=1e-13)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_implementation_passes_through_harness(kernel: str, framework: str) -> None:
    if framework != "numpy":
        pytest.importorskip(framework)
    spec = get_kernel(kernel)
    impls = implementations(kernel, framework, "cpu")
    assert impls
    backend = _backend(framework)
    failures = []
    for case in spec.cases(sizes=SIZES[kernel]):
        host, ref = _inputs(case)
        for impl in impls:
            m = measure(spec, impl, case, backend, SETTINGS, host, ref)
            if m.fields["status"] != "ok":
                failures.append(f"{impl.name} {case.variant} {case.dtype} {case.size}: "
                                f"{m.fields['status']} {m.fields.get('reason')}")
            else:
                assert m.fields["rel_err"] <= spec.tolerance(case)
    assert not failures, "\n".join(failures)


def test_numba_float32_computes_in_float32() -> None:
    """Constants typed as the dtype: Numba's float32 loop matches NumPy's float32 bit for bit
    (a float64 literal would compute in float64 and round differently)."""
    pytest.importorskip("numba")
    spec = get_kernel("elementwise")
    case = spec.cases([4096], ["float32"], ["rational"])[0]
    host, _ = _inputs(case)
    outs = {}
    for framework, name in (("numpy", "array_ops"), ("numba", "njit_loop")):
        impl = next(i for i in implementations("elementwise", framework, "cpu") if i.name == name)
        backend = _backend(framework)
        out = backend.empty((case.size,), case.dtype)
        ctx = BuildContext(case, backend, dict(host), {"out": out}, 0)
        impl.builder(ctx)()
        outs[name] = out
    np.testing.assert_array_equal(outs["njit_loop"], outs["array_ops"])


def test_reduction_float32_tolerance_grows_with_the_length_of_the_sum() -> None:
    spec = get_kernel("reduction")
    tol = {c.size: spec.tolerance(c) for c in spec.cases([1024, 1 << 24], ["float32"], ["dot"])}
    assert tol[1024] == 1e-5
    assert tol[1 << 24] == pytest.approx(2 * 4096 * 2.0**-24)
    f64 = spec.cases([1 << 24], ["float64"], ["dot"])[0]
    assert spec.tolerance(f64) == 1e-12
