"""The caller's clock in rounds: a transient no longer moves a row.

A stand-in GPU on a fake clock makes every call three times slower for a burst of
time, as the H100 runs did to whole rows (288 against 82-97 µs). Taken back to back, a
row's samples all fall inside such a burst; taken in rounds, one round does, and a row
still off after its rounds (its implementation's smaller sizes and its own device time
say so) gets more rounds until the burst is outvoted. Every sample is kept, and the
samples file still matches each row through the report's loader.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import _plugin

from gpubench import results
from gpubench.backends.base import Backend, Facts
from gpubench.backends.numpy.adapter import NumpyCPU
from gpubench.harness import (
    CallerClock,
    Settings,
    caller_clocks,
    measure,
    recheck_reason,
)
from gpubench.spec import Case, Implementation, get_kernel

CALL_S = 10e-6  # one call's host time on the stand-in
WAIT_S = 5e-6  # the device-wide wait after the calls
#: the caller's clock as it was before rounds: one run of sync samples, then one of
#: pipelined samples, each at least 6 and at most 15 ms, no re-measurement
BACK_TO_BACK = Settings(caller_rounds=1, caller_round_gap_s=0.0, caller_max_rounds=1,
                        caller_settle_s=0.0)


class _Clock:
    """A fake host clock: only the stand-in's calls and waits move it."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Transient(Backend):
    """A stand-in GPU whose calls run ``slow`` times longer for ``burst_s`` seconds from
    the first batch of more than one call (the pipelined clock's untimed batch): the
    moment the old clock began the samples a verdict ranks."""

    device = "gpu"
    facts = Facts(caller_timer="fake clock+wait")

    def __init__(self, clock: _Clock, burst_s: float, slow: float = 3.0) -> None:
        self.clock, self.burst_s, self.slow = clock, burst_s, slow
        self.in_flight = 0
        self.burst_from: float | None = None
        self.settled = 0
        #: the fake time each batch of more than one call ended (after its wait)
        self.batch_ends: list[float] = []

    def call(self) -> None:
        self.in_flight += 1
        if self.in_flight == 2 and self.burst_from is None:
            self.burst_from = self.clock.t
        burst = (self.burst_from is not None
                 and self.clock.t < self.burst_from + self.burst_s)
        self.clock.t += CALL_S * (self.slow if burst else 1.0)

    def device_sync(self, result) -> None:
        self.clock.t += WAIT_S
        if self.in_flight > 1:
            self.batch_ends.append(self.clock.t)
        self.in_flight = 0

    def before_caller_clock(self) -> None:
        self.settled += 1


def _clocks(settings: Settings, burst_s: float, floor_s: float | None = None):
    clock = _Clock()
    backend = _Transient(clock, burst_s)
    fields, samples, _ = caller_clocks(backend.call, backend, settings, device_s=CALL_S,
                                       floor_s=floor_s, clock=clock)
    # what a pipelined call costs outside the burst: the call, and its share of the wait
    quiet = CALL_S + WAIT_S / fields["pipelined_k"]
    return fields, samples, fields["pipelined_median_s"] / quiet


def test_a_burst_shorter_than_the_gap_between_rounds_hits_one_round():
    fields, samples, ratio = _clocks(BACK_TO_BACK, burst_s=0.02)
    assert ratio > 2.5  # back to back: every pipelined sample inside the burst
    spread = Settings(caller_rounds=3, caller_round_gap_s=0.02, caller_max_rounds=3)
    fields, samples, ratio = _clocks(spread, burst_s=0.02)
    assert abs(ratio - 1) < 0.10, ratio
    assert fields["caller_rounds"] == 3
    # the burst is in the samples, not thrown away: the first round's read ~3x
    assert max(samples["pipelined"]) > 2.5 * min(samples["pipelined"])


