"""The harness: stopping rule, poisoning, first-call separation, statistics."""

from __future__ import annotations

import numpy as np
import pytest

from gpubench import harness
from gpubench.backends.numpy.adapter import NumpyCPU
from gpubench.harness import Settings, measure, summarize, time_samples
from gpubench.spec import Case, Implementation, get_kernel

SPEC = get_kernel("vector_add")
CASE = Case("vector_add", "default", 1000, "float64", {})


QUICK = Settings(max_time_s=0.05, min_samples=3, warmup=1)


def _run(builder, settings=QUICK):
    backend = NumpyCPU()
    backend.start(1)
    inputs = SPEC.make_inputs(CASE, np.random.default_rng(0))
    impl = Implementation("vector_add", "numpy", "test", builder)
    return measure(SPEC, impl, CASE, backend, settings, inputs, SPEC.reference(CASE, inputs))


def test_inputs_are_random_distinct_and_nonzero():
    inputs = SPEC.make_inputs(CASE, np.random.default_rng(0))
    a, b = inputs["a"], inputs["b"]
    assert np.all(a != 0) and np.all(b != 0)
    assert not np.shares_memory(a, b) and not np.array_equal(a, b)
    other = SPEC.make_inputs(Case("vector_add", "default", 1000, "float32", {}),
                             np.random.default_rng(1))
    assert other["a"].dtype == np.float32


def test_ok_row_has_statistics_and_first_call_apart():
    calls = []

    def builder(ctx):
        a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

        def call():
            calls.append(1)
            np.add(a, b, out=c)

        return call

    m = _run(builder)
    f = m.fields
    assert f["status"] == "ok", f
    assert f["samples"] == len(m.samples) >= 3
    assert f["min_s"] <= f["q1_s"] <= f["median_s"] <= f["q3_s"] <= f["max_s"]
    assert f["first_call_s"] > 0 and f["rel_err"] <= f["tolerance"]
    # first call + warm-up + samples, nothing hidden
    assert len(calls) == 1 + 1 + len(m.samples)
    assert f["gbps"] == pytest.approx(f["bytes"] / f["median_s"] / 1e9)


def test_unwritten_output_is_caught_by_poison():
    m = _run(lambda ctx: (lambda: None))
    assert m.fields["status"] == "wrong_result"
    assert "not finite" in m.fields["reason"]


def test_wrong_values_are_caught_and_not_timed():
    def builder(ctx):
        a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

        def call():
            np.subtract(a, b, out=c)

        return call

    m = _run(builder)
    assert m.fields["status"] == "wrong_result"
    assert m.samples == []
    assert m.fields["rel_err"] > m.fields["tolerance"]


def test_exception_becomes_error_row():
    def builder(ctx):
        def call():
            raise ValueError("boom")

        return call

    m = _run(builder)
    assert m.fields["status"] == "error" and "boom" in m.fields["reason"]


def test_an_error_rows_traceback_goes_to_the_log_once(capsys, monkeypatch):
    """The row keeps one line; the step's log gets the frames that raised it, once per
    reason (216 rows failing alike log one traceback)."""
    monkeypatch.setattr(harness, "_TRACEBACKS_LOGGED", set())
    def failing_helper():
        raise PermissionError(13, "Permission denied", "/some/cache/root")

    def builder(ctx):
        def call():
            failing_helper()

        return call

    for _ in range(2):
        assert _run(builder).fields["status"] == "error"
    err = capsys.readouterr().err
    assert err.count("Traceback (most recent call last)") == 1
    assert "failing_helper" in err and "/some/cache/root" in err


def test_memory_error_becomes_skipped_row():
    def builder(ctx):
        raise MemoryError("Unable to allocate 1.0 TiB")

    m = _run(builder)
    assert m.fields["status"] == "skipped" and "out of memory" in m.fields["reason"]


def test_size_beyond_memory_is_skipped_before_running():
    backend = NumpyCPU()
    huge = Case("vector_add", "default", 1 << 45, "float64", {})
    impl = Implementation("vector_add", "numpy", "test", lambda ctx: None)
    m = measure(SPEC, impl, huge, backend, Settings(), {}, None)
    assert m.fields["status"] == "skipped" and "GiB" in m.fields["reason"]


def test_max_size_cap_is_skipped():
    impl = Implementation("vector_add", "numpy", "loop", lambda ctx: None, max_size=10)
    m = measure(SPEC, impl, CASE, NumpyCPU(), Settings(), {}, None)
    assert m.fields["status"] == "skipped" and "capped" in m.fields["reason"]


class _FakeBackend(NumpyCPU):
    """Returns scripted sample times so the stopping rule can be checked exactly."""

    def __init__(self, times):
        self.times = iter(times)

    def time_call(self, fn):
        return None, next(self.times)


def test_stopping_rule_converges_on_quiet_samples():
    samples, stop, _ = time_samples(lambda: None, _FakeBackend([1.0] * 100),
                                    Settings(min_samples=5, target_rel_spread=0.05))
    assert stop == "converged" and len(samples) == 5


def test_stopping_rule_keeps_sampling_noisy_data_until_cap():
    rng = np.random.default_rng(0)
    noisy = list(rng.uniform(1, 3, 1000))
    samples, stop, _ = time_samples(lambda: None, _FakeBackend(noisy),
                                    Settings(min_samples=5, max_samples=50,
                                             target_rel_spread=0.01, max_time_s=1e9))
    assert stop == "max_samples" and len(samples) == 50


def test_summarize():
    s = summarize([1.0, 2.0, 3.0, 4.0])
    assert s["median_s"] == 2.5 and s["min_s"] == 1.0 and s["max_s"] == 4.0
    assert s["iqr_s"] == pytest.approx(1.5) and s["rel_spread"] == pytest.approx(0.6)


def test_warmup_s_keeps_warming_up_until_the_time_has_passed():
    import time

    calls = []

    def builder(ctx):
        a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

        def call():
            start = time.perf_counter()
            time.sleep(0.005)
            np.add(a, b, out=c)
            calls.append((start, time.perf_counter()))

        return call

    m = _run(builder, Settings(max_time_s=0.01, min_samples=3, max_samples=3, warmup=1,
                               warmup_s=0.06))
    assert m.fields["status"] == "ok", m.fields
    warm = calls[1:len(calls) - len(m.samples)]  # after the first call, before samples
    # more calls than the count asked for; the last ends past the time, the one before
    # it ended short of it (so the loop stopped at the first chance)
    assert len(warm) >= 2
    assert warm[-1][1] - warm[0][0] >= 0.06 - 0.001 > warm[-2][1] - warm[0][0] - 0.002
