"""Where a step's time goes: every second of a worker credited to one stage."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpubench.backends.numpy.adapter import NumpyCPU
from gpubench.harness import Settings, measure
from gpubench.ledger import Ledger
from gpubench.spec import Case, get_kernel, implementations


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_each_interval_goes_to_the_stage_current_during_it():
    clock = _Clock()
    ledger = Ledger(clock)
    clock.t = 5.0  # before the first stage: nobody's
    ledger.enter("a")
    clock.t += 1.0
    ledger.enter("b")
    clock.t += 2.0
    ledger.enter("a")
    clock.t += 3.0
    ledger.enter(None)
    clock.t += 7.0  # after the last: nobody's
    ledger.enter("b")
    ledger.enter(None)
    assert ledger.totals == {"a": 4.0, "b": 2.0}
    assert ledger.total() == 6.0
    assert ledger.line() == "a 4.0 s (67 %), b 2.0 s (33 %)"


def test_an_empty_ledger_says_nothing():
    assert Ledger().line() == "" and Ledger().total() == 0.0


def test_a_measured_row_credits_its_stages():
    spec = get_kernel("vector_add")
    case = Case("vector_add", "default", 4096, "float64", {})
    backend = NumpyCPU()
    backend.start(1)
    inputs = spec.make_inputs(case, np.random.default_rng(0))
    impl = next(i for i in implementations("vector_add", "numpy", "cpu") if i.name == "ufunc")
    ledger = Ledger()
    m = measure(spec, impl, case, backend, Settings(max_time_s=0.02, min_samples=3, warmup=1),
                inputs, spec.reference(case, inputs), ledger=ledger)
    ledger.enter(None)
    assert m.fields["status"] == "ok", m.fields
    assert {"placing inputs", "building", "first call", "checks", "warm-up",
            "device clock", "memory"} <= set(ledger.totals)
    assert "caller clocks" not in ledger.totals  # a CPU row's samples are its wall time
    assert all(v >= 0 for v in ledger.totals.values())


def test_a_step_logs_its_time_by_stage(tmp_path, capfd: pytest.CaptureFixture[str]):
    from gpubench.runner import run_backend

    cfg = {"threads": [1], "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.01},
           "kernels": {"vector_add": {"sizes": [1024, 4096], "dtypes": ["float32"]}}}
    run_backend("numpy-cpu", cfg, 1, str(tmp_path / "t.csv"), str(tmp_path / "s.csv"))
    err = capfd.readouterr().err
    (line,) = [x for x in err.splitlines() if "time by stage" in x]
    seconds = {m[0]: float(m[1]) for m in re.findall(r"([a-z ,-]+?) ([\d.]+) s \(", line)}
    stages = {k.strip(", ") for k in seconds if "after the start" not in k}
    assert {"inputs", "reference", "first call", "device clock", "checks"} <= stages, line
