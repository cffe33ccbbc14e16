"""The spread rounds: a short row's samples span seconds of its step.

On the H100 machine the host's speed changes in regimes of 0.5-4 s. A stand-in on a
fake clock alternates fast and slow regimes (a third fast, two thirds slow): measured
back to back, a row reads the regime it started in (two runs disagree by the slow
factor); with spread rounds, rows started in either regime end within a few % of each
other. The keep rule is tested at its edges, and the runner's rows and samples file
through the report's loader.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from conftest import _plugin
from hypothesis import given, settings
from hypothesis import strategies as st

from gpubench import results
from gpubench.backends.base import Backend, Facts
from gpubench.spread import WEIGHT, Spread, keep_reason
from gpubench.timing import Settings
from gpubench.worker import spread_result

CALL_S = 10e-6
WAIT_S = 5e-6
SLOW = 1.8  # the slow regime's factor (NumPy at 1,024 elements: 0.6 against 1.1 µs)


class _Clock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class _Regimes(Backend):
    """A stand-in whose host work runs SLOW times longer for the last two thirds of
    every ``period_s`` of fake time (its device is a fixed wait). One process on the
    H100 machine read the slow regime about two thirds of 30 s (a half-and-half mix has
    no stable median: there any statistic of its samples flips between the two)."""

    framework = "regimes"
    facts = Facts(timer="fake", caller_timer="fake clock+wait")

    def __init__(self, clock: _Clock, period_s: float = 1.5, device: str = "gpu",
                 fail_after: int | None = None, free: int | None = None) -> None:
        self.clock, self.period_s, self.device = clock, period_s, device
        self.free = free
        self.calls = 0
        self.fail_after = fail_after
        self.sample_times: list[float] = []

    def free_memory(self) -> int | None:
        return self.free

    def slow(self) -> bool:
        return self.clock.t % self.period_s >= self.period_s / 3

    def call(self) -> None:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("device lost")
        self.clock.t += CALL_S * (SLOW if self.slow() else 1.0)

    def device_sync(self, result) -> None:
        self.clock.t += WAIT_S

    def block(self, result) -> None:
        pass

    def time_call(self, fn):
        t0 = self.clock.t
        self.sample_times.append(t0)
        result = fn()
        return result, self.clock.t - t0


def _pipelined(backend: _Regimes, k: int, n: int) -> list[float]:
    """n pipelined samples back to back, as a row's rounds take them (~ms)."""
    out = []
    for _ in range(n):
        t0 = backend.clock.t
        for _ in range(k):
            backend.call()
        backend.device_sync(None)
        out.append((backend.clock.t - t0) / k)
    return out


SPREAD = Settings(caller_spread_s=20.0, caller_spread_rounds=24)
FIELDS = {"status": "ok", "pipelined_median_s": CALL_S, "pipelined_k": 8}


def _row(start: float, spread: bool, settings: Settings = SPREAD, scale: float = 1.0) -> float:
    """A row's pipelined median when its first samples start at fake time ``start``.

    ``scale`` shrinks the fake world's times alike (the start, the regimes' period, the
    spread window): the rounds place their samples relative to ``caller_spread_s``, so the
    row sees the same regimes, with ``scale`` times the untimed calls between them."""
    clock = _Clock(start * scale)
    backend = _Regimes(clock, period_s=1.5 * scale)
    settings = dataclasses.replace(settings, caller_spread_s=settings.caller_spread_s * scale)
    first = _pipelined(backend, 8, 9)
    if not spread:
        return float(np.median(first))
    s = Spread(backend, settings, clock=clock)
    assert s.keep(0, backend.call, FIELDS, first, "hot", 1024)
    ended = []
    s.run(ended.append)
    (row,) = ended
    return float(np.median(row.first + row.new))


