"""The one sampling loop (:mod:`gpubench.timing`): its stopping rule, its wall-time cap
(read on fake clocks, never on this machine's), the MPI agreement hook and the one
settings class's two configurations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpubench import timing
from gpubench.timing import EventPair, Rule, Settings, host_time, mpi_agree, sample_until


class FakeClock:
    """Time moves only when the test says: ``tick`` seconds a reading, plus ``advance``."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now, self.tick, self.reads = 0.0, tick, 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.tick
        return self.now


def scripted(times, clock: FakeClock | None = None, cost: float = 0.0):
    """A sample function returning ``times`` in turn; each call moves ``clock`` by
    ``cost`` (the pass's overhead: a barrier, a reduction, the host's bookkeeping)."""
    it = iter(times)

    def sample():
        if clock is not None:
            clock.now += cost
        return None, next(it)

    return sample


def test_quiet_samples_converge_at_the_fewest():
    got = sample_until(scripted([1.0] * 100), Rule(5, 1000, 0.05, math.inf), FakeClock())
    assert got.stop == "converged" and len(got.samples) == 5


def test_noisy_samples_run_to_the_most_samples():
    noisy = list(np.random.default_rng(0).uniform(1, 3, 1000))
    got = sample_until(scripted(noisy), Rule(5, 50, 0.01, math.inf), FakeClock())
    assert got.stop == "max_samples" and got.samples == noisy[:50]


def test_the_cap_is_wall_time_not_the_sum_of_the_samples():
    """The bug the MPI multi-GPU loop had: a microsecond call whose every pass costs a
    second of overhead stops after max_time_s of wall time (5 passes), not after its
    samples add up to max_time_s (which would be 5 million of them)."""
    clock = FakeClock()
    noisy = [1e-6 * (1 + (i % 7)) for i in range(10**6)]
    got = sample_until(scripted(noisy, clock, cost=1.0), Rule(3, 10**6, 1e-9, 5.0), clock)
    assert got.stop == "time_cap" and len(got.samples) == 5
    assert clock.now <= 5.0 + 1.0  # measuring lasted the cap and at most one more pass


def test_the_cap_waits_for_the_fewest_samples():
    clock = FakeClock()
    got = sample_until(scripted([1.0, 3.0] * 50, clock, cost=10.0), Rule(6, 100, 1e-9, 1.0),
                       clock)
    assert got.stop == "time_cap" and len(got.samples) == 6


def test_samples_taken_earlier_count_and_are_appended_to():
    held = [1.0] * 10
    got = sample_until(scripted([1.0] * 10), Rule(2, 1000, 0.05, math.inf), FakeClock(),
                       into=held)
    assert got.samples is held and len(held) == 12 and got.stop == "converged"
    # a cap already reached stops after one sample (the caller raises it to its floor)
    held = [1.0, 2.0, 3.0]
    got = sample_until(scripted([5.0] * 10), Rule(2, 3, 0.0, math.inf), FakeClock(),
                       into=held)
    assert got.stop == "max_samples" and len(held) == 4


@settings(max_examples=200, deadline=None)
@given(times=st.lists(st.floats(1e-7, 1e3), min_size=1, max_size=300),
       least=st.integers(1, 40), most=st.integers(1, 400),
       target=st.floats(0.0, 2.0), cap=st.floats(0.0, 50.0), cost=st.floats(0.0, 1.0))
