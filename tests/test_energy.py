"""Energy per call: the window method on a simulated counter, the fallbacks without NVML
or RAPL, the RAPL reader on a fake powercap tree, and which plan items get a reading."""

from __future__ import annotations

import math
import sys
import threading
import time
from pathlib import Path

import pytest

from gpubench import energy
from gpubench.runner import PlanItem, mark_energy


class SimCounter(energy.Meter):
    """A counter that, like NVML's, moves only every ``period`` seconds, by the energy a
    constant ``watts`` spent since its last update; its reads are slow, as NVML's are."""

    name = "simulated"

    def __init__(self, watts: float, period: float, read_s: float = 0.0) -> None:
        self.watts, self.period, self.read_s = watts, period, read_s
        self.t0 = time.perf_counter()

    def read(self) -> float:
        if self.read_s:
            time.sleep(self.read_s)
        updates = math.floor((time.perf_counter() - self.t0) / self.period)
        return updates * self.period * self.watts

    def clock_mhz(self) -> float:
        return 1980.0


def _batch(call_s: float, k: int):
    def run() -> str:
        end = time.perf_counter() + call_s * k
        while time.perf_counter() < end:
            pass
        return "last"
    return run


class VirtualClock:
    """Time that passes only when a simulated call runs: a loaded machine that
    deschedules the test's threads changes no reading (wall-clock simulations did)."""

    def __init__(self) -> None:
        self.t = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.t

    def advance(self, dt: float) -> None:
        with self.lock:
            self.t += dt


class VirtualCounter(SimCounter):
    """SimCounter on a :class:`VirtualClock`; its update period is known (the window
    method reads it once per meter)."""

    def __init__(self, watts: float, period: float, clock: VirtualClock) -> None:
        super().__init__(watts, period)
        self.clock, self.period_s = clock, period

    def read(self) -> float:
        time.sleep(1e-5)  # a read takes time, as NVML's does (the thread yields)
        return math.floor(self.clock() / self.period) * self.period * self.watts


def _vbatch(call_s: float, k: int, clock: VirtualClock):
    """k calls of ``call_s`` virtual seconds each, yielding after each so that the
    counter's thread sees every update before time moves on."""
    def run() -> str:
        for _ in range(k):
            clock.advance(call_s)
            time.sleep(2e-5)
        return "last"
    return run


def test_window_gives_power_and_energy_per_call_despite_a_coarse_slow_counter() -> None:
    clock = VirtualClock()
    meter = VirtualCounter(watts=300.0, period=0.02, clock=clock)
    fields, last = energy.energy_window(_vbatch(1e-4, 20, clock), 20, meter, min_time_s=0.1,
                                        max_wait_s=1.0, clock=clock)
    assert last == "last"
    assert fields["energy_reason"] == ""
    assert fields["energy_power_w"] == pytest.approx(300.0, rel=0.1)
    # 300 W at 0.1 ms per call: 30 mJ per call; slow reads in the loop would inflate it
    assert fields["energy_j"] == pytest.approx(0.03, rel=0.15)
    assert fields["energy_window_s"] >= 0.1
    assert fields["energy_sm_mhz"] == 1980.0
    assert fields["energy_meter"] == "simulated"


def test_the_reading_follows_the_power() -> None:
    c1, c2 = VirtualClock(), VirtualClock()
    low = energy.energy_window(_vbatch(1e-4, 20, c1), 20, VirtualCounter(100.0, 0.02, c1),
                               0.06, 1.0, clock=c1)[0]
    high = energy.energy_window(_vbatch(1e-4, 20, c2), 20, VirtualCounter(400.0, 0.02, c2),
                                0.06, 1.0, clock=c2)[0]
    assert high["energy_j"] / low["energy_j"] == pytest.approx(4.0, rel=0.25)


def test_a_counter_that_never_moves_is_not_measured() -> None:
    class Stuck(energy.Meter):
        name = "stuck"
        period_s = 0.02  # known: the window method does not wait to learn it

        def read(self) -> float:
            return 5.0

    # on a virtual clock (10 ms a batch): a loaded machine cannot stretch the wait
    clock = VirtualClock()
    fields, _ = energy.energy_window(_vbatch(1e-3, 10, clock), 10, Stuck(), 0.05, 0.1,
                                     clock=clock)
    assert list(fields) == ["energy_reason"]
    assert fields["energy_reason"].startswith("not measured: stuck did not change in 0.1")


def test_an_unusable_meter_runs_nothing() -> None:
    ran = []
    fields, last = energy.energy_window(lambda: ran.append(1), 1,
                                        energy.Unmetered("no counter here"), 0.1, 1.0)
    assert fields == {"energy_reason": "not measured: no counter here"}
    assert last is None and not ran


