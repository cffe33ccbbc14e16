"""The guard around a benchmark step (gpubench.cli.guard_step): a step that fails or
runs out of time is retried while attempts are left, then recorded as error rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gpubench import results
from gpubench.config import validate_config
from gpubench.runner import plan

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "workflow" / "scripts" / "run.py"
SMOKE = ROOT / ".test" / "config" / "config.yaml"


@pytest.fixture(scope="module")
def step_config() -> dict:
    cfg = yaml.safe_load(SMOKE.read_text())
    cfg["backends"] = ["numpy-cpu"]
    cfg["kernels"] = {"vector_add": {"sizes": [1024]}, "reduction": {"sizes": [1024]}}
    cfg = validate_config(cfg)
    return {k: cfg[k] for k in ("threads", "gpu_modes", "harness", "kernels") if k in cfg}


def run_step(tmp_path: Path, step_config: dict, *guard: str, **env: str):
    out = tmp_path / "out"
    cmd = [sys.executable, str(RUN), "--backend", "numpy-cpu", "--threads", "1",
           "--config-json", json.dumps(step_config), "--csv", str(out / "t.csv"),
           "--samples", str(out / "s.csv"), "--env-mode", "system", "--env-name", "system",
           "--lock-out", str(out / "lock.txt"), *guard]
    paths = [str(ROOT / "tests" / "slurm"), str(ROOT / "src")]
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths),
                "GPUBENCH_PLUGINS": "step_fault", **env}
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=300)
    return proc, out, time.monotonic() - start


def test_failing_step_is_retried_before_its_last_attempt(tmp_path, step_config):
    proc, out, _ = run_step(tmp_path, step_config, "--attempt", "1", "--attempts", "3",
                            GPUBENCH_FAIL_STEPS="numpy-cpu")
    assert proc.returncode == 3, proc.stderr
    assert "attempt 1 of 3" in proc.stderr and "retries it" in proc.stderr
    assert not (out / "t.csv").exists()


def test_failing_step_on_its_last_attempt_is_recorded(tmp_path, step_config):
    proc, out, _ = run_step(tmp_path, step_config, "--attempt", "3", "--attempts", "3",
                            GPUBENCH_FAIL_STEPS="numpy-cpu")
    assert proc.returncode == 0, proc.stderr
    frame = results.read_timings(out / "t.csv")
    assert len(frame) == len(plan("numpy-cpu", step_config, 1))  # every planned row
    assert (frame["status"] == "error").all()
    assert frame["reason"].str.contains("exit status 3 \\(attempt 3 of 3, no retry").all()
    assert (out / "lock.txt").exists()  # the report lists every step's lock


def test_step_past_its_time_limit_is_stopped_and_recorded(tmp_path, step_config):
    # 0.05 min = 3 s, less the 10% margin: the step is stopped well before the 600 s hang
    proc, out, took = run_step(tmp_path, step_config, "--attempt", "1", "--attempts", "1",
                               "--time-limit-min", "0.05", GPUBENCH_HANG_STEPS="numpy-cpu")
    assert proc.returncode == 0, proc.stderr
    assert took < 60
    frame = results.read_timings(out / "t.csv")
    assert (frame["status"] == "error").all()
    assert frame["reason"].str.contains("ran out of time").all()


def test_guarded_step_that_succeeds_is_unchanged(tmp_path, step_config):
    proc, out, _ = run_step(tmp_path, step_config, "--attempt", "1", "--attempts", "2",
                            "--time-limit-min", "10")
    assert proc.returncode == 0, proc.stderr
    frame = results.read_timings(out / "t.csv")
    assert set(frame["status"]) <= {"ok", "skipped"}


def test_step_killed_mid_run_keeps_the_rows_it_had_measured(tmp_path, step_config):
    """The step is killed with SIGKILL after 3 rows (as the OOM killer or SLURM's memory
    limit ends it): on its last attempt the guard keeps those rows and their samples as
    measured, and only the measurements not yet made become error rows."""
    proc, out, _ = run_step(tmp_path, step_config, "--attempt", "2", "--attempts", "2",
                            GPUBENCH_KILL_STEPS="numpy-cpu", GPUBENCH_KILL_AFTER_ROWS="3")
    assert proc.returncode == 0, proc.stderr
    assert "killing step numpy-cpu after 3 rows" in proc.stderr
    frame = results.read_timings(out / "t.csv")
    planned = plan("numpy-cpu", step_config, 1)
    assert len(frame) == len(planned) > 3
    measured, errors = frame[frame["status"] != "error"], frame[frame["status"] == "error"]
    assert len(measured) == 3 and (measured["median_s"] > 0).all(), frame[["status", "reason"]]
    assert errors["reason"].str.startswith("the step was killed by signal 9 (attempt 2 of 2, "
                                           "no retry left)").all(), errors["reason"].iloc[0]
    # the rows in plan order, as a whole step writes them
    assert list(frame["implementation"] + frame["kernel"]) == [
        it.implementation + it.kernel for it in planned]
    samples = results.read_samples(out / "s.csv")
    kept = samples.merge(measured[list(results.KEY_NAMES)], on=list(results.KEY_NAMES))
    assert len(kept) == len(samples) > 0
    assert not (out / "t.partial.jsonl").exists()


def test_a_retry_measures_only_what_the_killed_attempt_had_not(tmp_path, step_config):
    """Attempt 1 is killed after 3 rows: attempt 2 keeps those rows (their timestamps and
    samples) from the partial file and measures only the others."""
    proc, out, _ = run_step(tmp_path, step_config, "--attempt", "1", "--attempts", "2",
                            GPUBENCH_KILL_STEPS="numpy-cpu", GPUBENCH_KILL_AFTER_ROWS="3")
    assert proc.returncode != 0 and not (out / "t.csv").exists(), proc.stderr
    from gpubench.runner import kept_rows, row_key
    before = kept_rows(out / "t.csv")
    assert len(before) == 3
    proc, out, _ = run_step(tmp_path, step_config, "--attempt", "2", "--attempts", "2")
    assert proc.returncode == 0, proc.stderr
    assert "3 measurements kept from an earlier attempt" in proc.stderr
    assert "5 measurements planned" in proc.stderr
    frame = results.read_timings(out / "t.csv")
    planned = plan("numpy-cpu", step_config, 1)
    assert len(frame) == len(planned) and set(frame["status"]) <= {"ok", "skipped"}
    assert list(frame["implementation"] + frame["kernel"]) == [
        it.implementation + it.kernel for it in planned]
    stamps = {row_key(r): r["timestamp"] for r in frame.to_dict("records")}
    for key, (row, _) in before.items():
        assert stamps[key] == row["timestamp"], key  # kept, not measured again


def test_partial_rows_of_another_configuration_are_not_kept(tmp_path, step_config):
    """A partial file left by a step with other settings is measured afresh, not kept."""
    from gpubench.runner import partial_path, write_unavailable

    run_step(tmp_path, step_config, "--attempt", "2", "--attempts", "2",
             GPUBENCH_KILL_STEPS="numpy-cpu", GPUBENCH_KILL_AFTER_ROWS="2")
    first = results.read_timings(tmp_path / "out" / "t.csv").iloc[0].to_dict()
    assert first["status"] == "ok"
    csv, samples = tmp_path / "out" / "t.csv", tmp_path / "out" / "s.csv"
    other = {**step_config, "harness": {**step_config["harness"], "seed": 7}}
    for config, kept in ((step_config, 1), (other, 0)):
        partial_path(csv).write_text(json.dumps({"row": first, "samples": {}},
                                                default=str) + "\n")
        write_unavailable("numpy-cpu", config, 1, str(csv), str(samples), "killed",
                          status="error", keep=True)
        assert (results.read_timings(csv)["status"] != "error").sum() == kept


def test_a_step_the_oom_killer_ended_is_said_to_be_out_of_memory(tmp_path):
    """Where the job's memory is a cgroup (v2), its OOM kill count tells memory."""
    from gpubench.cli import oom_note
    from gpubench.procs import cgroup_memory

    (tmp_path / "cgroup").write_text("0::/job_7/step_0\n")
    folder = tmp_path / "fs" / "job_7" / "step_0"
    folder.mkdir(parents=True)
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\n")
    (folder / "memory.max").write_text(f"{400 << 20}\n")
    (folder / "memory.peak").write_text(f"{(400 << 20) - 4096}\n")
    before = cgroup_memory(tmp_path / "cgroup", tmp_path / "fs")
    assert before == {"oom_kill": 0, "max": 400 << 20, "peak": (400 << 20) - 4096}
    assert oom_note(before, before) == ""
    (folder / "memory.events").write_text("oom 2\noom_kill 1\n")
    after = cgroup_memory(tmp_path / "cgroup", tmp_path / "fs")
    assert oom_note(before, after) == (": out of memory (the kernel's OOM killer, in the "
                                       "job's cgroup, limit 400 MiB, peak 400 MiB)")
    assert cgroup_memory(tmp_path / "none", tmp_path / "fs") == {}