def test_a_row_still_off_after_its_rounds_is_re_measured_until_the_burst_is_outvoted():
    # a burst longer than all three planned rounds: they all read ~3x
    settings = Settings(caller_rounds=3, caller_round_gap_s=0.005, caller_max_rounds=3)
    fields, _, ratio = _clocks(settings, burst_s=0.05, floor_s=CALL_S)
    assert ratio > 2.5 and fields["caller_rounds"] == 3
    settings = Settings(caller_rounds=3, caller_round_gap_s=0.005, caller_max_rounds=7,
                        caller_recheck_gap_s=0.03)
    fields, samples, ratio = _clocks(settings, burst_s=0.05, floor_s=CALL_S)
    assert abs(ratio - 1) < 0.10, ratio
    assert 3 < fields["caller_rounds"] <= 7
    # all rounds' samples stay, the burst's too
    assert fields["pipelined_samples"] == len(samples["pipelined"])
    assert sum(s > 2.5 * CALL_S for s in samples["pipelined"]) >= 6


def test_without_a_floor_the_first_size_is_judged_on_its_sync_clock_only():
    # the burst also slows the sync samples: nothing says the row is off, so it stands
    settings = Settings(caller_rounds=3, caller_round_gap_s=0.005, caller_max_rounds=7)
    fields, _, ratio = _clocks(settings, burst_s=0.05, floor_s=None)
    assert fields["caller_rounds"] == 3 and ratio > 2


def test_rounds_keep_every_sample_and_keep_their_gap():
    clock = _Clock()
    backend = _Transient(clock, burst_s=0.0)
    settings = Settings(caller_rounds=3, caller_min_samples=6, caller_round_gap_s=0.01,
                        caller_max_time_s=0.006)
    cc = CallerClock(backend.call, backend, settings, clock)
    cc.run()
    f = cc.fields()
    assert f["caller_rounds"] == cc.rounds == 3 and cc.least == 2
    # quiet samples meet the spread target at once: the least per round, every one kept
    assert f["sync_samples"] == len(cc.sync) == 6
    assert f["pipelined_samples"] == len(cc.pipe) == 6
    assert f["pipelined_median_s"] == pytest.approx(float(np.median(cc.pipe)))
    # the pipelined batches (and the untimed one before them) end in three groups, the
    # groups at least the gap apart; inside a group, one batch after another
    ends = np.diff(backend.batch_ends)
    assert len(backend.batch_ends) == 1 + 6
    assert (ends >= 0.01).sum() == 2
    assert backend.settled == 1  # no interlude: one settling call before the rounds


def test_calls_too_long_to_batch_keep_the_gap_before_each_round():
    clock = _Clock()
    backend = _Transient(clock, burst_s=0.0)
    settings = Settings(caller_rounds=3, caller_min_samples=6, caller_round_gap_s=0.01,
                        pipeline_batch_s=1e-6)  # every call "long": k = 1
    cc = CallerClock(backend.call, backend, settings, clock)
    cc.run()
    f = cc.fields()
    assert f["pipelined_k"] == 1 and f["caller_rounds"] == 3
    assert len(cc.sync) == 6 and cc.samples()["pipelined"] == cc.sync
    assert clock.t >= 2 * 0.01  # two gaps filled by untimed calls (15 µs samples)


def test_the_interlude_runs_between_the_first_two_rounds_and_the_clock_settles_after():
    clock = _Clock()
    backend = _Transient(clock, burst_s=0.0)
    seen: list[int] = []
    cc = CallerClock(backend.call, backend, Settings(caller_rounds=3), clock)
    cc.run(interlude=lambda: seen.append(cc.rounds), device_s=lambda: CALL_S)
    assert seen == [1] and cc.rounds == 3
    assert backend.settled == 2  # before the first round, and after the device clock


def test_one_round_is_the_old_clock():
    clock = _Clock()
    backend = _Transient(clock, burst_s=0.0)
    cc = CallerClock(backend.call, backend, BACK_TO_BACK, clock)
    cc.run()
    assert cc.rounds == 1 and cc.least == 6
    assert len(cc.pipe) >= 6


