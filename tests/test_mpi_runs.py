"""MPI jobs on real ranks (``mpiexec -n 2``): NumPy, JAX on CPU, Numba's CUDA simulator;
faults (an agreed error, a dead rank, a hung rank); the Snakemake steps end to end."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpubench.mpi import schema, step

ROOT = Path(__file__).resolve().parents[1]

try:
    import mpi4py  # noqa: F401

    HAVE_MPI4PY = True
except ImportError:
    HAVE_MPI4PY = False

pytestmark = pytest.mark.skipif(
    not (shutil.which("mpiexec") and HAVE_MPI4PY),
    reason="needs mpiexec (apt-get install openmpi-bin libopenmpi-dev) and mpi4py")

TINY = {
    "device_selection": {},
    "reduction": {"sizes": [1000]},
    "matmul": {"sizes": [24]},
    "monte_carlo_pi": {"sizes": [20000]},
    "grad_avg": {"sizes": [100]},
    "halo": {"sizes": [64], "steps": 3},
    "halo_overlap": {"sizes": [64], "steps": 3},
    "p2p": {"min_bytes": 8, "max_bytes": 64},
    "allreduce": {"min_bytes": 8, "max_bytes": 64},
    "multi_gpu": {"sizes": [512]},
    "peer_copy": {"min_bytes": 8, "max_bytes": 64},
}


def config(time_limit: float = 60, **mpi):
    return {"harness": {"seed": 3}, "mpi": {
        "time_limit_s": time_limit, "oversubscribe": True, "jobs": TINY,
        "harness": {"warmup": 1, "min_samples": 3, "max_samples": 10, "max_time_s": 0.01},
        **mpi}}


def run(job, backend, tmp_path, ranks=2, **kw):
    s = step.run_step(job, backend, ranks, config(**kw), str(tmp_path / "r.csv"),
                      str(tmp_path / "s.csv"))
    return schema.read(tmp_path / "r.csv"), s


@pytest.mark.parametrize("job", ["device_selection", "reduction", "matmul", "monte_carlo_pi",
                                 "grad_avg", "halo", "halo_overlap", "p2p", "allreduce"])
def test_numpy_ranks_match_the_single_rank_reference(job, tmp_path):
    frame, s = run(job, "numpy-cpu", tmp_path)
    ok = frame[frame["status"] == "ok"]
    if job == "device_selection":  # the launcher strategy needs srun; the rest apply
        assert set(frame.loc[frame["status"] != "ok", "mode"]) == {"launcher"}
    else:
        assert len(ok) == len(frame), frame[["status", "reason"]]
    assert (ok["rel_err"] <= ok["tolerance"]).all()
    assert (ok["samples"] >= (1 if job == "device_selection" else 3)).all()
    assert (ok["median_s"] > 0).all()
    assert (frame["ranks"] == 2).all() and (frame["path"].isin(["host", "n/a"])).all()
    assert frame["mpi_library"].str.len().min() > 0
    assert frame["launcher"].str.contains("mpiexec -n 2").all()
    if job == "allreduce":
        assert (ok["bus_gbps"] == ok["gbps"]).all()  # 2(n-1)/n = 1 at n = 2
    if job == "p2p":
        assert (ok["latency_us"] > 0).all()
    assert len(s.samples) == int(ok["samples"].sum())
    if job != "device_selection":  # no timed loop there: no split
        assert_split(ok)


def assert_split(ok):
    """Compute and communication per call, agreed over ranks: the means fit in the
    mean step time (each rank's share fits in its own time, which is at most the
    slowest rank's), each at most its worst rank's, and communication was timed."""
    assert ok[["compute_s", "comm_s", "compute_max_s", "comm_max_s", "mean_s"]].notna().all(
        axis=None), ok
    assert ((ok["compute_s"] >= 0) & (ok["comm_s"] > 0)).all()
    assert (ok["compute_s"] + ok["comm_s"] <= ok["mean_s"] * (1 + 1e-9)).all(), ok
    assert (ok["compute_s"] <= ok["compute_max_s"] * (1 + 1e-12)).all()
    assert (ok["comm_s"] <= ok["comm_max_s"] * (1 + 1e-12)).all()


def test_halo_with_and_without_overlap_agree_and_hide_time(tmp_path):
    """The overlapped exchange computes the same numbers as the blocking one on the
    same data (the overlap job also checks this itself: wrong_result otherwise), and
    collecting both gives each overlapped row the communication it hid."""
    cfg = {"sizes": [4096], "steps": 4}
    frames = []
    for job in ("halo", "halo_overlap"):
        step.run_step(job, "numpy-cpu", 2, config(jobs={**TINY, job: cfg}),
                      str(tmp_path / f"{job}.csv"), str(tmp_path / f"{job}.s.csv"))
        frames.append(schema.read(tmp_path / f"{job}.csv"))
    both = schema.add_hidden(pd.concat(frames, ignore_index=True))
    assert (both["status"] == "ok").all(), both[["job", "status", "reason"]]
    by = both.set_index(["job", "mode"])
    for mode in ("strong", "weak"):
        blocking, overlap = by.loc[("halo", mode)], by.loc[("halo_overlap", mode)]
        assert overlap["rel_err"] == blocking["rel_err"]  # the same answer
        assert overlap["rel_err"] <= overlap["tolerance"]
        assert overlap["hidden_s"] == pytest.approx(blocking["comm_s"] - overlap["comm_s"])
    assert both.loc[both["job"] == "halo", "hidden_s"].isna().all()
    assert_split(both)


def test_jax_cpu_ranks_and_sharding(tmp_path):
    for job in ("reduction", "halo", "halo_overlap", "grad_avg"):
        frame, _ = run(job, "jax-cpu", tmp_path)
        assert (frame["status"] == "ok").all(), frame[["status", "reason"]]
        assert (frame["path"] == "staged").all()  # JAX arrays cannot receive in place
    frame, _ = run("multi_gpu", "jax-cpu", tmp_path)  # one process, 2 CPU devices
    assert (frame["status"] == "ok").all(), frame[["status", "reason"]]
    assert list(frame["mode"]) == ["jax_sharding", "jax_shard_map"]
    assert (frame["launcher"] == "none").all() and (frame["rel_err"] < 1e-6).all()


def test_numba_several_gpus_from_one_process_in_the_simulator(tmp_path, monkeypatch):
    """One process, one Numba context per device; the simulator has one device, so the
    2-device item says so in an error row and the 1-device item is checked."""
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    frame, _ = run("multi_gpu", "numba-gpu", tmp_path, ranks=1)
    assert list(frame["mode"]) == ["numba_devices"]
    assert frame["status"].iloc[0] == "ok", frame["reason"].iloc[0]
    assert frame["rel_err"].iloc[0] <= frame["tolerance"].iloc[0]
    frame, _ = run("multi_gpu", "numba-gpu", tmp_path, ranks=2)
    assert frame["status"].iloc[0] == "error"
    assert "2 GPUs needed, 1 visible" in frame["reason"].iloc[0]


def test_numba_cuda_simulator_direct_and_staged(tmp_path, monkeypatch):
    """The Numba CUDA ranks' kernels under NUMBA_ENABLE_CUDASIM (device arrays are host
    memory there, so a host MPI may read them: direct is forced on)."""
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    monkeypatch.setenv("GPUBENCH_MPI_CUDA_AWARE", "yes")
    for job in ("reduction", "halo", "halo_overlap", "allreduce", "monte_carlo_pi"):
        frame, _ = run(job, "numba-gpu", tmp_path)
        assert (frame["status"] == "ok").all(), frame[["status", "reason"]]
        if job in ("halo", "halo_overlap", "allreduce"):
            assert {"direct", "staged"} <= set(frame["path"])
        assert (frame["cuda_aware"] == "yes").all()


def test_direct_path_is_skipped_when_mpi_is_not_cuda_aware(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    monkeypatch.setenv("GPUBENCH_MPI_CUDA_AWARE", "no")
    frame, _ = run("allreduce", "numba-gpu", tmp_path)
    direct = frame[frame["path"] == "direct"]
    assert (direct["status"] == "skipped").all()
    assert direct["reason"].str.contains("not CUDA-aware").all()
    assert (frame.loc[frame["path"] != "direct", "status"] == "ok").all()


def test_an_agreed_error_is_recorded_and_the_next_item_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBENCH_MPI_FAULT", "raise_rank1")
    frame, _ = run("reduction", "numpy-cpu", tmp_path, jobs={
        **TINY, "reduction": {"sizes": [1000, 2000]}})
    assert list(frame["status"]) == ["error", "ok"]
    assert "rank 1: RuntimeError: injected fault" in frame["reason"].iloc[0]


def test_a_dead_rank_ends_with_a_clear_error_and_the_rest_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBENCH_MPI_FAULT", "die_rank1")
    t0 = time.monotonic()
    frame, _ = run("reduction", "numpy-cpu", tmp_path, time_limit=60, jobs={
        **TINY, "reduction": {"sizes": [1000, 2000]}})
    assert time.monotonic() - t0 < 60
    assert list(frame["status"]) == ["error", "ok"]
    reason = frame["reason"].iloc[0]
    assert "exited with code 7" in reason and "rank 1" in reason


def test_a_hung_rank_is_killed_at_the_time_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBENCH_MPI_FAULT", "hang_rank1")
    t0 = time.monotonic()
    frame, _ = run("reduction", "numpy-cpu", tmp_path, time_limit=6, jobs={
        **TINY, "reduction": {"sizes": [1000, 2000]}})
    assert time.monotonic() - t0 < 6 + 15
    assert (frame["status"] == "error").all()
    assert "timed out after" in frame["reason"].iloc[0]
    assert "time limit" in frame["reason"].iloc[1]


@pytest.mark.workflow
def test_snakemake_mpi_steps_produce_mpi_csv(tmp_path):
    cfg = yaml.safe_load((ROOT / ".test" / "config" / "config.yaml").read_text())
    # --configfile is merged over config/config.yaml: switch its other jobs off
    jobs = {job: {"enabled": False} for job in TINY}
    jobs.update(reduction=TINY["reduction"], halo=TINY["halo"], p2p=TINY["p2p"])
    cfg["mpi"].update(backends=["numpy-cpu", "cupy-gpu"], jobs=jobs)
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    res = tmp_path / "results"
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    out = subprocess.run([snakemake, "--cores", "2", "--configfile", str(cfg_path),
                          "--config", f"results_dir={res}", f"logs_dir={tmp_path}/logs",
                          "--", f"{res}/mpi.csv"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONWARNINGS": ""})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    frame = schema.read(res / "mpi.csv")
    assert set(frame["job"]) == {"reduction", "halo", "p2p"}
    cpu = frame[frame["backend"] == "numpy-cpu"]
    assert (cpu["status"] == "ok").all(), cpu[["job", "status", "reason"]]
    weak = cpu[(cpu["job"] == "halo") & (cpu["mode"] == "weak")].set_index("ranks")
    assert weak.loc[1, "efficiency"] == pytest.approx(1.0) and weak.loc[2, "efficiency"] > 0
    gpu = frame[frame["backend"] == "cupy-gpu"]
    if not Path("/dev/nvidiactl").exists():
        assert (gpu["status"] == "unavailable").all() and (gpu["reason"].str.len() > 5).all()
    assert (res / "mpi_samples.csv").exists()
    assert (res / "mpi" / "raw" / "p2p.numpy-cpu.n2.csv").exists()
    assert not (res / "mpi" / "raw" / "p2p.numpy-cpu.n1.csv").exists()
