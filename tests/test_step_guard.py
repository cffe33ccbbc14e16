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