@pytest.mark.parametrize(("p", "s", "d", "floor", "off"), [
    (15e-6, 10e-6, 1e-6, None, False),       # at the factor: not over it
    (15.1e-6, 10e-6, 1e-6, None, True),      # pipelined over 1.5x its own sync median
    (100e-6, 200e-6, 1e-6, None, False),     # first size: the device time says nothing
    (15e-6, 20e-6, 1e-6, 10e-6, False),      # 1.5x the floor
    (15.1e-6, 20e-6, 1e-6, 10e-6, True),     # over 1.5x the floor
    (150e-6, 200e-6, 100e-6, 10e-6, False),  # the device work is the bound
    (151e-6, 200e-6, 100e-6, 10e-6, True),
    (151e-6, 200e-6, None, 10e-6, True),     # no device median: the floor alone
    (151e-6, 200e-6, 100e-6, 0.0, False),    # no floor: the sync rule alone
])
def test_recheck_rule_at_its_edges(p, s, d, floor, off):
    assert bool(recheck_reason(p, s, d, floor, 1.5)) is off


@pytest.mark.parametrize("factor", [0.0, float("inf"), float("nan")])
def test_recheck_rule_off(factor):
    assert recheck_reason(1.0, 1e-6, 1e-6, 1e-6, factor) == ""


# -- through measure(): the device clock between the rounds ------------------------------


class _RecordingGPU(NumpyCPU):
    """Host NumPy presented as a GPU, noting the device clock's samples and the caller's
    clock settling (before its first round, and again after the device clock)."""

    device = "gpu"
    facts = NumpyCPU.facts.but(caller_timer="perf_counter+record")

    def __init__(self) -> None:
        self.events: list[str] = []

    def time_call(self, fn):
        self.events.append("device")
        return super().time_call(fn)

    def before_caller_clock(self) -> None:
        self.events.append("settle")


def _measure_add(settings: Settings):
    spec = get_kernel("vector_add")
    case = Case("vector_add", "default", 4096, "float64", {})
    backend = _RecordingGPU()
    host = spec.make_inputs(case, np.random.default_rng(0))

    def builder(ctx):
        a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
        return lambda: np.add(a, b, out=c)

    impl = Implementation("vector_add", "numpy", "add", builder)
    m = measure(spec, impl, case, backend, settings, host, spec.reference(case, host))
    return m, backend.events


def test_measure_takes_the_device_clock_between_the_first_two_caller_rounds():
    m, events = _measure_add(Settings(warmup=1, min_samples=3, max_time_s=0.005,
                                      caller_rounds=3, caller_round_gap_s=0.001,
                                      caller_max_time_s=0.003))
    assert m.fields["status"] == "ok", m.fields
    assert m.fields["caller_rounds"] >= 3
    # settle, round 1, the device clock's samples, settle again, rounds 2 and 3
    assert events[0] == "settle" and events.count("settle") == 2
    second = events.index("settle", 1)
    assert set(events[1:second]) == {"device"} and second - 1 == len(m.samples) >= 3
    assert m.fields["samples"] == len(m.samples)
    assert m.fields["sync_samples"] == len(m.caller["sync"])
    assert m.fields["pipelined_samples"] == len(m.caller["pipelined"])


def test_measure_with_one_round_keeps_the_device_clock_first():
    m, events = _measure_add(Settings(warmup=1, min_samples=3, max_time_s=0.005,
                                      caller_rounds=1, caller_max_time_s=0.003))
    assert m.fields["status"] == "ok" and m.fields["caller_rounds"] == 1
    assert events == ["device"] * len(m.samples) + ["settle"]


# -- through the runner: rows, samples file, the report's loader ---------------------------


@pytest.fixture
def rounds_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    return _plugin(monkeypatch, "rounds_plugin")


FAST = {"warmup": 1, "min_samples": 3, "max_time_s": 0.01, "caller_max_time_s": 0.006,
        "caller_round_gap_s": 0.002, "caller_recheck_gap_s": 0.004}