def test_back_to_back_a_row_reads_the_regime_it_started_in():
    fast, slow = _row(0.1, spread=False), _row(1.0, spread=False)
    assert slow / fast == pytest.approx(SLOW, rel=0.05)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.0, 40.0), st.floats(0.0, 40.0))
def test_spread_rows_agree_whatever_regime_they_started_in(a, b):
    """Property: two runs of one row started at any two times agree within 10 %. On a
    tenth of the fake world's time scale: the untimed calls of a 20 s window (a million
    per row at CALL_S) are what the property's time goes on, not what it checks."""
    ra, rb = _row(a, spread=True, scale=0.1), _row(b, spread=True, scale=0.1)
    assert abs(ra / rb - 1) <= 0.10, (a, b, ra, rb)


def test_the_spread_samples_span_the_window_and_weigh_four_fifths():
    clock = _Clock()
    backend = _Regimes(clock, device="cpu")
    first = [CALL_S] * 12
    s = Spread(backend, Settings(caller_spread_s=10.0, caller_spread_rounds=6), clock=clock)
    assert s.keep(3, backend.call, {"status": "ok", "median_s": CALL_S}, first, "hot", 64)
    t0 = clock.t
    ended = []
    took = s.run(ended.append)
    (row,) = ended
    assert row.index == 3 and row.rounds == 6
    assert len(row.new) == 6 * math.ceil(WEIGHT * 12 / 6) == WEIGHT * len(first)
    # the last round's samples are taken at 5/6 of the window, after the fill
    assert max(backend.sample_times) - t0 >= 10.0 * 5 / 6
    assert took >= 10.0 * 5 / 6
    assert not s.kept and s.held == 0


def _cpu_rows(n: int, spread_s: float, rounds: int) -> tuple[_Clock, _Regimes, Spread]:
    """n one-sample CPU rows kept for spread rounds on a fake clock."""
    clock = _Clock()
    backend = _Regimes(clock, device="cpu")
    s = Spread(backend, Settings(caller_spread_s=spread_s, caller_spread_rounds=rounds),
               clock=clock)
    for i in range(n):
        assert s.keep(i, backend.call, {"status": "ok", "median_s": CALL_S}, [CALL_S],
                      "hot", 64)
    return clock, backend, s


def test_rows_share_the_window_in_turn():
    _, backend, s = _cpu_rows(4, 4.0, 2)
    order: list[tuple[int, float]] = []
    s.run(lambda row: order.append((row.index, row.rounds)))
    assert order == [(i, 2) for i in range(4)]
    # 8 slots of 0.5 s: every row sampled once per round, the rounds 2 s apart
    starts = sorted(backend.sample_times)
    assert starts[0] < 0.01 and 3.5 <= starts[-1] < 3.6


def test_the_window_lasts_the_rounds_the_rows_lack_on_average_not_at_most():
    """Three rows with 3 of 4 rounds from between the items and one kept in the
    step's last seconds: the window holds 7 slots of 0.5 s (3.5 s), not 4 rounds of 4
    slots (the whole 8 s), and the late row's 4 rounds still span it."""
    _, _, s = _cpu_rows(4, 8.0, 4)
    for row in s.kept[1:]:
        row.rounds = 3
    ended: list = []
    took = s.run(ended.append)
    assert [(r.index, r.rounds) for r in ended] == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert 3.0 <= took < 3.6
    first, last = ended[0].span
    assert first is not None and last - first >= 1.5  # slots 0, 1, 2 and 3 of 7


def test_a_row_that_fails_in_the_rounds_keeps_its_first_samples():
    clock = _Clock()
    backend = _Regimes(clock, fail_after=200)
    first = _pipelined(backend, 8, 6)
    s = Spread(backend, SPREAD, clock=clock)
    s.keep(0, backend.call, FIELDS, first, "hot", 64)
    ended = []
    s.run(ended.append)
    assert ended[0].new == [] and ended[0].rounds == 0
    assert ended[0].error == "RuntimeError: device lost"
    fields, clocks = spread_result(ended[0], dict(FIELDS))
    assert fields == {"caller_spread_rounds": 0, "caller_spread_s": 0.0} and clocks == {}