def test_the_stopping_rule(times, least, most, target, cap, cost):
    """Whatever the samples: it never stops before the fewest (unless at the most), never
    holds more than the most, stops at the first pass past the cap once the fewest are
    in, and when it says converged, the spread of what it holds is within the target."""
    times = (times * (1 + 400 // len(times)))[:400]
    clock = FakeClock()
    ends: list[float] = []  # the loop's wall time after each sample

    def sample():
        clock.now += cost
        ends.append(clock.now)
        return None, times[len(ends) - 1]

    got = sample_until(sample, Rule(least, most, target, cap), clock)
    n = len(got.samples)
    assert got.samples == times[:n]
    assert n <= most
    assert n >= min(least, most)
    if got.stop == "max_samples":
        assert n == most
    elif got.stop == "converged":
        assert timing.rel_spread(got.samples) <= target
    else:
        assert got.stop == "time_cap" and ends[n - 1] >= cap and n >= least
    if n > max(least, 1):
        # no stop was due at the pass before the last
        assert ends[n - 2] < cap and n - 1 < most


def test_mpi_agreement_decides_on_the_slowest_rank():
    """Two ranks simulated through the hook: each sees the maximum of both ranks'
    sample and time, so both hold the same samples and stop on the same pass."""
    class Comm:  # the other rank's values are 3x this rank's sample, 2x its time
        def Allreduce(self, send, recv, op):
            assert op == "max"
            recv[:] = np.maximum(send, send * np.array([3.0, 2.0]))

    clock = FakeClock()
    got = sample_until(scripted([1e-3] * 100, clock, cost=1.0), Rule(2, 100, 0.0, 5.0),
                       clock, agree=mpi_agree(Comm(), "max"))
    assert got.samples == [3e-3, 3e-3] and got.stop == "converged"


def test_mpi_agreement_time_cap_on_the_reduced_time():
    class Comm:
        def Allreduce(self, send, recv, op):
            recv[:] = send * np.array([1.0, 2.0])  # the slowest rank has spent twice as long

    clock = FakeClock()
    noisy = [1e-6 * (1 + (i % 5)) for i in range(1000)]
    got = sample_until(scripted(noisy, clock, cost=1.0), Rule(2, 1000, 1e-9, 5.0), clock,
                       agree=mpi_agree(Comm(), "max"))
    assert got.stop == "time_cap" and len(got.samples) == 3  # 2, 4, 6 s agreed


def test_multi_gpu_job_stops_within_its_wall_time_cap():
    """The MPI multi-GPU job's loop used to stop on ``sum(samples) >= max_time_s``: a
    microsecond step looped until its own times added up. Now it is the one loop, capped
    on the job's clock: every reading of the (fake) clock is 1 or 2 µs after the one
    before, so a step reads 1-2 µs and a pass costs 3 readings; a 30 µs cap ends the loop
    once 30 µs have passed measuring, when the samples add up to far less."""
    pytest.importorskip("jax")
    from types import SimpleNamespace

    from gpubench.backends.jax.adapter import JaxCPU
    from gpubench.mpi import jobs

    ticks = iter([1e-6, 2e-6] * 10**4)
    clock = FakeClock()

    def wtime():
        clock.now += next(ticks)
        return clock.now

    mpi = SimpleNamespace(Wtime=wtime, MAX="max")
    comm = SimpleNamespace(Get_rank=lambda: 0, Get_size=lambda: 1,
                           allreduce=lambda v, op=None: v)
    item = {"size": 1024, "dtype": "float32", "mode": "jax_sharding", "devices": 1}
    cap = 3e-5
    ctx = jobs.Context(comm, mpi, JaxCPU(), item,
                       Settings.mpi(warmup=0, min_samples=3, target_rel_spread=1e-12,
                                    max_time_s=cap), seed=1)
    res = jobs.JOB_FUNCTIONS["multi_gpu"](ctx)
    assert res["status"] == "ok", res
    samples = res["_samples"]
    assert all(s in (pytest.approx(1e-6), pytest.approx(2e-6)) for s in samples)
    assert sum(samples) < cap / 2  # the old rule would not have stopped yet
    # passes of 3 readings (>= 4.5 µs each on average): at most 30 / 4 + 1 of them
    assert 3 <= len(samples) <= 8
    assert clock.now <= cap + 2 * 6e-6  # the start-up readings and one pass past the cap


def test_settings_configurations():
    assert Settings().max_samples == 1000 and Settings().max_time_s == 1.0
    mpi = Settings.mpi()
    assert (mpi.max_samples, mpi.max_time_s, mpi.min_samples, mpi.warmup) == (200, 0.5, 5, 2)
    cfg = Settings.from_config({"max_time_s": 0.3, "case_timeout_s": 600})
    assert cfg.max_time_s == 0.3 and cfg.max_samples == 1000
    assert Settings.mpi(max_samples=9).max_samples == 9
    assert Settings(min_samples=3).rule() == Rule(3, 1000, 0.05, 1.0)


def test_primitives():
    clock = FakeClock(tick=0.5)
    waited = []
    assert host_time(lambda: 7, waited.append, clock) == (7, 0.5) and waited == [7]

    class Ev:
        at = 0.0

    t = {"now": 0.0}

    def record(ev):
        ev.at = t["now"]

    def call():
        t["now"] += 2.0
        return "r"

    pair = EventPair(Ev(), Ev(), lambda a, b: b.at - a.at, record=record, wait=lambda ev: None)
    assert pair.time(call) == ("r", 2.0)
    assert timing.median_time(pair.time, call, 5) == 2.0


def test_a_backend_times_between_its_event_pair_else_on_the_host_clock():
    """The primitives a backend provides: an event pair on its device (recorded around
    the call, the end waited on, the device's seconds read) or, without one, the host
    clock around the call and its wait."""
    from gpubench.backends.base import Backend

    log: list[str] = []
    device = {"t": 0.0}

    class Ev:
        def __init__(self, name):
            self.name, self.at = name, None

    def record(ev):
        log.append(f"record {ev.name}")
        ev.at = device["t"]

    def call():
        log.append("call")
        device["t"] += 3e-6
        return "out"

    class Gpu(Backend):
        device = "gpu"

        def block(self, result):
            log.append("block")

    gpu = Gpu()
    gpu.event_pair = EventPair(Ev("start"), Ev("end"), lambda a, b: b.at - a.at,
                               record=record, wait=lambda ev: log.append(f"wait {ev.name}"))
    assert gpu.time_call(call) == ("out", pytest.approx(3e-6))
    assert log == ["record start", "call", "record end", "wait end"]
    log.clear()
    result, seconds = Gpu().time_call(call)  # no pair: the host clock and block()
    assert result == "out" and seconds >= 0 and log == ["call", "block"]
    # one timer for every kernel unless a backend says otherwise (JAX)
    assert gpu.device_timer(None) == (gpu.facts.timer, gpu.time_call)


def _schema_and_configs():
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    schema = yaml.safe_load((root / "workflow/schemas/config.schema.yaml").read_text())
    configs = {p.name: yaml.safe_load(p.read_text()) for p in (root / "config").glob("*.yaml")}
    return schema, configs


def test_every_harness_key_of_the_schema_is_a_setting():
    """config ``harness``, ``gpu_harness`` and ``mpi.harness`` (one schema) configure the
    one Settings class; only the runner's two timeouts are not measurement settings."""
    schema, _ = _schema_and_configs()
    keys = set(schema["$defs"]["harness"]["properties"])
    fields = set(Settings.__dataclass_fields__)
    assert keys - fields == {"case_timeout_s", "start_timeout_s"}
    assert fields <= keys


def test_the_shipped_configs_give_the_settings_they_gave():
    _, configs = _schema_and_configs()
    for name, cfg in configs.items():
        if not isinstance(cfg, dict):
            continue
        harness = cfg.get("harness") or {}
        for merged in (harness, {**harness, **(cfg.get("gpu_harness") or {})}):
            s = Settings.from_config(merged)
            for key, value in merged.items():
                if key in Settings.__dataclass_fields__:
                    assert getattr(s, key) == value, (name, key)
        mpi = (cfg.get("mpi") or {}).get("harness")
        if mpi is not None:
            s = Settings.mpi(**mpi)
            for key in ("max_samples", "max_time_s"):
                assert getattr(s, key) == mpi.get(key, timing.MPI[key]), (name, key)


@pytest.mark.parametrize(("count", "least_s", "calls"), [(3, 0.0, 3), (0, 0.0, 0),
                                                          (1, 2.5, 3), (5, 2.5, 5)])
def test_warm_up_is_a_count_then_a_time(count, least_s, calls):
    clock = FakeClock()

    def call():
        clock.now += 1.0

    assert timing.warm_up(call, count, least_s, clock) == calls
    # read before the calls, then after each call past the count while there is a time
    assert clock.reads == 1 + (calls - count + 1 if least_s > 0 else 0)


def test_warm_up_decides_on_the_agreed_time():
    clock = FakeClock()

    def call():
        clock.now += 1.0

    # the slowest rank has spent twice as long: 2 calls reach 3 s there, not 3
    assert timing.warm_up(call, 0, 3.0, clock, agree=lambda s: 2 * s) == 2


def test_torch_several_devices_split_and_sum(monkeypatch):
    """PyTorch's one-process version on CPU stand-ins for ``cuda:<d>``: three uneven parts
    on three "devices", summed to the float64 reference within float32's tolerance."""
    pytest.importorskip("torch")
    import time
    from types import SimpleNamespace

    from gpubench.backends.torch import mpi as torch_mpi
    from gpubench.backends.torch.adapter import TorchGPU
    from gpubench.mpi import jobs

    monkeypatch.setattr(torch_mpi, "TORCH_DEVICE", "cpu")
    mpi = SimpleNamespace(Wtime=time.perf_counter, MAX="max")
    comm = SimpleNamespace(Get_rank=lambda: 0, Get_size=lambda: 1,
                           allreduce=lambda v, op=None: v)
    item = {"size": 1001, "dtype": "float32", "mode": "torch_devices", "devices": 3}
    ctx = jobs.Context(comm, mpi, TorchGPU(), item,
                       Settings.mpi(warmup=0, min_samples=3, max_samples=3), seed=1)
    res = jobs.JOB_FUNCTIONS["multi_gpu"](ctx)
    assert res["status"] == "ok" and res["rel_err"] <= res["tolerance"], res
    item["mode"] = "no_such_mode"
    with pytest.raises(ValueError, match="unknown multi_gpu mode"):
        jobs.JOB_FUNCTIONS["multi_gpu"](ctx)
