"""The chunk-parallel host helpers give the same answers as plain NumPy, and the same
answers whatever the thread count (the inputs of a run must not depend on the host)."""

from __future__ import annotations

import numpy as np
import pytest

from gpubench import hostpar
from gpubench.spec import random_array, relative_error


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 1000 elements, so test-sized arrays take the parallel paths."""
    monkeypatch.setattr(hostpar, "CHUNK", 1000)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_random_arrays_do_not_depend_on_the_thread_count(small_chunks, monkeypatch, dtype):
    draws = []
    for threads in (1, 3):
        monkeypatch.setattr(hostpar, "host_threads", lambda t=threads: t)
        draws.append(random_array(np.random.default_rng(7), (5, 1001), dtype, 0.5, 1.5))
    np.testing.assert_array_equal(draws[0], draws[1])
    x = draws[0]
    assert x.dtype == np.dtype(dtype) and x.shape == (5, 1001)
    parts = [x.real, x.imag] if x.dtype.kind == "c" else [x]
    for p in parts:
        assert p.min() >= 0.5 and p.max() < 1.5
        assert abs(float(p.mean()) - 1.0) < 0.02  # uniform, not a constant or a copy
    # each chunk draws from its own stream: no chunk repeats another
    flat = parts[0].reshape(-1)
    assert not np.array_equal(flat[:1000], flat[1000:2000])


def test_elementwise64_and_sums_match_numpy(small_chunks):
    rng = np.random.default_rng(1)
    a = rng.random(4321).astype(np.float32)
    b = rng.random(4321).astype(np.float32)
    got = hostpar.elementwise64(lambda x, y: np.sqrt(x * x + y * y), a, b)
    want = np.sqrt(a.astype(np.float64) ** 2 + b.astype(np.float64) ** 2)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=0)
    assert hostpar.dot64(a, b) == pytest.approx(float(np.dot(a.astype(float), b.astype(float))),
                                                rel=1e-14)
    assert hostpar.sum64(a) == pytest.approx(float(a.astype(float).sum()), rel=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_relative_error_matches_the_norm_formula(small_chunks, dtype):
    rng = np.random.default_rng(2)
    ref = rng.random(5003) + (1j * rng.random(5003) if dtype == "complex64" else 0)
    out = (ref * (1 + 1e-4 * rng.standard_normal(5003))).astype(dtype)
    want = np.linalg.norm(out.astype(ref.dtype) - ref) / np.linalg.norm(ref)
    assert relative_error(out, ref) == pytest.approx(want, rel=1e-10)
    assert relative_error(ref.astype(dtype), ref) < 1e-6
    out[4999] = np.nan
    assert np.isnan(relative_error(out, ref))
    with pytest.raises(ValueError, match="elements"):
        relative_error(out[:10], ref)


def test_a_forked_child_gets_its_own_pool(small_chunks):
    """Parallel work in a child forked after the parent's pool started must not hang."""
    import multiprocessing

    x = np.ones(5000)
    assert hostpar.sum64(x) == 5000.0  # the parent's pool exists now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply_async(hostpar.sum64, (x,)).get(timeout=30) == 5000.0


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_blas_runs_in_the_caller_inside_and_as_before_after():
    """Inside, every BLAS library is held to one thread; after, its own count is back."""
    before = _blas_threads()
    assert before, "NumPy's BLAS is loaded"
    with hostpar.blas_in_caller():
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before


@pytest.mark.parametrize("threads", [1, 3])
def test_matmul64_is_the_float64_product_whatever_the_thread_count(monkeypatch, threads):
    """Row blocks (some partial) give the product of the float64 inputs, bit for bit the
    same at any thread count, and BLAS is held to one thread while they run."""
    monkeypatch.setattr(hostpar, "MATMUL_ROWS", 16)
    monkeypatch.setattr(hostpar, "host_threads", lambda: threads)
    seen: list[list[int]] = []
    matmul = np.matmul

    def spy(x, y, **kw):
        seen.append(_blas_threads())
        return matmul(x, y, **kw)

    rng = np.random.default_rng(3)
    a = random_array(rng, (70, 50), "float32", -1.0, 1.0)
    b = random_array(rng, (50, 40), "float32", -1.0, 1.0)
    monkeypatch.setattr(hostpar.np, "matmul", spy)
    got = hostpar.matmul64(a, b)
    monkeypatch.setattr(hostpar.np, "matmul", matmul)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-13,
                               atol=1e-13)
    assert len(seen) == 5 and all(s and set(s) == {1} for s in seen)
    serial = np.vstack([a[s:s + 16].astype(np.float64) @ b.astype(np.float64)
                        for s in range(0, 70, 16)])
    assert np.array_equal(got, serial)


def test_the_harness_checks_a_result_with_blas_in_the_caller():
    from gpubench import harness

    class Spec:
        def check(self, case, got, ref):
            return _blas_threads()

    assert set(harness._check(Spec(), None, None, None)) == {1}
