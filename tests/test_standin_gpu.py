"""A GPU framework added as a folder (tests/standin_gpu/, ``GPUBENCH_PLUGINS=standin_gpu``):
found as the framework packages of ``gpubench/backends/`` are, and every hook a real GPU
framework has runs without a GPU: the single-device path with its event timer, its
memory probe and its persistent compilation cache; one process driving several devices;
the probe's ceilings and energy copy."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import pytest
from conftest import _plugin
from test_registry_complete import backend_problems

from gpubench import results
from gpubench.backends import BACKENDS

ID = "standin_gpu-gpu"


@pytest.fixture
def standin_gpu(monkeypatch: pytest.MonkeyPatch):
    """The plugin loaded (here and in workers); its backend registered for this test only."""
    before = dict(BACKENDS)
    name = _plugin(monkeypatch, "standin_gpu")
    yield name
    for key in set(BACKENDS) - set(before):
        del BACKENDS[key]


def test_the_folder_is_found_and_declares_its_facts(standin_gpu):
    from gpubench.backends import backend_classes
    from gpubench.runner import compile_cache_vars, step_environment

    cls = backend_classes()[ID]
    assert BACKENDS[ID] == "standin_gpu.adapter:StandinGPU"
    assert backend_problems(cls) == []
    assert compile_cache_vars()["GPUBENCH_STANDIN_GPU_CACHE_DIR"] == "standin_gpu"
    assert step_environment("/c", {})["GPUBENCH_STANDIN_GPU_CACHE_DIR"].endswith(
        "standin_gpu")


def _run(tmp_path, name: str, cache):
    from gpubench.runner import run_backend

    cfg = {"threads": [1], "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.05},
           "kernels": {"vector_add": {"sizes": [1000], "dtypes": ["float32"]}}}
    csv, samples = tmp_path / f"{name}.csv", tmp_path / f"{name}-s.csv"
    run_backend(ID, cfg, 1, str(csv), str(samples), compile_cache=cache)
    return results.read_timings(csv)


def test_rows_read_its_memory_probe_and_its_compile_cache(standin_gpu, tmp_path):
    cache = tmp_path / "cache"
    first = _run(tmp_path, "first", cache)
    assert set(first["status"]) == {"ok"}, first[["status", "reason"]]
    assert (first["timer"] == "standin_event").all()
    row = first.iloc[0]
    assert row["memory_meter"] == "standin_live_bytes", row["memory_reason"]
    assert row["memory_call_bytes"] == 4000  # the call's temporary on the device
    assert row["memory_peak_bytes"] >= 3 * 4000  # a, b, c resident, plus the temporary
    assert set(first["cache_state"]) == {"cold"}
    assert (cache / "standin_gpu" / "vector_add-float32.bin").is_file()
    again = _run(tmp_path, "again", cache)
    assert set(again["cache_state"]) == {"warm"}


def test_one_process_drives_several_stand_in_devices(standin_gpu):
    from standin_gpu.adapter import StandinGPU

    from gpubench.mpi import jobs
    from gpubench.timing import Settings

    mpi = SimpleNamespace(Wtime=time.perf_counter, MAX="max")
    comm = SimpleNamespace(Get_rank=lambda: 0, Get_size=lambda: 1,
                           allreduce=lambda v, op=None: v)
    item = {"size": 1001, "dtype": "float32", "mode": "standin_devices", "devices": 3}
    ctx = jobs.Context(comm, mpi, StandinGPU(), item,
                       Settings.mpi(warmup=0, min_samples=3, max_samples=3), seed=1)
    res = jobs.JOB_FUNCTIONS["multi_gpu"](ctx)
    assert res["status"] == "ok" and res["rel_err"] <= res["tolerance"], res


def test_the_probe_measures_through_it(standin_gpu, monkeypatch):
    from standin_gpu.adapter import StandinGPU

    from gpubench import ceilings, probe

    assert StandinGPU in ceilings.device_measurers()
    monkeypatch.setattr(ceilings, "device_measurers", lambda: [StandinGPU])
    out = ceilings.gpu_ceilings(copy_bytes=1 << 20, gemm_n=64, transfer_bytes=[4096])
    assert out["d2d_copy_method"] == "np.copyto (stand-in)"
    assert math.isfinite(out["sgemm_gflops"]) and out["sgemm_gflops"] > 0
    copy, wait = probe._steady_copy(1 << 10)
    copy()
    wait()
