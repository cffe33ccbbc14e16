"""References shared between steps: computed once, loaded after, never trusted when
unreadable, never cached when the reference is an input itself."""

from __future__ import annotations

import numpy as np
import pytest

from gpubench import refcache
from gpubench.spec import Case, get_kernel


class Counting:
    """A kernel spec wrapper that counts reference() calls."""

    def __init__(self, name: str) -> None:
        self.spec, self.calls = get_kernel(name), 0

    def reference(self, case, inputs):
        self.calls += 1
        return self.spec.reference(case, inputs)


@pytest.fixture(autouse=True)
def always_cache(monkeypatch):
    monkeypatch.setattr(refcache, "MIN_SECONDS", 0.0)


@pytest.mark.parametrize("kernel,variant,size,dtype", [
    ("matmul", "default", 48, "float64"),   # an array
    ("linalg", "svd", 24, "float32"),       # a dict of arrays
])
def test_second_step_loads_what_the_first_computed(tmp_path, kernel, variant, size, dtype):
    spec = Counting(kernel)
    case = Case(kernel, variant, size, dtype, dict(spec.spec.default_params))
    inputs = spec.spec.make_inputs(case, np.random.default_rng(1))
    first = refcache.reference(spec, case, inputs, 1, tmp_path)
    again = refcache.reference(spec, case, inputs, 1, tmp_path)
    assert spec.calls == 1
    if isinstance(first, dict):
        assert first.keys() == again.keys()
        for k in first:
            np.testing.assert_array_equal(first[k], again[k])
    else:
        np.testing.assert_array_equal(first, again)
    # another seed is another reference
    refcache.reference(spec, case, inputs, 2, tmp_path)
    assert spec.calls == 2 and len(list(tmp_path.glob("*.npz"))) == 2


def test_a_corrupt_file_is_recomputed_and_replaced(tmp_path):
    spec = Counting("matmul")
    case = Case("matmul", "default", 32, "float32", {})
    inputs = spec.spec.make_inputs(case, np.random.default_rng(1))
    good = refcache.reference(spec, case, inputs, 1, tmp_path)
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(b"not a zip file")
    again = refcache.reference(spec, case, inputs, 1, tmp_path)
    assert spec.calls == 2
    np.testing.assert_array_equal(good, again)
    assert refcache._load(path) is not None  # replaced by a readable file


def test_an_input_that_is_its_own_reference_is_not_cached(tmp_path):
    spec = Counting("transfer")
    case = Case("transfer", "h2d_pageable", 64, "float32", {})
    inputs = spec.spec.make_inputs(case, np.random.default_rng(1))
    assert refcache.reference(spec, case, inputs, 1, tmp_path) is inputs["x"]
    assert not list(tmp_path.glob("*.npz"))


def test_no_cache_dir_computes_every_time():
    spec = Counting("matmul")
    case = Case("matmul", "default", 16, "float32", {})
    inputs = spec.spec.make_inputs(case, np.random.default_rng(1))
    refcache.reference(spec, case, inputs, 1, None)
    refcache.reference(spec, case, inputs, 1, None)
    assert spec.calls == 2


def test_a_reference_leaves_no_blas_threads_running():
    """The reference (a LAPACK eigensolver here) runs with BLAS held to the caller's
    thread, so no BLAS threads spin on the cores of the samples that follow."""
    from threadpoolctl import threadpool_info

    seen: list[list[int]] = []

    class Spy(Counting):
        def reference(self, case, inputs):
            seen.append([i["num_threads"] for i in threadpool_info()
                         if i["user_api"] == "blas"])
            return super().reference(case, inputs)

    spec = Spy("linalg")
    case = Case("linalg", "eigh", 24, "float64", {})
    inputs = spec.spec.make_inputs(case, np.random.default_rng(1))
    refcache.reference(spec, case, inputs, 1, None)
    assert seen and seen[0] and set(seen[0]) == {1}
