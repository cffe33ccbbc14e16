"""Progress while a run goes: the estimate of the time left from the plan and the rate so
far, a step's lines and file, the driver's lines over the steps' files."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from gpubench import progress
from gpubench.progress import RunProgress, StepProgress, StepState, run_time_left


def test_time_left_is_the_rest_of_the_plan_at_the_rate_so_far():
    assert progress.time_left(10, 40, 20.0) == pytest.approx(60.0)  # 2 s a row, 30 left
    assert progress.time_left(40, 40, 20.0) == 0.0
    assert progress.time_left(0, 40, 5.0) is None  # no rate before the first row
    assert progress.time_left(5, 40, 0.0) is None


def test_run_time_left_takes_each_steps_own_rate_then_the_pooled_one():
    states = [
        StepState("numpy-cpu", 100, 100, 1.0, 50.0, finished=True),  # 0.5 s a row
        StepState("jax-cpu", 40, 10, 2.0, 20.0),    # running: its own 2 s a row
        StepState("torch-cpu", 30),                 # waiting: the pooled rate
        StepState("cupy-gpu", 200),                 # waiting, expected at once
    ]
    pooled = (50.0 + 20.0) / (100 + 10)
    left = run_time_left(states, frozenset({"cupy-gpu"}))
    assert left == pytest.approx(30 * 2.0 + 30 * pooled)
    # a step that wrote its rows at once (unavailable) gives no rate to the others
    quick = [StepState("cupy-gpu", 200, 200, 1.0, 0.01, finished=True),
             StepState("numpy-cpu", 50)]
    assert run_time_left(quick) is None
    assert run_time_left([StepState("a", 5, 5, 1.0, 3.0, finished=True)]) == 0.0


def test_durations_bars_and_percent_read_as_words():
    assert progress.duration(42.4) == "42 s"
    assert progress.duration(130) == "2 min 10 s"
    assert progress.duration(3900) == "1 h 5 min"
    assert progress.left_text(None) == "time left not known yet"
    assert progress.left_text(61) == "about 1 min 1 s left"
    assert progress.bar(5, 20, width=4) == "[#---]"
    assert progress.bar(30, 20, width=4) == "[####]"
    assert progress.percent(1, 3) == "33 %" and progress.percent(0, 0) == "100 %"


def test_a_step_says_its_count_every_interval_and_at_its_last_row(tmp_path):
    now, lines = [0.0], []
    path = tmp_path / "numpy-cpu.progress.json"
    step = StepProgress(4, lines.append, path, interval_s=10.0, clock=lambda: now[0])
    assert json.loads(path.read_text())["done"] == 0
    now[0] = 3.0
    step.update(1)
    assert lines == [] and json.loads(path.read_text())["done"] == 1
    now[0] = 12.0
    step.update(2)
    assert lines == ["progress 2/4 measurements (50 %), 12 s elapsed, about 12 s left"]
    now[0] = 13.0
    step.update(3)
    assert len(lines) == 1
    now[0] = 14.0
    step.update(4)
    assert lines[-1].startswith("progress 4/4 measurements (100 %), 14 s elapsed")
    assert json.loads(path.read_text())["planned"] == 4


def test_the_driver_reads_the_steps_files_and_ignores_an_earlier_runs(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    old = raw / "jax-cpu.csv"
    old.write_text("an earlier run's rows")
    os.utime(old, (1.0, 1.0))
    out = io.StringIO()
    run = progress.run_progress({"numpy-cpu": 10, "jax-cpu": 5}, tmp_path, out=out,
                                interval_s=30.0)
    assert run.line().startswith("gpubench progress: 0/15 measurements (0 %), 0 s elapsed; "
                                 "time left not known yet; numpy-cpu 0/10 waiting, "
                                 "jax-cpu 0/5 waiting")
    step = StepProgress(12, lambda _: None, raw / "numpy-cpu.progress.json")
    step.update(6)
    line = run.line()
    assert "6/17 measurements (35 %)" in line and "numpy-cpu 6/12," in line
    (raw / "numpy-cpu.csv").write_text("rows")  # written last: the step is done
    assert "numpy-cpu 12/12 done" in run.line()
    assert run.tick() is not None and run.tick() is None  # printed on a change only
    last = run.stop()
    assert last.startswith("gpubench progress: 12/17 measurements (70 %)")
    assert out.getvalue().count(progress.PREFIX) == 2


def test_on_a_terminal_the_line_has_a_bar(tmp_path):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    run = RunProgress({"a": 4}, {"a": (tmp_path / "a.json", tmp_path / "a.csv")},
                      out=Tty())
    assert "(0 %) [--------------------], 0 s elapsed;" in run.line()
    assert run.interval_s == progress.TERMINAL_INTERVAL_S
    assert RunProgress({}, {}, out=io.StringIO()).interval_s == progress.LOG_INTERVAL_S


def test_progress_path_sits_beside_the_steps_csv():
    assert progress.progress_path("r/raw/jax-cpu.csv") == Path("r/raw/jax-cpu.progress.json")