def test_without_nvidia_ml_py_the_gpu_meter_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    meter = energy.NvmlMeter()
    assert meter.reason.startswith("nvidia-ml-py is not installed")


def test_without_a_driver_the_gpu_meter_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoDriver:
        def nvmlInit(self) -> None:
            raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", NoDriver())
    meter = energy.NvmlMeter()
    assert meter.reason == ("NVML energy counter unreadable: RuntimeError: NVML Shared "
                            "Library Not Found")


def _zone(root: Path, name: str, uj: int, wrap_uj: int) -> Path:
    z = root / name
    z.mkdir(parents=True)
    (z / "name").write_text("package-0\n")
    (z / "energy_uj").write_text(f"{uj}\n")
    (z / "max_energy_range_uj").write_text(f"{wrap_uj}\n")
    return z


def test_rapl_sums_packages_and_survives_a_wrap(tmp_path: Path) -> None:
    a = _zone(tmp_path, "intel-rapl:0", 900_000, 1_000_000)
    _zone(tmp_path, "intel-rapl:1", 2_000_000, 10_000_000)
    _zone(tmp_path, "intel-rapl:0:0", 123, 1_000_000)  # a sub-domain: not counted twice
    meter = energy.RaplMeter(str(tmp_path))
    assert meter.reason == "" and len(meter.zones) == 2
    first = meter.read()
    assert first == pytest.approx(2.9)
    (a / "energy_uj").write_text("100000\n")  # wrapped: 0.9 J -> 1.0 J -> 0.1 J
    assert meter.read() - first == pytest.approx(0.2)


def test_rapl_absent_or_unreadable_is_a_reason(tmp_path: Path) -> None:
    assert "no RAPL package counters" in energy.RaplMeter(str(tmp_path / "none")).reason
    z = _zone(tmp_path, "intel-rapl:0", 1, 10)
    (z / "energy_uj").unlink()
    (z / "energy_uj").mkdir()  # unreadable as a file, even for root
    meter = energy.RaplMeter(str(tmp_path))
    assert "unreadable" in meter.reason and not meter.zones


def _item(size: int, mode: str = "hot", impl: str = "a", threads: int = 1) -> PlanItem:
    return PlanItem("vector_add", "default", size, "float32", impl, threads, mode=mode)


def test_energy_is_read_at_the_largest_size_of_each_case_in_hot_mode() -> None:
    items = [_item(10), _item(1000), _item(1000, "cold"), _item(10, impl="b"),
             _item(100, threads=4)]
    marked = {(i.size, i.mode, i.implementation, i.threads): i.energy
              for i in mark_energy(items, "largest")}
    assert marked == {(10, "hot", "a", 1): False, (1000, "hot", "a", 1): True,
                      (1000, "cold", "a", 1): False, (10, "hot", "b", 1): True,
                      (100, "hot", "a", 4): True}
    assert all(i.energy == (i.mode == "hot") for i in mark_energy(items, "all"))
    assert not any(i.energy for i in mark_energy(items, "off"))


def test_a_cpu_step_without_rapl_records_why(tmp_path: Path) -> None:
    """End to end through a worker: the largest size carries the reason, others nothing."""
    import pandas as pd

    from gpubench.runner import run_backend

    config = {"harness": {"max_time_s": 0.01}, "threads": [1],
              "kernels": {"vector_add": {"sizes": [256, 4096], "dtypes": ["float32"]}}}
    run_backend("numpy-cpu", config, 1, str(tmp_path / "t.csv"), str(tmp_path / "s.csv"))
    rows = pd.read_csv(tmp_path / "t.csv").set_index("size")
    assert rows.loc[256, "status"] == "ok" and pd.isna(rows.loc[256, "energy_reason"])
    if energy.meter_for("cpu").reason:
        assert rows.loc[4096, "energy_reason"].startswith("not measured: ")
        assert pd.isna(rows.loc[4096, "energy_j"])
    else:  # a machine whose RAPL counters this process can read
        assert rows.loc[4096, "energy_j"] > 0


