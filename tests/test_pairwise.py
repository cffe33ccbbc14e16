"""The Hodges–Lehmann interval without the m*n differences in memory: the same floats as
partitioning all of them (the report's comparisons rest on them; the report's analysis
selects instead of partitioning)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpubench.report import stats

samples = st.lists(st.floats(1e-7, 1e-2, allow_nan=False, allow_infinity=False),
                   min_size=1, max_size=40)
# ties within and across the two samples: values from a short grid
tied = st.lists(st.sampled_from([1e-6, 2e-6, 2e-6 + 1e-12, 3e-6, 5e-6]), min_size=1,
                max_size=40)


def _all(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.sort(np.subtract.outer(x, y).ravel())


@settings(max_examples=200, deadline=None)
@given(st.one_of(samples, tied), st.one_of(samples, tied), st.data())
def test_every_kth_difference_is_the_partitions(a, b, data):
    x, y = np.log(np.array(a)), np.log(np.array(b))
    ref = _all(x, y)
    d = stats.PairwiseDifferences(x, y, seed=data.draw(st.integers(0, 2**32 - 1)))
    ks = data.draw(st.lists(st.integers(0, ref.size - 1), min_size=1, max_size=8))
    for k in ks + [0, ref.size - 1]:
        assert d.kth(k) == ref[k], k
    assert d.median() == np.median(ref)


@settings(max_examples=60, deadline=None)
@given(st.one_of(samples, tied), st.one_of(samples, tied))
def test_the_interval_is_the_one_from_all_pairs(a, b):
    new, base = np.array(a), np.array(b)
    x, y = np.log(new), np.log(base)
    diffs = np.subtract.outer(x, y).ravel()
    c = stats.excluded_per_side(x.size, y.size, stats.ALPHA)
    est, lo, hi = stats.ratio_interval(new, base)
    assert est == float(np.exp(np.median(diffs)))
    if c == 0:
        assert (lo, hi) == (0.0, math.inf)
    else:
        ends = np.partition(diffs, (c - 1, diffs.size - c))
        assert (lo, hi) == (float(np.exp(ends[c - 1])), float(np.exp(ends[diffs.size - c])))


def test_two_thousand_samples_each_give_the_same_interval():
    rng = np.random.default_rng(7)
    new = rng.lognormal(np.log(1e-5), 0.1, 2000)
    base = rng.lognormal(np.log(1.1e-5), 0.1, 1800)
    x, y = np.log(new), np.log(base)
    diffs = np.subtract.outer(x, y).ravel()
    c = stats.excluded_per_side(x.size, y.size, stats.ALPHA)
    ends = np.partition(diffs, (c - 1, diffs.size - c))
    assert stats.ratio_interval(new, base) == (
        float(np.exp(np.median(diffs))), float(np.exp(ends[c - 1])),
        float(np.exp(ends[diffs.size - c])))


def test_a_rank_outside_the_differences_is_refused():
    d = stats.PairwiseDifferences(np.zeros(2), np.zeros(3))
    with pytest.raises(IndexError):
        d.kth(6)