# -- which rows are kept ----------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "mode", "nbytes", "why"), [
    ({"status": "ok", "pipelined_median_s": 1e-3}, "hot", 256 * 2**20, ""),
    ({"status": "ok", "pipelined_median_s": 1.0001e-3}, "hot", 64, "longer"),
    ({"status": "ok", "pipelined_median_s": 1e-5}, "hot", 256 * 2**20 + 1, "larger"),
    ({"status": "ok", "pipelined_median_s": 1e-5}, "cold", 64, "hot"),
    ({"status": "wrong_result", "pipelined_median_s": 1e-5}, "hot", 64, "ok"),
    ({"status": "ok"}, "hot", 64, "no caller median"),
    ({"status": "ok", "median_s": 2e-6}, "hot", 64, ""),  # a CPU row: its own clock
    ({"status": "ok", "median_s": 0.0}, "hot", 64, "no caller median"),
])
def test_keep_rule_at_its_edges(fields, mode, nbytes, why):
    got = keep_reason(fields, mode, nbytes, Settings(caller_spread_s=1.0))
    assert (got == "") == (why == "") and why in got


@pytest.mark.parametrize("spread", [{"caller_spread_s": 0.0}, {"caller_spread_s": -1.0}])
def test_spread_off(spread):
    assert keep_reason({"status": "ok", "median_s": 1e-6}, "hot", 8,
                       Settings(**spread)) == "spread rounds off"


def test_inputs_held_stay_within_four_times_the_row_cap_where_free_memory_is_unknown():
    s = Spread(_Regimes(_Clock()), Settings(caller_spread_s=1.0, caller_spread_max_bytes=100))
    kept = [s.keep(i, lambda: None, FIELDS, [1e-5], "hot", 100) for i in range(6)]
    assert kept == [True] * 4 + [False] * 2 and s.held == 400


@pytest.mark.parametrize("free, fraction, fit", [(1000, 0.25, 2), (1000, 0.3, 3),
                                                 (10_000, 0.25, 8), (399, 1.0, 3)])
def test_inputs_held_stay_within_a_share_of_the_free_memory(free, fraction, fit):
    backend = _Regimes(_Clock(), free=free)
    s = Spread(backend, Settings(caller_spread_s=1.0, caller_spread_max_bytes=100,
                                 caller_spread_held_fraction=fraction))
    kept = [s.keep(i, lambda: None, FIELDS, [1e-5], "hot", 100) for i in range(8)]
    assert kept == [True] * fit + [False] * (8 - fit) and s.held == 100 * fit
    backend.free = 0  # read once, at the first row offered: the held rows' own bytes
    assert s.held_cap() == int(fraction * free)  # do not shrink it afterwards


def test_release_lets_every_kept_row_go():
    s = Spread(_Regimes(_Clock(), free=10_000), Settings(caller_spread_s=1.0))
    for i in range(3):
        s.keep(i, lambda: None, FIELDS, [1e-5], "hot", 100)
    let_go = []
    assert s.release(let_go.append) == 3 and s.kept == [] and s.held == 0
    assert [row.index for row in let_go] == [0, 1, 2]
    assert s.keep(3, lambda: None, FIELDS, [1e-5], "hot", 100) and s.held == 100


