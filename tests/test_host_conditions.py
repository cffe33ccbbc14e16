"""The host's conditions per row (gpubench.hostload) and the report's flag on
comparisons of steps measured on a busy host (gpubench.report.conditions)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from report_data import ENV, write_set

from gpubench import hostload, results
from gpubench.report import conditions, figures, load_inputs, render_html, render_markdown

# -- the recording ------------------------------------------------------------------------


def _stat(path: Path, user: int, idle: int, steal: int = 0, system: int = 0) -> Path:
    path.write_text(f"cpu  {user} 0 {system} {idle} 0 0 0 {steal} 0 0\n"
                    f"cpu0 {user} 0 {system} {idle} 0 0 0 {steal} 0 0\nintr 1 2\n")
    return path


def test_conditions_take_the_steps_own_cpu_out_of_the_hosts_busy_time(tmp_path):
    hz = hostload._clock_ticks()
    start = hostload.Snapshot(0.0, 0.5, hostload.proc_stat_ticks(
        _stat(tmp_path / "a", user=1000, idle=1000)), own_cpu_s=10.0)
    # 400 ticks passed: 300 busy (100 of them the step's own), 20 stolen, 80 idle
    end = hostload.Snapshot(2.0, 3.5, hostload.proc_stat_ticks(
        _stat(tmp_path / "b", user=1300, idle=1080, steal=20)), own_cpu_s=10.0 + 100 / hz)
    got = hostload.conditions(start, end)
    assert got["host_load_start"] == 0.5 and got["host_load_end"] == 3.5
    assert got["host_steal_pct"] == pytest.approx(100 * 20 / 400)
    assert got["host_other_cpu_pct"] == pytest.approx(100 * 200 / 400)
    # the step's own time over the host's busy time (ticks rounded): never below 0
    greedy = hostload.Snapshot(2.0, 3.5, end.ticks, own_cpu_s=10.0 + 1000 / hz)
    assert hostload.conditions(start, greedy)["host_other_cpu_pct"] == 0.0


def test_without_proc_stat_the_shares_are_unknown(tmp_path):
    snap = hostload.snapshot(tmp_path / "absent")
    assert snap.ticks is None
    got = hostload.conditions(snap, hostload.snapshot(tmp_path / "absent"))
    assert math.isnan(got["host_steal_pct"]) and math.isnan(got["host_other_cpu_pct"])
    assert got["host_load_end"] >= 0  # os.getloadavg on Linux
    (tmp_path / "odd").write_text("intr 1 2\n")
    assert hostload.proc_stat_ticks(tmp_path / "odd") is None
    record = hostload.run_level(0.05, tmp_path / "absent")
    assert record["steal_pct"] is None and record["busy_pct"] is None
    json.dumps(record, allow_nan=False)  # host.json stays JSON


TINY = {"threads": [1], "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.02,
                                    "caller_spread_rounds": 0},
        "kernels": {"vector_add": {"sizes": [1024, 4096], "dtypes": ["float32"]}}}


def _numpy_step(folder: Path) -> pd.DataFrame:
    from gpubench.runner import run_backend

    folder.mkdir(parents=True, exist_ok=True)
    run_backend("numpy-cpu", TINY, 1, str(folder / "numpy-cpu.csv"),
                str(folder / "numpy-cpu.samples.csv"))
    return results.read_timings(folder / "numpy-cpu.csv")


def _spinners(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


@pytest.fixture(scope="module")
def steps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """The numpy-cpu step measured twice, for real: as the host is, and with a process
    spinning on every core beside it (outside the step's process tree)."""
    tmp = tmp_path_factory.mktemp("steps")
    quiet = _numpy_step(tmp / "quiet")
    spin = _spinners(os.cpu_count() or 1)
    try:
        time.sleep(0.5)  # the spinners have started
        loaded = _numpy_step(tmp / "loaded")
    finally:
        for p in spin:
            p.kill()
            p.wait()
    return {"quiet": quiet, "loaded": loaded}


def test_a_real_step_records_a_busy_process_beside_it(steps):
    """The spinners are not the step's: the rows of the loaded run record the others'
    share above the rule's threshold and, loosely, above the run without them (on a
    shared machine that run may have been busy too, so the margin is small)."""
    loaded, quiet = steps["loaded"], steps["quiet"]
    for frame in (loaded, quiet):
        assert (frame["status"] == "ok").all(), frame[["status", "reason"]]
        for col in hostload.COLUMNS:
            assert frame[col].notna().all() and (frame[col] >= 0).all(), col
    other = float(loaded["host_other_cpu_pct"].max())
    assert other > conditions.OTHER_CPU_PCT
    assert other >= float(quiet["host_other_cpu_pct"].max()) - 10
    assert conditions.busy_rows(loaded).all()


def _inputs(tmp_path: Path, frame: pd.DataFrame) -> tuple[str, str, Any]:
    """The page and summary.md of ``frame`` (figures left undrawn)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    results.atomic_write_csv(tmp_path / "timings.csv", frame)
    (tmp_path / "host.json").write_text(json.dumps({**ENV, "cpu_cores": 2}))
    inputs = load_inputs(tmp_path / "timings.csv", tmp_path / "host.json")
    return render_html(inputs, figures.FigureQueue()), render_markdown(inputs), inputs.busy


def _quiet(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s rows as if measured on an idle host."""
    return frame.assign(host_load_start=0.1, host_load_end=1.0, host_steal_pct=0.0,
                        host_other_cpu_pct=1.0)


def _other_step(frame: pd.DataFrame, backend: str = "python-cpu") -> pd.DataFrame:
    """A second CPU step's rows on the same cases: numpy-cpu's, renamed."""
    return frame.assign(backend=backend, framework=backend.split("-")[0])


def test_a_comparison_with_the_loaded_step_is_flagged_naming_it(steps, tmp_path):
    """The acceptance case: numpy-cpu measured beside a busy process, compared with a
    step measured on a quiet host, is flagged in summary.md and the page with the
    command that re-runs it; the same comparison with numpy-cpu's quiet rows is not."""
    other = _quiet(_other_step(steps["quiet"]))
    html, md, busy = _inputs(tmp_path / "loaded",
                             pd.concat([steps["loaded"], other], ignore_index=True))
    assert busy is not None and [b.backend for b in busy.steps] == ["numpy-cpu"]
    assert busy.steps[0].compared == ("python-cpu",) and busy.steps[0].busy_too == ()
    command = "gpubench run -- --forcerun results/raw/numpy-cpu.csv"
    for text in (html, md):
        assert "Host conditions differ: measured on a busy host: numpy-cpu (" in text
        assert "compared with python-cpu (measured on a quiet host)" in text
        assert "re-run numpy-cpu on a quiet host" in text
        assert text.count("Host conditions") == 1 and command in text
    _, md, busy = _inputs(tmp_path / "quiet",
                          pd.concat([_quiet(steps["quiet"]), other], ignore_index=True))
    assert busy is None and "Host conditions" not in md and "--forcerun" not in md


# -- the rule on fixture rows -------------------------------------------------------------


@pytest.fixture
def fixture_rows(tmp_path) -> pd.DataFrame:
    paths = write_set(tmp_path / "set")
    return _quiet(results.read_timings(paths["timings"]))


def _set(frame: pd.DataFrame, backend: str, **values: float) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[frame["backend"] == backend, list(values)] = list(values.values())
    return frame


@pytest.mark.parametrize("values, why", [
    ({"host_other_cpu_pct": 60.0}, "other processes used up to 60 % of the CPUs' time"),
    ({"host_load_start": 12.0}, "load average up to 12.0 on 4 cores"),
    ({"host_steal_pct": 15.0}, "the hypervisor stole up to 15 % of the CPUs' time"),
])
def test_each_part_of_the_rule_flags_a_step(fixture_rows, values, why):
    busy = conditions.busy_steps(_set(fixture_rows, "numpy-cpu", **values))
    assert [b.backend for b in busy] == ["numpy-cpu"]
    assert busy[0].why == why
    assert busy[0].compared == ("cupy-gpu", "torch-gpu")


def test_below_the_thresholds_nothing_is_flagged(fixture_rows):
    near = _set(fixture_rows, "numpy-cpu", host_other_cpu_pct=conditions.OTHER_CPU_PCT,
                host_load_end=conditions.LOAD_PER_CORE * 4,
                host_steal_pct=conditions.STEAL_PCT)
    assert conditions.busy_steps(near) == []


def test_a_gpu_step_on_a_busy_host_is_flagged_too(fixture_rows):
    """GPU rows are ranked on the caller's clock, which dispatches from the host."""
    busy = conditions.busy_steps(_set(fixture_rows, "torch-gpu", host_other_cpu_pct=80.0))
    assert [b.backend for b in busy] == ["torch-gpu"]
    assert busy[0].compared == ("cupy-gpu", "numpy-cpu")


def test_two_busy_steps_share_one_notice_and_one_command(fixture_rows):
    frame = _set(_set(fixture_rows, "numpy-cpu", host_other_cpu_pct=60.0), "cupy-gpu",
                 host_steal_pct=30.0)
    notice = conditions.notice(frame)
    assert notice is not None
    busy = {b.backend: b for b in notice.steps}
    assert set(busy) == {"numpy-cpu", "cupy-gpu"}
    assert busy["numpy-cpu"].busy_too == ("cupy-gpu",)
    assert "cupy-gpu (busy too)" in notice.text and "re-run them on a quiet host" in notice.text
    assert notice.command == (".venv/bin/gpubench run -- --forcerun "
                              "results/raw/cupy-gpu.csv results/raw/numpy-cpu.csv")
    only_busy = frame[frame["backend"].isin(["numpy-cpu", "cupy-gpu"])]
    assert conditions.notice(only_busy).text.startswith("Host conditions: measured")


def test_rows_that_predate_the_columns_are_never_flagged(fixture_rows, tmp_path):
    """An older file (no host columns) reads with no flag and no note about them."""
    old = _set(fixture_rows, "numpy-cpu", host_other_cpu_pct=90.0).drop(
        columns=list(hostload.COLUMNS)).assign(schema_version=6)
    results.atomic_write_csv(tmp_path / "timings.csv", old)
    (tmp_path / "host.json").write_text(json.dumps(ENV))
    inputs = load_inputs(tmp_path / "timings.csv", tmp_path / "host.json")
    assert inputs.busy is None
    assert inputs.df["host_other_cpu_pct"].isna().all()
    assert not any("host_" in note for note in inputs.notes)
    assert "Host conditions" not in render_markdown(inputs)


def test_a_backend_name_a_shell_would_misread_gets_no_command(fixture_rows):
    frame = fixture_rows.copy()
    frame.loc[frame["backend"] == "numpy-cpu", "backend"] = "numpy-cpu;rm"
    notice = conditions.notice(_set(frame, "numpy-cpu;rm", host_other_cpu_pct=90.0))
    assert notice is not None and "numpy-cpu;rm (" in notice.text
    assert notice.command == ""


def test_the_probe_records_the_hosts_load_and_the_report_shows_it(monkeypatch):
    """host.json is written once per run: it holds the load at probe time, read before
    the probe measures (its ceilings and timer are stubbed here); a record without it
    (older probes, the committed evidence) shows no such row."""
    from gpubench import probe
    from gpubench.report.base import Environment, environment_table, host_problems

    monkeypatch.setattr(probe, "timer_overhead", lambda: {"per_sample_s": 1e-7,
                                                          "loop_s": 1e-6})
    monkeypatch.setattr(probe, "measure_ceilings", lambda *a: {})
    monkeypatch.setattr(probe, "energy_crosscheck", lambda *a: {"reason": "test"})
    monkeypatch.setattr(probe, "gpu_info", lambda: ([], "test"))
    record = json.loads(json.dumps(probe.probe(), allow_nan=False))
    cond = record["host_conditions"]
    assert cond["load_1min"] >= 0 and cond["window_s"] > 0
    assert 0 <= cond["busy_pct"] <= 100 and 0 <= cond["steal_pct"] <= 100
    assert host_problems(record) == {}
    table = environment_table(Environment(record, "host.json"))
    (shown,) = table.loc[table["field"] == "host at probe time", "value"]
    assert shown.startswith("load average ") and "each row records its own step" in shown
    older = {k: v for k, v in record.items() if k != "host_conditions"}
    assert "host at probe time" not in set(environment_table(Environment(older, "h"))["field"])
    assert "host_conditions" in host_problems({**record, "host_conditions": {"load_1min": "x"}})


def test_the_conditions_read_in_words_for_the_steps_log():
    """Each worker's conditions are in the step's log too; unknown parts say so."""
    text = hostload.describe({"host_load_start": 1.0, "host_load_end": 2.5,
                              "host_steal_pct": math.nan, "host_other_cpu_pct": 12.3})
    assert text == ("load 1.00 -> 2.50, other processes 12 % of the CPUs' time, stolen "
                    "unknown")
