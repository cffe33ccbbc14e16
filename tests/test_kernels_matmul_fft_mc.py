"""matmul, fft and monte_carlo_pi: every implementation passes its check through the harness."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_helpers import cpu_backend, cpu_cases

from gpubench.harness import Settings, measure
from gpubench.spec import Case, get_kernel, implementations

FAST = Settings(max_time_s=0.01, min_samples=2, warmup=1)
SIZES = {"matmul": (64, 96), "fft": (1024, 4096), "monte_carlo_pi": (1 << 16,)}



def run(kernel: str, framework: str, impl_name: str, case: Case):
    spec = get_kernel(kernel)
    backend = cpu_backend(framework)
    impl = next(i for i in implementations(kernel, framework, "cpu") if i.name == impl_name)
    host_inputs = spec.make_inputs(case, np.random.default_rng(0))
    ref = spec.reference(case, host_inputs)
    return measure(spec, impl, case, backend, FAST, host_inputs, ref)




@pytest.mark.parametrize(("kernel", "framework", "impl_name", "case"), cpu_cases(SIZES))
def test_implementation_passes(kernel: str, framework: str, impl_name: str, case: Case) -> None:
    m = run(kernel, framework, impl_name, case)
    assert m.fields["status"] == "ok", m.fields.get("reason")
    assert m.fields["rel_err"] <= m.fields["tolerance"]


def test_every_framework_is_covered() -> None:
    for kernel in SIZES:
        frameworks = {i.framework for i in implementations(kernel, device="cpu")}
        expected = ({"numpy", "jax", "torch"} | ({"numba"} if kernel != "fft" else set())
                    | ({"python"} if kernel == "monte_carlo_pi" else set()))
        assert frameworks == expected, kernel


def test_matmul_above_max_size_is_skipped() -> None:
    case = Case("matmul", "default", 512, "float64")
    m = run("matmul", "numba", "njit_naive", case)
    assert m.fields["status"] == "skipped"
    assert "capped at size 256" in m.fields["reason"]


def test_fft_rejects_non_power_of_two() -> None:
    spec = get_kernel("fft")
    with pytest.raises(ValueError, match="powers of two"):
        spec.cases(sizes=[1000])
    assert {c.size for c in spec.cases(sizes=[2048], variants=["2d"])} == {2048}
    x = spec.make_inputs(Case("fft", "2d", 2048, "complex64"), np.random.default_rng(0))["x"]
    assert x.shape == (32, 64) and x.dtype == np.complex64


@pytest.mark.parametrize("framework", ["numpy", "numba", "jax", "torch"])
def test_monte_carlo_draws_fresh_samples(framework: str) -> None:
    """Successive calls of one build must differ: a reused key or stream is a cached answer."""
    from gpubench.spec import BuildContext

    backend = cpu_backend(framework)
    case = Case("monte_carlo_pi", "default", 1 << 16, "float32")
    for impl in implementations("monte_carlo_pi", framework, "cpu"):
        call = impl.builder(BuildContext(case, backend, {}, {}, seed=1234))
        estimates = [float(np.asarray(backend.to_host(call()))) for _ in range(3)]
        assert len(set(estimates)) == 3, (impl.name, estimates)
        assert all(abs(e - math.pi) < 0.05 for e in estimates), (impl.name, estimates)


def test_monte_carlo_check_is_statistical() -> None:
    spec = get_kernel("monte_carlo_pi")
    case = Case("monte_carlo_pi", "default", 1 << 20, "float64")
    sigma = 4 * math.sqrt(math.pi / 4 * (1 - math.pi / 4) / case.size)
    assert spec.tolerance(case) == pytest.approx(6 * sigma / math.pi)
    assert not spec.check(case, 3.0, math.pi).passed
    assert not spec.check(case, math.pi + 7 * sigma, math.pi).passed
    assert not spec.check(case, float("nan"), math.pi).passed
    assert spec.check(case, np.float32(math.pi + 5 * sigma), math.pi).passed
    assert spec.check(case, np.asarray(math.pi - 5 * sigma), math.pi).passed


# -- scipy.fft against cupyx.scipy.fft: the drop-in API ---------------------------


@pytest.mark.parametrize("variant", ["1d", "2d"])
def test_scipy_fft_keeps_single_precision_and_passes_the_shared_check(variant: str) -> None:
    """scipy.fft transforms complex64 in complex64 (numpy.fft computes in double), and
    its result meets the same complex128 reference as every other row."""
    from gpubench.spec import BuildContext

    spec, case = get_kernel("fft"), Case("fft", variant, 4096, "complex64")
    backend = cpu_backend("numpy")
    impl = next(i for i in implementations("fft", "numpy", "cpu") if i.name == "scipy_fft")
    inputs = spec.make_inputs(case, np.random.default_rng(1))
    got = impl.builder(BuildContext(case, backend, inputs, {}, seed=1))()
    assert got.dtype == np.complex64 and got.shape == inputs["x"].shape
    ref = spec.reference(case, inputs)
    assert spec.check(case, got, ref).passed
    # the check bites: the inverse transform, or fft along one axis for fftn, fails it
    assert not spec.check(case, np.fft.ifft(inputs["x"]) * case.size, ref).passed
    if variant == "2d":
        assert not spec.check(case, np.fft.fft(inputs["x"]), ref).passed


@pytest.mark.parametrize("variant", ["1d", "2d"])
def test_cupyx_scipy_fft_calls_the_scipy_api_of_cupyx(variant: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a GPU: a stand-in ``cupyx.scipy.fft`` (SciPy's functions on host arrays)
    shows the builder calls fft for 1d and fftn for 2d on the case's input, and the
    result passes the shared check."""
    import sys
    import types

    import scipy.fft

    from gpubench.spec import BuildContext

    called: list[str] = []
    fake = types.ModuleType("cupyx.scipy.fft")
    for name in ("fft", "fftn"):
        def fn(x, _name=name):
            called.append(_name)
            return getattr(scipy.fft, _name)(x)
        setattr(fake, name, fn)
    parent, sub = types.ModuleType("cupyx"), types.ModuleType("cupyx.scipy")
    parent.scipy, sub.fft = sub, fake  # type: ignore[attr-defined]
    for mod in (parent, sub, fake):
        monkeypatch.setitem(sys.modules, mod.__name__, mod)
    spec, case = get_kernel("fft"), Case("fft", variant, 1024, "complex128")
    impl = next(i for i in implementations("fft", "cupy", "gpu") if i.name == "cupyx_scipy_fft")
    inputs = spec.make_inputs(case, np.random.default_rng(2))
    got = impl.builder(BuildContext(case, None, inputs, {}, seed=2))()
    assert called == ["fft" if variant == "1d" else "fftn"]
    assert spec.check(case, got, spec.reference(case, inputs)).passed
