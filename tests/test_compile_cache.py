"""Each framework's persistent compilation cache in one folder per
environment (config key ``compile_cache_dir``), set by the step before a framework is
imported, a variable the user set left alone; TorchInductor compiling in the step's
own thread; and a re-run meeting a warm cache."""

from __future__ import annotations

import argparse
import copy
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import ROOT

from gpubench import results
from gpubench.cli import step_compile_cache
from gpubench.config import ConfigError, validate_config
from gpubench.runner import BackendRun, compile_cache_vars, run_backend, step_environment

TINY = {"threads": [1], "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.005},
        "kernels": {"vector_add": {"sizes": [1024], "dtypes": ["float32"]}}}


def test_the_step_sets_every_cache_folder_and_leaves_the_users_alone(tmp_path):
    env = step_environment(tmp_path / "c" / "jax-cuda13",
                           {"TRITON_CACHE_DIR": "/mine/triton", "PATH": "/bin"})
    root = (tmp_path / "c" / "jax-cuda13").resolve()
    assert env["CUPY_CACHE_DIR"] == str(root / "cupy")
    assert env["JAX_COMPILATION_CACHE_DIR"] == str(root / "jax")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(root / "torchinductor")
    assert env["NUMBA_CACHE_DIR"] == str(root / "numba")
    assert "TRITON_CACHE_DIR" not in env  # the user's
    # JAX stores every compile, whatever it took, so first calls find it next time
    assert env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    assert env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] == "-1"
    assert env["TORCHINDUCTOR_COMPILE_THREADS"] == "1"


def test_off_leaves_the_frameworks_defaults_but_inductor_still_compiles_in_the_step():
    assert step_environment(None, {}) == {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
    assert step_environment(None, {"TORCHINDUCTOR_COMPILE_THREADS": "8"}) == {}


def test_the_workers_get_the_variables(tmp_path, monkeypatch):
    """What a worker process is started with (the frameworks read these at import)."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "users"))
    seen: dict[str, str] = {}

    class Stop(Exception):
        pass

    def popen(cmd, **kwargs):
        seen.update(kwargs["env"])
        raise Stop

    run = BackendRun("numpy-cpu", TINY, 1, compile_cache=tmp_path / "cc" / "numpy")
    monkeypatch.setattr(subprocess, "Popen", popen)
    with pytest.raises(Stop):
        run.run()
    assert seen["CUPY_CACHE_DIR"] == str(tmp_path / "users")
    assert seen["JAX_COMPILATION_CACHE_DIR"] == str((tmp_path / "cc" / "numpy" / "jax")
                                                    .resolve())
    assert seen["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
    assert set(compile_cache_vars()) <= set(seen)


def _args(**kw) -> argparse.Namespace:
    base = {"compile_cache": None, "csv": "/r/raw/jax-gpu.csv", "env_name": "jax-cuda12"}
    return argparse.Namespace(**{**base, **kw})


def test_the_step_uses_its_environments_subfolder():
    assert step_compile_cache(_args()) == Path("/r/cache/compile/jax-cuda12")
    assert step_compile_cache(_args(compile_cache="/x/cc", env_name="jax-cuda13")) == \
        Path("/x/cc/jax-cuda13")
    assert step_compile_cache(_args(compile_cache="off")) is None


@pytest.fixture(scope="module")
def shipped() -> dict:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.mark.parametrize("value", [None, False, "off", "/scratch/cc", "caches"])
def test_the_key_takes_null_false_off_or_a_folder(shipped, value):
    cfg = copy.deepcopy(shipped)
    cfg["compile_cache_dir"] = value
    validate_config(cfg)


@pytest.mark.parametrize("value", [True, "", 3, ["a"]])
def test_a_bad_folder_names_its_key(shipped, value):
    cfg = copy.deepcopy(shipped)
    cfg["compile_cache_dir"] = value
    with pytest.raises(ConfigError, match=r"config key compile_cache_dir"):
        validate_config(cfg)


def test_a_bad_energy_choice_names_its_key(shipped):
    cfg = copy.deepcopy(shipped)
    cfg["energy"] = "fastest"
    with pytest.raises(ConfigError, match=r"config key energy"):
        validate_config(cfg)


def test_the_workflow_passes_the_folder(shipped, tmp_path):
    import gpubench.workflow as gw

    cfg = copy.deepcopy(shipped)
    cfg.update(results_dir=str(tmp_path / "res"), logs_dir=str(tmp_path / "logs"))
    wc = SimpleNamespace(backend="jax-gpu")

    def args(value):
        cfg["compile_cache_dir"] = value
        return shlex.split(gw.Plan(gw.check_config(cfg)).step_compile_cache_args(wc))

    assert args(None) == ["--compile-cache", f"{tmp_path / 'res'}/cache/compile"]
    assert args("/scratch/my cc") == ["--compile-cache", "/scratch/my cc"]
    for evil in ("a; rm -rf ~", "$(touch /tmp/gpubench-pwned)", "`id`"):
        assert args(evil) == ["--compile-cache", evil]  # one argument, never run
    assert args(False) == args("off") == ["--compile-cache", "off"]


def test_a_rerun_of_a_jax_cpu_step_meets_a_warm_cache(tmp_path, monkeypatch):
    """The real thing on the CPU: JAX's persistent cache in the step's folder, stored by
    the first run (cold), found by the second (warm)."""
    pytest.importorskip("jax")
    for var in (*compile_cache_vars(), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "JAX_ENABLE_COMPILATION_CACHE"):
        monkeypatch.delenv(var, raising=False)
    folder = tmp_path / "cache" / "compile" / "jax-cpu"
    states = []
    for run in ("first", "second"):
        csv = tmp_path / "raw" / f"{run}.csv"
        run_backend("jax-cpu", TINY, 1, str(csv), str(tmp_path / "raw" / f"{run}.s.csv"),
                    compile_cache=folder)
        df = results.read_timings(csv)
        assert set(df["status"]) == {"ok"}, df["reason"].tolist()
        states.append(set(df["cache_state"]))
    assert states == [{"cold"}, {"warm"}]
    assert any((folder / "jax").iterdir())


def test_the_step_command_passes_the_folder_through(tmp_path):
    """``gpubench step --compile-cache off`` runs without a folder; the default puts
    the caches under the results folder (here: NumPy, which compiles nothing, so only
    the option's plumbing is checked)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    csv = tmp_path / "res" / "raw" / "numpy-cpu.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "gpubench", "step", "--backend", "numpy-cpu", "--threads",
         "1", "--config-json", json.dumps(TINY), "--csv", str(csv), "--samples",
         str(tmp_path / "res" / "raw" / "numpy-cpu.samples.csv")],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    where = (tmp_path / "res" / "cache" / "compile" / "system").resolve()
    assert f"compilation caches under {where}" in proc.stderr


def test_a_steps_workers_never_see_the_unroll_override():
    """$GPUBENCH_UNROLL is for scripts comparing unroll factors: a benchmark step's rows
    launch the code's own (their rows record no other), whatever the caller set."""
    from gpubench.runner import worker_environment

    env = worker_environment({"CUPY_CACHE_DIR": "/c"}, 2,
                             {"GPUBENCH_UNROLL": "4", "HOME": "/h", "PYTHONPATH": "/x"})
    assert "GPUBENCH_UNROLL" not in env
    assert env["HOME"] == "/h" and env["CUPY_CACHE_DIR"] == "/c"
    assert env["PYTHONPATH"].endswith(os.pathsep + "/x")