def test_a_gpu_row_spreads_its_pipelined_clock_and_a_cpu_row_its_own():
    clock = _Clock()
    gpu = Spread(_Regimes(clock), SPREAD, clock=clock)
    gpu.keep(0, gpu.backend.call, FIELDS, [2e-5] * 3, "hot", 64)
    cpu_backend = _Regimes(clock, device="cpu")
    cpu = Spread(cpu_backend, SPREAD, clock=clock)
    cpu.keep(1, cpu_backend.call, {"status": "ok", "median_s": 2e-5}, [2e-5] * 3, "hot", 64)
    assert gpu.kept[0].k == 8 and cpu.kept[0].k == 1
    row = gpu.kept[0]
    row.new, row.rounds, row.span = [1e-5] * 6, 24, (1.0, 21.5)
    fields, clocks = spread_result(row, dict(FIELDS))
    assert set(clocks) == {"pipelined"} and fields["pipelined_samples"] == 9
    assert fields["pipelined_median_s"] == 1e-5 and fields["caller_spread_s"] == 20.5
    assert "median_s" not in fields  # the device clock is not the host's to move
    row = cpu.kept[0]
    row.new, row.rounds = [1e-5] * 6, 24
    fields, clocks = spread_result(row, {"status": "ok", "bytes": 3e4, "flops": 0})
    assert set(clocks) == {"device"}
    assert fields["median_s"] == fields["pipelined_median_s"] == fields["sync_median_s"] == 1e-5
    assert fields["samples"] == 9 and fields["gbps"] == pytest.approx(3e4 / 1e-5 / 1e9)
    assert math.isnan(fields["gflops"])


# -- through the runner: rows, samples file, the report's loader ---------------------------


@pytest.fixture
def rounds_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    return _plugin(monkeypatch, "rounds_plugin")


@pytest.mark.parametrize("interval", [5.0, 0.001])  # after the items; between them too
@pytest.mark.parametrize("backend_id", ["rounds-gpu", "numpy-cpu"])
def test_spread_rows_match_their_samples_through_the_loader(rounds_plugin, tmp_path,
                                                            backend_id, interval):
    from gpubench.report import stats
    from gpubench.runner import run_backend

    harness = {"warmup": 1, "min_samples": 3, "max_time_s": 0.01,
               "caller_max_time_s": 0.006, "caller_spread_s": 0.3,
               "caller_spread_rounds": 4, "caller_spread_max_bytes": 2**20,
               "caller_spread_interval_s": interval}
    cfg = {"threads": [1], "harness": harness, "gpu_modes": ["hot"],
           "kernels": {"vector_add": {"sizes": [1024, 16384, 262144],
                                      "dtypes": ["float32"]}}}
    csv, samples = tmp_path / "t.csv", tmp_path / "t.samples.csv"
    run_backend(backend_id, cfg, 1, str(csv), str(samples))
    df = results.read_timings(csv)
    ok = df[df["status"] == "ok"]
    assert len(ok) >= 2
    # 262,144 float32 elements move 3 MiB, over the 1 MiB cap: not spread
    small, big = ok[ok["size"] < 262144], ok[ok["size"] == 262144]
    assert (small["caller_spread_rounds"] == 4).all(), small["caller_spread_rounds"]
    # every row lacks all 4 rounds after a short step: its first round opens the window,
    # its last starts 3/4 of it later (slots on the real clock: a first round that
    # began a few µs late, behind the row before it, shortens the span by that much)
    assert (small["caller_spread_s"] >= (0.9 * 0.3 * 3 / 4 if interval > 1 else 0.0)).all()
    assert (small["caller_spread_s"] > 0).all()
    assert (big["caller_spread_rounds"] == 0).all()
    loaded = stats.load_samples(samples, df)
    clocks = (("device", "samples"),) + ((("sync", "sync_samples"),
                                          ("pipelined", "pipelined_samples"))
                                         if backend_id.endswith("gpu") else ())
    for index in ok.index:
        for clock, n in clocks:
            got = loaded.get(index, clock)
            assert got is not None and len(got) == ok.at[index, n], (index, clock)
    for index in small.index:
        clock = "pipelined" if backend_id.endswith("gpu") else "device"
        got = loaded.get(index, clock)
        assert np.median(got) == pytest.approx(
            ok.at[index, "pipelined_median_s"], rel=1e-12)
        # n first samples, then 4 rounds of at most ceil(4 n / 4), at least 1
        total = len(got)
        assert any(n + 4 <= total <= n + 4 * math.ceil(WEIGHT * n / 4)
                   for n in range(1, total))