def test_a_measured_reading_goes_through_the_harness_into_a_valid_row(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path a GPU step takes, on the CPU with a simulated counter: measure()
    with energy on, the row built as the runner builds it, and the schema's writer."""
    import numpy as np

    from gpubench import results
    from gpubench.backends.numpy.adapter import NumpyCPU
    from gpubench.harness import Settings, measure
    from gpubench.spec import Case, get_kernel, implementations

    monkeypatch.setitem(energy._METERS, "cpu", SimCounter(250.0, 0.02))
    spec = get_kernel("vector_add")
    case = Case("vector_add", "default", 4096, "float32")
    impl = implementations("vector_add", "numpy", "cpu")[0]
    backend = NumpyCPU()
    backend.start(1)
    inputs = spec.make_inputs(case, np.random.default_rng(1))
    settings = Settings(max_time_s=0.01, energy_min_time_s=0.05)
    m = measure(spec, impl, case, backend, settings, inputs, spec.reference(case, inputs),
                energy=True)
    assert m.fields["status"] == "ok" and m.fields["energy_reason"] == ""
    assert m.fields["energy_power_w"] == pytest.approx(250.0, rel=0.2)
    # the window's energy shared over its calls (not a bound on a call's time: a loaded
    # machine stretched one NumPy call of 4096 elements to 1.1 ms in a fresh-clone CI)
    f = m.fields
    assert f["energy_calls"] >= 1 and f["energy_window_s"] > 0 and f["energy_j"] > 0
    assert f["energy_j"] == pytest.approx(
        f["energy_power_w"] * f["energy_window_s"] / f["energy_calls"])
    row = results.empty_row()
    row.update(framework="numpy", device="cpu", backend="numpy-cpu", implementation=impl.name,
               kernel="vector_add", variant="default", size=4096, dtype="float32", threads=1,
               schema_version=results.SCHEMA_VERSION)
    row.update({k: v for k, v in m.fields.items() if k in results.COLUMN_NAMES})
    row["energy_calls"] += 0.5  # interpolated counts are fractions: the schema takes them
    frame = results.validate(results.rows_frame([row]), "test")
    assert frame.loc[0, "energy_j"] == pytest.approx(m.fields["energy_j"])


class SteppedCounter(SimCounter):
    """A counter on a clock that moves 1 ms per read: the gaps it shows are the period's,
    whatever else the machine runs (a scheduler's delay cannot shorten one)."""

    def __init__(self, watts: float, period_ms: int) -> None:
        super().__init__(watts, period_ms / 1000)
        self.ms, self.period_ms = 0, period_ms

    def now(self) -> float:
        return self.ms / 1000

    def read(self) -> float:
        self.ms += 1
        return (self.ms // self.period_ms) * self.period * self.watts


def test_the_update_period_is_read_once_and_spans_snap_to_it() -> None:
    meter = SteppedCounter(100.0, 10)
    assert energy.update_period(meter, clock=meter.now) == pytest.approx(0.01)
    meter.period_s = 0.1
    assert energy.update_period(meter) == 0.1  # kept: read once per process
    assert energy.snap(0.185, 0.1) == pytest.approx(0.2)  # an update seen 15 ms late
    assert energy.snap(0.42, 0.1) == pytest.approx(0.4)
    assert energy.snap(0.15, 0.1) == 0.15  # between two grid points: left as seen
    assert energy.snap(0.185, None) == 0.185
    stuck = SimCounter(0.0, 0.01)
    assert energy.update_period(stuck, max_s=0.05) is None


def test_crosscheck_compares_the_short_window_with_a_long_one() -> None:
    clock = VirtualClock()
    meter = VirtualCounter(watts=250.0, period=0.01, clock=clock)
    out = energy.crosscheck(_vbatch(2e-4, 20, clock), 20, meter, short_s=0.05, long_s=0.2,
                            clock=clock)
    assert out["long_window_s"] > out["short_window_s"] > 0
    assert out["short_j"] > 0 and out["long_j"] > 0
    assert out["rel_diff"] == pytest.approx(out["short_j"] / out["long_j"] - 1)
    assert not math.isnan(out["rel_diff"])
    none = energy.crosscheck(_batch(1e-4, 5), 5, energy.Unmetered("no counter"), 0.05, 0.2)
    assert math.isnan(none["rel_diff"]) and none["reason"]


class PeakCounter(VirtualCounter):
    """A board whose limiter lets it draw ``peak`` watts for its first ``peak_s`` virtual
    seconds, then ``watts``; its enforced limit is ``limit`` (NaN: unknown)."""

    def __init__(self, peak: float, peak_s: float, watts: float, limit: float,
                 clock: VirtualClock) -> None:
        super().__init__(watts, 0.02, clock)
        self.peak, self.peak_s, self.limit = peak, peak_s, limit

    def read(self) -> float:
        time.sleep(1e-5)
        t = math.floor(self.clock() / self.period) * self.period
        return self.peak * min(t, self.peak_s) + self.watts * max(t - self.peak_s, 0.0)

    def power_limit_w(self) -> float:
        return self.limit


@pytest.mark.parametrize(("peak", "watts", "limit", "reread", "power"), [
    (760.0, 600.0, 700.0, True, (600.0, 700.0)),   # a peak above the limit: read again
    (760.0, 720.0, 700.0, True, (700.0, 760.0)),   # still above: kept, the report says so
    (680.0, 600.0, 700.0, False, (600.0, 700.0)),  # below the limit: one window
    (760.0, 600.0, math.nan, False, (700.0, 800.0)),  # no known limit: one window
])
def test_a_window_above_the_power_limit_is_read_again_over_a_longer_one(
        peak: float, watts: float, limit: float, reread: bool,
        power: tuple[float, float]) -> None:
    clock = VirtualClock()
    meter = PeakCounter(peak, 0.3, watts, limit, clock)
    meter.period_s = 0.02
    fields, last = energy.energy_reading(_vbatch(1e-3, 10, clock), 10, meter, min_time_s=0.1,
                                         max_wait_s=1.0, clock=clock)
    assert last == "last" and fields["energy_reason"] == ""
    long_window = fields["energy_window_s"] >= energy.REREAD_MIN_S
    assert long_window == reread
    assert power[0] < fields["energy_power_w"] < power[1]
    # the row's energy per call is that window's power times a call's 1 ms
    assert fields["energy_j"] == pytest.approx(fields["energy_power_w"] * 1e-3, rel=0.05)


# -- energy: best ----------------------------------------------------------------------


def test_best_marks_every_implementation_at_the_largest_size_of_a_case() -> None:
    items = [_item(10), _item(1000), _item(1000, "cold"), _item(10, impl="b"),
             _item(1000, impl="b"), _item(100, threads=4)]
    marked = {(i.size, i.mode, i.implementation, i.threads): (i.energy, i.energy_best)
              for i in mark_energy(items, "best")}
    assert marked == {(10, "hot", "a", 1): (False, False),
                      (1000, "hot", "a", 1): (False, True),
                      (1000, "cold", "a", 1): (False, False),
                      (10, "hot", "b", 1): (False, False),
                      (1000, "hot", "b", 1): (False, True),
                      (100, "hot", "a", 4): (True, False)}  # the only one: read inline
    # the default
    from gpubench.runner import DEFAULT_ENERGY

    assert DEFAULT_ENERGY == "best"


@pytest.fixture
def energy_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    from conftest import _plugin

    return _plugin(monkeypatch, "energy_plugin")


def _ebest(tmp_path: Path, **extra) -> dict:
    import pandas as pd

    from gpubench.runner import run_backend

    config = {"harness": {"max_time_s": 0.01, "energy_min_time_s": 0.05},
              "threads": [1],
              "kernels": {"vector_add": {"sizes": [256, 4096], "dtypes": ["float32"]}},
              **extra}
    run_backend("ebest-cpu", config, 1, str(tmp_path / "t.csv"), str(tmp_path / "s.csv"))
    rows = pd.read_csv(tmp_path / "t.csv")
    assert set(rows["status"]) == {"ok"} and len(rows) == 4
    return {(r.implementation, r.size): r for r in rows.itertuples()}


def test_best_reads_only_the_faster_implementation(energy_plugin, tmp_path) -> None:
    import pandas as pd

    rows = _ebest(tmp_path)
    fast, slow = rows[("fast", 4096)], rows[("slow", 4096)]
    assert fast.median_s < slow.median_s
    assert fast.energy_j > 0 and fast.energy_meter == "simulated"
    assert fast.energy_power_w == pytest.approx(100.0, rel=0.3)
    assert pd.isna(fast.energy_reason)
    assert pd.isna(slow.energy_j)
    assert slow.energy_reason == ("not measured: energy: best only (a faster "
                                  "implementation of this case was read: fast)")
    for small in (rows[("fast", 256)], rows[("slow", 256)]):
        assert pd.isna(small.energy_j) and pd.isna(small.energy_reason)


def test_largest_still_reads_every_implementation(energy_plugin, tmp_path) -> None:
    rows = _ebest(tmp_path, energy="largest")
    assert rows[("fast", 4096)].energy_j > 0 and rows[("slow", 4096)].energy_j > 0


def test_a_worker_lost_while_reading_energy_again_costs_no_row(
        energy_plugin, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GPUBENCH_TEST_DIE_ON_REBUILD", "1")
    rows = _ebest(tmp_path)
    fast = rows[("fast", 4096)]
    assert fast.energy_reason.startswith("not measured: worker ")
    assert "while reading it" in fast.energy_reason
    assert "best only" in rows[("slow", 4096)].energy_reason