def _run(tmp_path, name: str, harness=None):
    from gpubench.runner import run_backend

    cfg = {"threads": [1], "harness": {**FAST, **(harness or {})}, "gpu_modes": ["hot"],
           "kernels": {"vector_add": {"sizes": [1024, 16384, 262144],
                                      "dtypes": ["float32"]}}}
    csv, samples = tmp_path / f"{name}.csv", tmp_path / f"{name}.samples.csv"
    run_backend("rounds-gpu", cfg, 1, str(csv), str(samples))
    return results.read_timings(csv), samples


def test_every_round_is_in_the_samples_file_and_matches_its_row(rounds_plugin, tmp_path):
    from gpubench.report import stats

    df, samples_path = _run(tmp_path, "t")
    ok = df[df["status"] == "ok"]
    assert len(ok) == 6, df[["implementation", "size", "status", "reason"]]
    assert (ok["caller_rounds"] >= 3).all()
    assert (ok["pipelined_samples"] >= 6).all() and (ok["sync_samples"] >= 6).all()
    loaded = stats.load_samples(samples_path, df)
    for index in ok.index:
        for clock, n in (("device", "samples"), ("sync", "sync_samples"),
                         ("pipelined", "pipelined_samples")):
            got = loaded.get(index, clock)
            assert got is not None, (index, clock)
            assert len(got) == ok.loc[index, n]
    raw = results.read_samples(samples_path)
    assert len(raw) == int(ok[["samples", "sync_samples", "pipelined_samples"]]
                           .to_numpy().sum())


def test_one_round_with_no_recheck_is_the_old_row(rounds_plugin, tmp_path):
    df, _ = _run(tmp_path, "old", {"caller_rounds": 1, "caller_round_gap_s": 0.0,
                                   "caller_max_rounds": 1})
    ok = df[df["status"] == "ok"]
    assert len(ok) == 6 and (ok["caller_rounds"] == 1).all()


def test_the_worker_keeps_each_implementations_least_pipelined_median():
    from gpubench.worker import Floors

    floors = Floors()
    item = {"kernel": "vector_add", "variant": "default", "dtype": "float32",
            "implementation": "jit", "mode": "hot", "size": 1024}
    assert floors.get(item) is None  # first size: no floor yet
    floors.update(item, {"status": "ok", "pipelined_median_s": 50e-6})
    floors.update({**item, "size": 4096}, {"status": "ok", "pipelined_median_s": 40e-6})
    floors.update({**item, "size": 16384}, {"status": "ok", "pipelined_median_s": 60e-6})
    # a failed or unmeasured row says nothing about the floor
    floors.update({**item, "size": 65536}, {"status": "wrong_result",
                                            "pipelined_median_s": 1e-6})
    floors.update({**item, "size": 65536}, {"status": "ok"})
    assert floors.get({**item, "size": 1 << 20}) == 40e-6
    # another dtype, implementation or mode has its own
    assert floors.get({**item, "dtype": "float64"}) is None
    assert floors.get({**item, "implementation": "pmap"}) is None
    assert floors.get({**item, "mode": "cold"}) is None


def test_calls_longer_than_the_gap_get_no_filler():
    clock = _Clock()
    backend = _Transient(clock, burst_s=0.0)
    settings = Settings(caller_rounds=3, caller_min_samples=6, caller_round_gap_s=1e-5,
                        pipeline_batch_s=1e-6,  # k = 1, and one call (15 µs) > the gap
                        caller_settle_s=0.0)
    cc = CallerClock(backend.call, backend, settings, clock)
    cc.run()
    calls = clock.t / (CALL_S + WAIT_S)
    assert cc.k == 1 and round(calls) == 1 + len(cc.sync)  # the settling call and samples