def test_a_gpu_row_spreads_its_sync_clock_too():
    """Sync samples (one call, then the wait) come first in each slot, after its
    untimed sync calls; the row's sync statistic is over the first ones and these."""
    clock = _Clock()
    backend = _Regimes(clock)
    first = _pipelined(backend, 8, 6)
    first_sync = _pipelined(backend, 1, 12)
    s = Spread(backend, Settings(caller_spread_s=3.0, caller_spread_rounds=3), clock=clock)
    assert s.keep(0, backend.call, FIELDS, first, "hot", 64, first_sync)
    ended = []
    s.run(ended.append)
    (row,) = ended
    assert row.rounds == 3 and len(row.new_sync) == 3 * math.ceil(WEIGHT * 12 / 3)
    assert len(row.new) == 3 * math.ceil(WEIGHT * 6 / 3)
    fields, clocks = spread_result(row, dict(FIELDS))
    assert clocks["sync"] == row.new_sync and clocks["pipelined"] == row.new
    assert fields["sync_samples"] == 12 + len(row.new_sync)
    assert fields["sync_median_s"] == pytest.approx(np.median(first_sync + row.new_sync))
    # a sync sample pays the whole wait, a pipelined one an eighth of it
    assert min(row.new_sync) > max(row.new) - WAIT_S


def test_a_kept_row_keeps_its_context_alive_until_the_rounds_end():
    """CUDA Python's calls reach their buffers through raw pointers, freed when the
    build context goes: the kept row holds the context until the rounds are over."""
    import gc
    import weakref

    class _Context:
        pass

    clock = _Clock()
    backend = _Regimes(clock)
    s = Spread(backend, Settings(caller_spread_s=1.0, caller_spread_rounds=2), clock=clock)
    ctx = _Context()
    gone = weakref.ref(ctx)
    assert s.keep(0, backend.call, FIELDS, [CALL_S] * 3, "hot", 64, alive=ctx)
    del ctx
    gc.collect()
    assert gone() is not None
    s.run(lambda row: None)
    gc.collect()
    assert gone() is None


class _Profiled(_Regimes):
    """A stand-in whose device clock's profiler is still attached when the spread rounds
    begin: every call made while it is runs 3x longer."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__(clock, period_s=1e9)  # one fast regime: only the profiler slows
        self.attached = True

    def call(self) -> None:
        super().call()
        if self.attached:
            self.clock.t += 2 * CALL_S

    def before_caller_clock(self) -> float:
        self.attached = False
        return 0.0


def test_the_spread_rounds_let_the_device_clocks_profiler_go_first():
    clock = _Clock()
    backend = _Profiled(clock)
    spread = Spread(backend, Settings(caller_spread_s=0.01, caller_spread_rounds=4), clock)
    assert spread.keep(0, backend.call, {"status": "ok", "pipelined_median_s": 20e-6,
                                         "pipelined_k": 1}, [CALL_S + WAIT_S] * 5, "hot", 8)
    ended = []
    spread.run(ended.append)
    assert not backend.attached
    assert max(ended[0].new) == pytest.approx(CALL_S + WAIT_S)


def _three_sizes(tmp_path, **harness):
    """The stand-in GPU's vector_add at 1,024, 16,384 and 262,144 float32 elements through
    the real runner and worker, with 2 spread rounds over 0.2 s and ``harness`` over
    those; its timings."""
    from gpubench.runner import run_backend

    settings = {"warmup": 1, "min_samples": 3, "max_time_s": 0.01,
                "caller_max_time_s": 0.006, "caller_spread_s": 0.2,
                "caller_spread_rounds": 2, **harness}
    cfg = {"threads": [1], "harness": settings, "gpu_modes": ["hot"],
           "kernels": {"vector_add": {"sizes": [1024, 16384, 262144],
                                      "dtypes": ["float32"]}}}
    csv, samples = tmp_path / "t.csv", tmp_path / "t.samples.csv"
    run_backend("rounds-gpu", cfg, 1, str(csv), str(samples))
    return results.read_timings(csv)


def test_a_case_that_needs_the_held_memory_lets_the_spread_rows_go(rounds_plugin, tmp_path,
                                                                   monkeypatch):
    """The stand-in's free memory counts its live device arrays. 262,144 float32 elements
    need 16.5 MiB with headroom (``memory_bytes`` x 1.5); 200 KiB more are free before
    any array, less than the two 16,384-element rows kept hold (3 x 64 KiB each), so the
    case fits only once the kept rows are let go: without that it would be skipped."""
    from gpubench.harness import Settings
    from gpubench.spec import Case, get_kernel

    need = get_kernel("vector_add").memory_bytes(Case("vector_add", "default", 262144,
                                                      "float32", {}))
    need *= Settings().memory_headroom
    monkeypatch.setenv("GPUBENCH_TEST_FREE_BYTES", str(int(need) + 200 * 2**10))
    df = _three_sizes(tmp_path, caller_spread_held_fraction=1.0)
    assert (df["status"] == "ok").all(), df[["size", "status", "reason"]]
    # the rows let go keep their first samples and say they were not spread; the
    # largest case's first row was let go for its second
    spread = df.set_index(["size", "implementation"])["caller_spread_rounds"]
    assert (spread.drop(index=(262144, "plain")) == 0).all(), spread
    assert spread[(262144, "plain")] == 2


def test_an_implementations_size_cap_does_not_let_the_spread_rows_go(tmp_path, monkeypatch):
    """A capped implementation's skip is not for memory: the kept rows stay kept."""
    monkeypatch.setenv("GPUBENCH_TEST_CAPPED", "1")  # the worker's registry
    _plugin(monkeypatch, "rounds_plugin")
    import rounds_plugin

    from gpubench import spec
    from gpubench.runner import run_backend

    monkeypatch.setattr(spec, "_IMPLEMENTATIONS", list(spec._IMPLEMENTATIONS))
    if not any(i.name == "capped" for i in spec.implementations("vector_add", "rounds")):
        rounds_plugin.register_capped()  # this process's, restored after the test

    harness = {"warmup": 1, "min_samples": 3, "max_time_s": 0.01,
               "caller_max_time_s": 0.006, "caller_spread_s": 0.2,
               "caller_spread_rounds": 2}
    cfg = {"threads": [1], "harness": harness, "gpu_modes": ["hot"],
           "kernels": {"vector_add": {"sizes": [1024, 16384], "dtypes": ["float32"]}}}
    csv, samples = tmp_path / "t.csv", tmp_path / "t.samples.csv"
    run_backend("rounds-gpu", cfg, 1, str(csv), str(samples))
    df = results.read_timings(csv).set_index(["size", "implementation"])
    assert df.at[(16384, "capped"), "status"] == "skipped"
    ok = df[df["status"] == "ok"]
    assert len(ok) == 5 and (ok["caller_spread_rounds"] == 2).all(), ok["caller_spread_rounds"]


# -- rounds between the items ---------------------------------------------------------------


def _step(phase: float, interval: float) -> list[float]:
    """A step on a host whose slow regime lasts 40 s of every minute: 8 rows kept at its
    start, then 120 s of other items (ticks every 0.5 s), then the window after them.
    Returns the rows' medians over all their samples."""
    clock = _Clock(phase)
    backend = _Regimes(clock, period_s=60.0)
    s = Spread(backend, Settings(caller_spread_s=20.0, caller_spread_rounds=24,
                                 caller_spread_interval_s=interval), clock=clock)
    for i in range(8):
        assert s.keep(i, backend.call, FIELDS, _pipelined(backend, 8, 6), "hot", 64)
    ended: dict[int, object] = {}
    for _ in range(240):
        clock.t += 0.5
        s.tick(lambda row: ended.__setitem__(row.index, row))
    s.run(lambda row: ended.__setitem__(row.index, row))
    assert sorted(ended) == list(range(8)) and s.kept == [] and s.held == 0
    assert all(row.rounds == 24 for row in ended.values())
    return [float(np.median(row.first + row.new)) for row in ended.values()]