def test_each_rounds_sync_samples_follow_untimed_settling_calls():
    """caller_settle_s of untimed sync calls before every round's sync samples: the first
    sync calls after the pipelined part or the device clock are not the samples'."""
    clock = _Clock()
    backend = _Transient(clock, burst_s=0.0)
    settle = 50 * (CALL_S + WAIT_S)
    base = dict(caller_rounds=3, caller_min_samples=6, caller_round_gap_s=0.0,
                caller_max_rounds=3, pipeline_batch_s=1e-6)
    quiet = CallerClock(backend.call, backend, Settings(**base, caller_settle_s=0.0), clock)
    quiet.run()
    before = clock.t
    settled = CallerClock(backend.call, backend, Settings(**base, caller_settle_s=settle),
                          clock)
    settled.run()
    extra = (clock.t - before - before) / (CALL_S + WAIT_S)
    assert len(settled.sync) == len(quiet.sync)  # no sample more, none dropped
    assert round(extra) >= 3 * 50 - 3  # about 50 settling calls before each of 3 rounds


class _ApartGPU(_RecordingGPU):
    """A backend whose device clock must not come between the caller's rounds (JAX's
    CUPTI)."""

    facts = _RecordingGPU.facts.but(device_clock_apart=True)


def test_a_backend_that_keeps_its_device_clock_apart_gets_it_before_every_round():
    spec = get_kernel("vector_add")
    case = Case("vector_add", "default", 4096, "float64", {})
    backend = _ApartGPU()
    host = spec.make_inputs(case, np.random.default_rng(0))
    impl = Implementation("vector_add", "numpy", "add",
                          lambda ctx: lambda: np.add(ctx.inputs["a"], ctx.inputs["b"],
                                                     out=ctx.out("c")))
    m = measure(spec, impl, case, backend,
                Settings(warmup=1, min_samples=3, max_time_s=0.005, caller_rounds=3,
                         caller_round_gap_s=0.001, caller_max_time_s=0.003),
                host, spec.reference(case, host))
    assert m.fields["status"] == "ok" and m.fields["caller_rounds"] >= 3
    # the device clock's samples, one settle, then the caller's three rounds
    assert backend.events == ["device"] * len(m.samples) + ["settle"]


class _AfterDetach(Backend):
    """A stand-in GPU whose calls run 3x longer for ``transient_s`` after the caller's
    clock lets the device clock's profiler go, and which asks for ``settle_s`` of untimed
    calls after that."""

    device = "gpu"
    facts = Facts(caller_timer="fake clock+wait")

    def __init__(self, clock: _Clock, transient_s: float, settle_s: float) -> None:
        self.clock, self.transient_s, self.settle_s = clock, transient_s, settle_s
        self.detached_at: float | None = None

    def call(self) -> None:
        slow = self.detached_at is not None and self.clock.t < self.detached_at + self.transient_s
        self.clock.t += CALL_S * (3.0 if slow else 1.0)

    def device_sync(self, result) -> None:
        self.clock.t += WAIT_S

    def before_caller_clock(self) -> float:
        self.detached_at = self.clock.t
        return self.settle_s


@pytest.mark.parametrize("settle_s, slowed", [(0.0, True), (0.004, False)])
def test_the_caller_clock_makes_the_untimed_calls_its_backend_asks_for(settle_s, slowed):
    clock = _Clock()
    backend = _AfterDetach(clock, transient_s=0.002, settle_s=settle_s)
    fields, samples, _ = caller_clocks(backend.call, backend, BACK_TO_BACK, clock=clock)
    first = samples["sync"][0] / (CALL_S + WAIT_S)
    assert (first > 2.0) is slowed, first
    if not slowed:
        assert abs(fields["sync_median_s"] / (CALL_S + WAIT_S) - 1) < 1e-9


def test_the_energy_reading_lets_the_device_clocks_profiler_go_first():
    from gpubench.harness import measure_energy

    backend = _RecordingGPU()
    measure_energy(lambda: None, backend, Settings(), 1)
    assert backend.events[:1] == ["settle"]