def test_rounds_between_the_items_ride_out_regimes_longer_than_the_window():
    """Two runs that meet the host at different phases of a minute-long regime: with
    all rounds in the 20 s window after the items, every row reads the regime that
    window met (the runs disagree by the slow factor); with a round every 5 s of the
    step, the rows' rounds span two regimes' cycles and the runs agree."""
    window_only = np.array(_step(0.0, 0.0)) / np.array(_step(20.0, 0.0))
    between = np.array(_step(0.0, 5.0)) / np.array(_step(20.0, 5.0))
    assert np.all(np.abs(np.log(window_only)) > np.log(1.3)), window_only
    assert np.all(np.abs(np.log(between)) < np.log(1.1)), between


def test_a_tick_takes_a_round_only_once_the_interval_has_passed():
    clock = _Clock()
    backend = _Regimes(clock)
    s = Spread(backend, Settings(caller_spread_s=2.0, caller_spread_rounds=2,
                                 caller_spread_interval_s=5.0), clock=clock)
    ended: list = []
    assert s.tick(ended.append) == 0.0  # nothing kept: no round, no start
    s.keep(0, backend.call, FIELDS, [CALL_S] * 3, "hot", 64)
    assert s.tick(ended.append) == 0.0 and s.kept[0].rounds == 0  # the interval starts
    clock.t += 4.9
    assert s.tick(ended.append) == 0.0 and s.kept[0].rounds == 0
    clock.t += 0.2
    assert s.tick(ended.append) > 0 and s.kept[0].rounds == 1 and ended == []
    clock.t += 5.0
    s.keep(1, backend.call, FIELDS, [CALL_S] * 3, "hot", 64)
    s.tick(ended.append)  # row 0's second and last round: done, its inputs let go
    assert [r.index for r in ended] == [0] and [r.rounds for r in s.kept] == [1]
    assert s.held == 64
    s.run(ended.append)  # row 1's last round in the window
    assert [(r.index, r.rounds) for r in ended] == [(0, 2), (1, 2)]
    first, last = ended[0].span
    assert first is not None and last - first > 5.0  # its rounds 5 s apart


def test_no_rounds_between_the_items_at_interval_zero():
    clock = _Clock()
    backend = _Regimes(clock)
    s = Spread(backend, Settings(caller_spread_s=2.0, caller_spread_rounds=2,
                                 caller_spread_interval_s=0.0), clock=clock)
    s.keep(0, backend.call, FIELDS, [CALL_S] * 3, "hot", 64)
    for _ in range(3):
        clock.t += 10.0
        assert s.tick(lambda row: None) == 0.0
    assert s.kept[0].rounds == 0


def test_a_worker_lost_in_its_spread_rounds_loses_no_item(rounds_plugin, tmp_path,
                                                         monkeypatch, capfd):
    """The stand-in's worker dies whenever its spread rounds begin (between the items,
    then after them). No item was in flight: every item keeps its row, ok, with the
    samples it had, and the items after the loss go to a fresh worker."""

    monkeypatch.setenv("GPUBENCH_TEST_DIE_IN_SPREAD", "1")
    df = _three_sizes(tmp_path, caller_spread_interval_s=0.001)
    assert len(df) == 6 and (df["status"] == "ok").all(), df[["size", "status", "reason"]]
    assert (df["caller_spread_rounds"] == 0).all()
    assert "exited with code 3 during the spread rounds" in capfd.readouterr().err
