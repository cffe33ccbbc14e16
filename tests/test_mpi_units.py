"""MPI jobs without launching ranks: launcher commands, device selection, CUDA-awareness,
the derived numbers (bus bandwidth, efficiency), planning, and the checks that stop a
step before it launches."""

from __future__ import annotations

import math
import shutil
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from gpubench.mpi import devices, launch, schema, step

# -- launcher ---------------------------------------------------------------------------


def test_launcher_auto_is_srun_inside_slurm_else_mpiexec():
    assert launch.choose_kind("auto", {"SLURM_JOB_ID": "42"}) == "srun"
    assert launch.choose_kind("auto", {}) == "mpiexec"
    assert launch.choose_kind("mpiexec", {"SLURM_JOB_ID": "42"}) == "mpiexec"
    with pytest.raises(ValueError, match="unknown launcher"):
        launch.choose_kind("aprun", {})


@pytest.mark.parametrize(("text", "flavour"), [
    ("mpiexec (OpenRTE) 4.1.6\n\nReport bugs to http://www.open-mpi.org/", "openmpi"),
    ("mpirun (Open MPI) 5.0.3", "openmpi"),
    ("HYDRA build details:\n    Version: 4.2.0", "mpich"),
    ("Intel(R) MPI Library for Linux* OS, Version 2021.10", "intel"),
    ("something else", "unknown"),
])
def test_flavour_from_version_text(text, flavour):
    assert launch.flavour_of(text) == flavour


def test_mpiexec_command_oversubscribe_only_when_allowed_and_quoted_text():
    ompi = launch.Launcher("mpiexec", "/usr/bin/mpiexec", "openmpi")
    prog = ["/opt/my env/python", "-m", "gpubench.mpi.worker", "--out", "a b.jsonl"]
    cmd = launch.build_command(ompi, 4, prog)
    assert cmd[:3] == ["/usr/bin/mpiexec", "-n", "4"] and "--oversubscribe" not in cmd
    assert cmd[-len(prog):] == prog  # a list: no shell, spaces survive
    assert "--oversubscribe" in launch.build_command(ompi, 4, prog, oversubscribe=True)
    text = launch.command_text(cmd)
    assert "'/opt/my env/python'" in text and "'a b.jsonl'" in text
    mpich = launch.Launcher("mpiexec", "/usr/bin/mpiexec", "mpich")
    assert "--oversubscribe" not in launch.build_command(mpich, 2, prog, oversubscribe=True)
    with pytest.raises(ValueError):
        launch.build_command(ompi, 0, prog)


def test_srun_command_asks_one_gpu_per_task_and_kills_on_bad_exit():
    srun = launch.Launcher("srun", "/usr/bin/srun", "slurm")
    cmd = launch.build_command(srun, 2, ["python"], srun_mpi="pmi2", gpus_per_rank=1,
                               extra_args=["--cpu-bind=cores"])
    assert cmd == ["/usr/bin/srun", "--ntasks=2", "--mpi=pmi2", "--kill-on-bad-exit=1",
                   "--gpus-per-task=1", "--cpu-bind=cores", "python"]


def test_missing_launcher_says_how_to_install(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    found, why = launch.find_launcher("mpiexec", {})
    assert found is None and "apt-get install openmpi-bin" in why


# -- CUDA-aware MPI ---------------------------------------------------------------------

OMPI_INFO = """mca:mpi:base:param:mpi_built_with_cuda_support:value:{}
mca:mpi:base:param:mpi_built_with_cuda_support:source:default
"""


def test_parse_ompi_info():
    assert launch.parse_ompi_info(OMPI_INFO.format("true")) is True
    assert launch.parse_ompi_info(OMPI_INFO.format("false")) is False
    assert launch.parse_ompi_info("nothing relevant") is None


def test_cuda_aware_config_then_env_then_ompi_info(monkeypatch):
    assert launch.cuda_aware_static({"GPUBENCH_MPI_CUDA_AWARE": "yes"}, "no")[0] == "no"
    assert launch.cuda_aware_static({"GPUBENCH_MPI_CUDA_AWARE": "yes"}) == (
        "yes", "GPUBENCH_MPI_CUDA_AWARE")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert launch.cuda_aware_static({})[0] == "unknown"

    class FakeMPI:
        @staticmethod
        def Query_cuda_support():
            return True

    assert launch.cuda_aware_runtime(FakeMPI, "unknown") == ("yes", "MPIX_Query_cuda_support")
    assert launch.cuda_aware_runtime(FakeMPI, "no")[0] == "no"
    assert launch.cuda_aware_runtime(object(), "unknown")[0] == "unknown"


# -- device selection (the workshop book, §9.4) -----------------------------------------

@pytest.mark.parametrize("var", devices.LOCAL_RANK_VARS)
def test_local_rank_from_each_launcher_variable(var):
    assert devices.local_rank_from_env({var: "3"}) == (3, var)


def test_local_rank_prefers_open_mpi_and_ignores_junk():
    env = {"SLURM_LOCALID": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "2"}
    assert devices.local_rank_from_env(env) == (2, "OMPI_COMM_WORLD_LOCAL_RANK")
    assert devices.local_rank_from_env({"MPI_LOCALRANKID": "x"}) is None


def test_cuda_visible_devices_strategy_restricts_to_one_gpu_before_import():
    sel = devices.select("cuda_visible_devices", 5, 4, {"OMPI_COMM_WORLD_LOCAL_RANK": "1"})
    assert (sel.index, sel.visible, sel.physical) == (0, "1", "1")
    # an allocation that already restricted visibility: pick within it
    env = {"SLURM_LOCALID": "1", "CUDA_VISIBLE_DEVICES": "GPU-aaa,GPU-bbb"}
    sel = devices.select("cuda_visible_devices", 1, 2, env)
    assert sel.visible == "GPU-bbb" and sel.index == 0


def test_local_rank_strategy_wraps_modulo_visible_gpus():
    sel = devices.select("local_rank", 9, 4, {"MPI_LOCALRANKID": "5"})
    assert (sel.index, sel.visible, sel.source) == (1, None, "MPI_LOCALRANKID")


def test_local_rank_falls_back_to_the_shared_communicator():
    sel = devices.select("local_rank", 3, 4, {}, shared_local_rank=2)
    assert sel.index == 2 and "Split_type" in sel.source
    with pytest.raises(devices.DeviceSelectionError, match="OMPI_COMM_WORLD_LOCAL_RANK"):
        devices.select("local_rank", 3, 4, {})


def test_rank_modulo_and_shared_comm():
    assert devices.select("rank_modulo", 6, 4, {}).index == 2
    assert devices.select("shared_comm", 6, 4, {}, shared_local_rank=1).index == 1
    with pytest.raises(devices.DeviceSelectionError, match="needs MPI"):
        devices.select("shared_comm", 0, 4, {})


def test_launcher_strategy_needs_one_visible_gpu():
    sel = devices.select("launcher", 3, 1, {"CUDA_VISIBLE_DEVICES": "2"})
    assert (sel.index, sel.physical) == (0, "2")
    with pytest.raises(devices.DeviceSelectionError, match="gpus-per-task"):
        devices.select("launcher", 0, 4, {"CUDA_VISIBLE_DEVICES": "0,1"})


def test_no_gpu_and_unknown_strategy():
    with pytest.raises(devices.DeviceSelectionError, match="no GPU"):
        devices.select("rank_modulo", 0, 0, {})
    with pytest.raises(devices.DeviceSelectionError, match="unknown strategy"):
        devices.select("dice", 0, 2, {})


def test_auto_strategy():
    assert devices.auto_strategy("srun", {"CUDA_VISIBLE_DEVICES": "3"}) == "launcher"
    assert devices.auto_strategy("mpiexec", {"CUDA_VISIBLE_DEVICES": "3"}) == \
        "cuda_visible_devices"


def test_two_ranks_on_one_gpu_fail_loudly_unless_oversubscribed():
    uuids = ["GPU-a", "GPU-b", "GPU-a", ""]
    assert devices.shared_gpus(uuids) == {"GPU-a": [0, 2]}
    msg = devices.sharing_error(uuids, oversubscribe=False)
    assert "ranks 0, 2 share GPU-a" in msg and "mpi.oversubscribe" in msg
    assert devices.sharing_error(uuids, oversubscribe=True) == ""
    assert devices.sharing_error(["GPU-a", "GPU-b"], oversubscribe=False) == ""


# -- derived numbers ----------------------------------------------------------------------

def test_bus_bandwidth_is_the_nccl_tests_convention():
    assert schema.bus_bandwidth(100.0, 1) == 0.0
    assert schema.bus_bandwidth(100.0, 2) == pytest.approx(100.0)
    assert schema.bus_bandwidth(100.0, 4) == pytest.approx(150.0)
    assert schema.bus_bandwidth(100.0, 8) == pytest.approx(175.0)


def _rows(job, mode, times):
    rows = []
    for ranks, t in times.items():
        r = schema.empty_row()
        r.update(job=job, backend="numpy-cpu", ranks=ranks, size=1000, dtype="float64",
                 path="host", mode=mode, status="ok", median_s=t)
        rows.append(r)
    return rows


def test_strong_and_weak_scaling_efficiency():
    frame = schema.rows_frame(_rows("halo", "strong", {1: 8.0, 2: 5.0, 4: 2.5})
                              + _rows("halo", "weak", {1: 1.0, 4: 1.25})
                              + _rows("p2p", "", {2: 1.0}))
    out = schema.add_scaling(frame).set_index(["mode", "ranks"])
    assert out.loc[("strong", 2), "speedup"] == pytest.approx(1.6)
    assert out.loc[("strong", 4), "efficiency"] == pytest.approx(0.8)
    assert out.loc[("weak", 4), "efficiency"] == pytest.approx(0.8)
    assert math.isnan(out.loc[("weak", 4), "speedup"])
    assert math.isnan(out.loc[("", 2), "efficiency"])  # p2p has no scaling


def test_efficiency_needs_an_ok_single_rank_row():
    rows = _rows("reduction", "", {1: 1.0, 2: 0.6})
    rows[0]["status"], rows[0]["reason"] = "error", "boom"
    out = schema.add_scaling(schema.rows_frame(rows))
    assert out["efficiency"].isna().all()


def test_pct_of_link():
    """p2p bandwidth or allreduce bus bandwidth against the link, device buffers between
    two or more ranks only: a 1-rank NCCL allreduce is a local copy (it showed 440%)."""
    rows = _rows("p2p", "", {2: 1.0}) + _rows("allreduce", "nccl", {1: 1.0, 4: 1.0}) \
        + _rows("p2p", "", {2: 1.0})
    rows[0].update(gbps=225.0, link_gbps=450.0, path="staged")
    rows[1].update(gbps=1980.0, bus_gbps=0.0, link_gbps=450.0, path="direct")
    rows[2].update(gbps=220.0, bus_gbps=330.0, link_gbps=450.0, path="direct")
    rows[3].update(gbps=7.0, link_gbps=450.0, path="host", size=2000)
    pct = schema.add_link(schema.rows_frame(rows))["pct_of_link"].tolist()
    assert pct[0] == 50.0 and pct[2] == pytest.approx(100 * 330 / 450)
    assert math.isnan(pct[1]) and math.isnan(pct[3])


def test_validate_rejects_ok_rows_without_time_and_duplicates():
    rows = _rows("reduction", "", {1: 1.0})
    frame = schema.validate(schema.rows_frame(rows), "x")
    assert len(frame) == 1
    bad = schema.rows_frame(rows + rows)
    with pytest.raises(Exception, match="share a key"):
        schema.validate(bad, "x")
    rows[0]["median_s"] = math.nan
    with pytest.raises(Exception, match="positive median_s"):
        schema.validate(schema.rows_frame(rows), "x")


# -- planning ---------------------------------------------------------------------------

def test_powers_of_two():
    assert step.powers_of_two(1, 16) == [1, 2, 4, 8, 16]
    assert step.powers_of_two(3, 20) == [4, 8, 16]


def test_gpu_backends_plan_direct_and_staged_jax_only_staged():
    cfg = {"jobs": {"p2p": {"min_bytes": 4, "max_bytes": 8}}}
    cupy = {(i["path"], i["size"]) for i in step.plan("p2p", "cupy-gpu", 2, cfg)}
    assert cupy == {(p, s) for p in ("host", "direct", "staged") for s in (4, 8)}
    jax = {i["path"] for i in step.plan("p2p", "jax-gpu", 2, cfg)}
    assert jax == {"host", "staged"}
    assert {i["path"] for i in step.plan("halo", "numpy-cpu", 2, {})} == {"host"}
    halo = step.plan("halo", "numba-gpu", 2, {"jobs": {"halo": {"sizes": [64]}}})
    assert {(i["mode"], i["path"]) for i in halo} == {
        (m, p) for m in ("strong", "weak") for p in ("direct", "staged")}
    # a job's own warm-up time reaches its items (and only its)
    cfg = {"jobs": {"halo": {"sizes": [64], "steps": 3, "warmup_s": 0.3}}}
    assert {str(i["params"]) for i in step.plan("halo", "cupy-gpu", 2, cfg)} == {
        str({"steps": 3, "warmup_s": 0.3})}
    assert all("warmup_s" not in i["params"] for i in step.plan("p2p", "cupy-gpu", 2, cfg))


def test_allreduce_and_p2p_plan_nccl_for_cupy_only():
    cfg = {"jobs": {"allreduce": {"min_bytes": 4, "max_bytes": 4},
                    "p2p": {"min_bytes": 4, "max_bytes": 4}}}
    for job in ("allreduce", "p2p"):
        items = step.plan(job, "cupy-gpu", 2, cfg)
        assert {i["path"] for i in items if i["mode"] == "nccl"} == {"direct"}
        assert "nccl" not in {i["mode"] for i in step.plan(job, "numba-gpu", 2, cfg)}
        # NCCL needs no CUDA-aware MPI: never pre-skipped for it
        nccl = next(i for i in items if i["mode"] == "nccl")
        assert step.pre_skip(job, "cupy-gpu", 2, nccl, "no") == ""


def test_items_that_cannot_run_are_skipped_with_a_reason():
    item = {"path": "direct", "mode": "", "size": 8}
    assert "not CUDA-aware" in step.pre_skip("p2p", "cupy-gpu", 2, item, "no")
    assert step.pre_skip("p2p", "cupy-gpu", 2, item, "yes") == ""
    assert "2 ranks" in step.pre_skip("p2p", "numpy-cpu", 1, {**item, "path": "host"}, "n/a")


# -- checks before launching --------------------------------------------------------------

def _config(**mpi):
    return {"harness": {"seed": 1}, "mpi": {"time_limit_s": 30, **mpi,
                                            "jobs": {"reduction": {"sizes": [64, 128]}}}}


def test_missing_launcher_gives_unavailable_rows(tmp_path, monkeypatch):
    cfg = _config(mpiexec="no-such-mpiexec")
    s = step.run_step("reduction", "numpy-cpu", 2, cfg, str(tmp_path / "r.csv"),
                      str(tmp_path / "s.csv"))
    frame = schema.read(tmp_path / "r.csv")
    assert len(frame) == 2 and (frame["status"] == "unavailable").all()
    assert frame["reason"].str.contains("no-such-mpiexec").all()
    assert not s.samples


def test_interpreter_without_mpi4py_gives_unavailable_rows(tmp_path):
    if not shutil.which("mpiexec"):
        pytest.skip("needs mpiexec on PATH (apt-get install openmpi-bin)")
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S \"$@\"\n")
    fake.chmod(0o755)  # an interpreter with no site-packages: no mpi4py
    step.run_step("reduction", "numpy-cpu", 1, _config(), str(tmp_path / "r.csv"),
                  str(tmp_path / "s.csv"), python=str(fake))
    frame = schema.read(tmp_path / "r.csv")
    assert (frame["status"] == "unavailable").all()
    assert frame["reason"].str.contains("mpi4py cannot load").all()


def test_no_gpu_gives_unavailable_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(devices, "nvml_gpu_count", lambda env=None: (0, "no usable CUDA GPU"))
    step.run_step("reduction", "cuda_python-gpu", 2, _config(), str(tmp_path / "r.csv"),
                  str(tmp_path / "s.csv"))
    frame = schema.read(tmp_path / "r.csv")
    assert (frame["status"] == "unavailable").all()
    assert (frame["reason"] == "no usable CUDA GPU").all()


def test_more_ranks_than_gpus_is_skipped_unless_oversubscribe(tmp_path, monkeypatch):
    if not shutil.which("mpiexec"):
        pytest.skip("needs mpiexec on PATH (apt-get install openmpi-bin)")
    pytest.importorskip("mpi4py")
    monkeypatch.setattr(devices, "nvml_gpu_count", lambda env=None: (1, ""))
    s = step.Step("reduction", "numba-gpu", 2, _config())
    status, reason = s.unavailable_reason({**__import__("os").environ})
    assert status == "skipped"
    assert "2 ranks need 2 GPUs" in reason and "mpi.oversubscribe" in reason
    s = step.Step("reduction", "numba-gpu", 2, _config(oversubscribe=True))
    assert s.unavailable_reason({**__import__("os").environ}) == ("", "")


def test_collect_adds_efficiency(tmp_path):
    rows = _rows("halo", "weak", {1: 1.0, 2: 1.1})
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    schema.rows_frame(rows[:1]).to_csv(a, index=False)
    schema.rows_frame(rows[1:]).to_csv(b, index=False)
    samples = tmp_path / "s.csv"
    pd.DataFrame(columns=list(schema.SAMPLE_COLUMNS)).to_csv(samples, index=False)
    out = tmp_path / "mpi.csv"
    assert step.collect_main(["--inputs", str(a), str(b), "--samples", str(samples),
                              str(samples), "--out", str(out), "--out-samples",
                              str(tmp_path / "ms.csv")]) == 0
    frame = schema.read(out).set_index("ranks")
    assert frame.loc[2, "efficiency"] == pytest.approx(1 / 1.1)


def test_halo_error_checks_each_slab_against_the_periodic_reference():
    """The per-rank check (edge cells from the neighbours) equals the global np.roll
    reference, and sees a single wrong cell at a slab's edge."""
    from types import SimpleNamespace

    from mpi4py import MPI

    from gpubench.mpi.jobs.halo import HALO_ALPHA, halo_error

    ctx = SimpleNamespace(comm=MPI.COMM_SELF, rank=0, size=1)
    u0 = np.random.default_rng(3).random(50)
    ref = u0.copy()
    for _ in range(4):
        ref = ref + HALO_ALPHA * (np.roll(ref, 1) - 2 * ref + np.roll(ref, -1))
    assert halo_error(ctx, u0, ref, 4) < 1e-15
    wrong = ref.copy()
    wrong[0] += 1e-3  # the cell that needs the (periodic) left neighbour's data
    assert halo_error(ctx, u0, wrong, 4) == pytest.approx(1e-3 / np.linalg.norm(ref), rel=1e-6)
    # slabs thinner than the stencil's reach take the gathered path: same answer
    assert halo_error(ctx, u0[:3], np.zeros(3), 4) > 0.5


@pytest.mark.parametrize(("warmup", "warmup_s", "job_s", "least"),
                         [(3, 0.0, None, 3), (0, 0.0, None, 0), (1, 0.05, None, 2),
                          (1, 0.0, 0.05, 2), (2, 0.05, 0.0, 2)])
def test_warm_up_runs_the_count_then_until_the_time_has_passed(warmup, warmup_s, job_s,
                                                               least):
    """Warm-up is ``warmup`` calls, then more until ``warmup_s`` has passed (a GPU idle
    during a host-side check needs time, not a call count, to reach its clocks).

    The elapsed time is read from the job's own clock (``mpi.Wtime``, recorded here), so
    a loaded machine that preempts the test between two readings cannot fail it; nor
    can a 10 ms sleep that lasts longer: past the counted call, one more is all the
    time rule guarantees (five were expected once, and a loaded machine ran fewer)."""
    import time

    from mpi4py import MPI

    from gpubench.mpi.jobs import Context, Settings

    class Clock:
        """MPI, with every ``Wtime`` reading kept."""

        readings: list[float] = []

        def __getattr__(self, name: str):
            return getattr(MPI, name)

        def Wtime(self) -> float:
            self.readings.append(time.perf_counter())
            return self.readings[-1]

    clock = Clock()
    clock.readings = []
    calls: list[float] = []
    item = {"params": {"warmup_s": job_s}} if job_s is not None else {}
    ctx = Context(comm=MPI.COMM_SELF, mpi=clock, ad=None, item=item, seed=1,
                  settings=Settings(warmup=warmup, warmup_s=warmup_s))
    warmup_s = warmup_s if job_s is None else job_s  # the job's own value wins
    n = ctx.warm_up(lambda: (time.sleep(0.01), calls.append(time.perf_counter())))
    assert n == len(calls) >= least
    if warmup_s:  # stopped at the first check after the time had passed
        start, *checks = clock.readings
        assert checks[-1] - start >= warmup_s > checks[-2] - start
        # one check after each call beyond the counted ones, the last at the last call
        assert len(checks) == n - warmup + 1 and checks[-1] >= calls[-1]
    else:
        assert n == warmup


RNG_SCRIPT = r"""
import json
from gpubench.backends import load_backend
from gpubench.mpi.jobs.monte_carlo_pi import rank_seed
be = load_backend("numba-gpu"); be.start_rank(None)
def first(rank):
    mc = be.build_kernel("monte_carlo_pi", "default", 3000, "float64", {},
                         seed=rank_seed(7, rank))
    return round(float(be.to_host(mc())) * 3000 / 4)
a, b, c = first(0), first(0), first(1)
print(json.dumps({"same": a == b, "other_stream": c != a, "hits": a,
                  "seeds_differ": rank_seed(7, 0) != rank_seed(7, 1)}))
"""


def test_numba_monte_carlo_ranks_draw_reproducible_independent_streams():
    """The MPI Monte Carlo job runs the kernel's xoroshiro implementation seeded per
    rank: the same (seed, rank) draws the same points, another rank another stream."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(root / "src")}
    proc = subprocess.run([sys.executable, "-c", RNG_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["same"] and res["other_stream"] and res["seeds_differ"], res
    assert 0.6 < res["hits"] / 3000 < 0.95  # about pi/4 of the points


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_python_rank_launches_match_the_ptx(dtype):
    """What a CUDA Python rank launches, recorded instead of run: the kernels the jobs
    compute with between messages (stencil.cu, linear_grad.cu, axpy.cu, built as any
    kernel is) and the matmul kernel's tiled implementation on a rank's rows of A
    (fewer than n: matmul.cu's m) take the arguments their PTX entries declare, on a
    grid that covers the rows."""
    from test_cuda_sources import (
        FakeArray,
        _fake_cuda_python_backend,
        arg_bytes,
        ptx_entries,
        ptx_of,
    )

    entries = {}
    for kernel in ("stencil", "linear_grad", "axpy", "matmul"):
        entries.update(ptx_entries(ptx_of(kernel)))
    be = _fake_cuda_python_backend()
    u, out = FakeArray((66,), dtype), FakeArray((66,), dtype)
    assert be.build_kernel("stencil", "interior", 64, dtype, {})(u, out, 0.25) is out
    p, x, y = FakeArray((1010,), dtype), FakeArray((7, 100), dtype), FakeArray((7, 10), dtype)
    assert be.build_kernel("linear_grad", "default", 7, dtype, {})(p, x, y).shape == (1010,)
    axpy = be.build_kernel("axpy", "default", 1010, dtype, {})
    assert axpy(p, FakeArray((1010,), dtype), 1e-3).shape == (1010,)
    a, b, c = FakeArray((5, 40), dtype), FakeArray((40, 40), dtype), FakeArray((5, 40), dtype)
    be.build_kernel("matmul", "default", 40, dtype, {"a": a, "b": b}, {"c": c})()
    names = [launch[1] for launch in be.launches]
    sfx = "f32" if dtype == "float32" else "f64"
    assert names == [f"stencil_{sfx}", f"linear_grad_residual_{sfx}", f"linear_grad_{sfx}",
                     f"axpy_{sfx}", f"matmul_tiled_{sfx}"]
    for _src, name, _grid, _block, args, _shmem in be.launches:
        assert [arg_bytes(arg) for arg in args] == entries[name]["params"], name
    grid, args = be.launches[-1][2], be.launches[-1][4]
    assert grid == (2, 1) and int(args[3]) == 5 and int(args[4]) == 40  # m rows, n


def test_mpi_backends_are_the_registered_backends_that_say_so():
    """The built-in backends some MPI job runs on (plugins a test loaded may add more):
    ``mpi = True`` for the jobs across ranks, a ``multi_device`` mode for the one-process
    several-GPU job (PyTorch has only that one), ``peer_copy`` for the link reference."""
    from gpubench.backends import BACKENDS
    from gpubench.mpi import job_runs_on, mpi_backends

    built_in = [b for b in mpi_backends() if BACKENDS[b].startswith("gpubench.")]
    assert built_in == ["numpy-cpu", "jax-cpu", "cupy-gpu", "numba-gpu", "jax-gpu",
                        "torch-gpu", "cuda_python-gpu"]
    assert job_runs_on("multi_gpu", "torch-gpu") and not job_runs_on("halo", "torch-gpu")
    assert not job_runs_on("multi_gpu", "cuda_python-gpu")
    assert [b for b in built_in if job_runs_on("peer_copy", b)] == ["cupy-gpu"]


# -- several nodes (tests/test_slurm_two_node.py runs them on a two-node cluster) ---------


def test_modulo_runs_over_the_gpus_the_rank_sees():
    """n_gpus may count GPUs of another node (or none, without NVML): the index must
    stay within this rank's CUDA_VISIBLE_DEVICES."""
    env = {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_LOCALID": "1"}
    sel = devices.select("rank_modulo", 2, 4, env)
    assert (sel.index, sel.physical) == (0, "0")
    assert devices.select("local_rank", 3, 4, env).physical == "1"
    assert devices.select("local_rank", 3, 4, {"SLURM_LOCALID": "3"}).physical == "3"


def test_srun_placement_is_not_bounded_by_the_parent_node(monkeypatch):
    """Under srun the ranks may span nodes: the parent's cores do not cap them."""
    monkeypatch.setattr(launch, "find_launcher", lambda *a, **k: (
        launch.Launcher("srun", "/usr/bin/srun", "slurm"), ""))
    monkeypatch.setattr(step, "probe_python", lambda *a, **k: {
        "mpi": "Open MPI", "mpi4py": "4", "framework": "ok"})
    assert step.Step("reduction", "numpy-cpu", 4096, _config()).unavailable_reason(
        {}) == ("", "")
    monkeypatch.setattr(launch, "find_launcher", lambda *a, **k: (
        launch.Launcher("mpiexec", "/usr/bin/mpiexec", "openmpi"), ""))
    status, reason = step.Step("reduction", "numpy-cpu", 4096, _config()).unavailable_reason({})
    assert status == "skipped" and "4096 ranks on" in reason


def test_launch_files_live_next_to_the_step_output(tmp_path, monkeypatch):
    """Ranks on other nodes read the launch's spec: not in a node's own /tmp."""
    bases = []

    def launch_once(self, todo, base, env, limit):
        bases.append(base)
        for item in todo:
            self.fields[item["index"]] = {"status": "error", "reason": "not launched"}

    monkeypatch.setattr(step.Step, "unavailable_reason", lambda self, env: ("", ""))
    monkeypatch.setattr(step.Step, "launch_once", launch_once)
    out = tmp_path / "raw"
    step.run_step("reduction", "numpy-cpu", 2, _config(), str(out / "r.csv"),
                  str(out / "s.csv"))
    assert bases and bases[0].parent.parent == out
    assert sorted(p.name for p in out.iterdir()) == ["r.csv", "s.csv"]  # cleaned up


def test_srun_errors_say_why_the_ranks_ended():
    text = ("An MPI communication peer process has unexpectedly disconnected.\n"
            "srun: error: Node failure on node2\nsrun: error: node1: tasks 0-1: Killed\n")
    assert step.launcher_errors(text) == ("srun: error: Node failure on node2; "
                                          "srun: error: node1: tasks 0-1: Killed")
    assert step.launcher_errors("rank 1: ValueError\n") == ""


def test_ranks_sharing_a_gpu_skip_what_needs_one_each():
    """With fewer GPUs than ranks, NCCL and one process over several devices are
    skipped with the reason before launching; ranks the scheduler placed are not."""
    nccl = {"path": "direct", "mode": "nccl", "size": 8}
    assert "NCCL needs one GPU per rank: 2 ranks share 1" in step.pre_skip(
        "allreduce", "cupy-gpu", 2, nccl, "no", gpus_here=1)
    assert step.pre_skip("allreduce", "cupy-gpu", 2, nccl, "no", gpus_here=2) == ""
    assert step.pre_skip("allreduce", "cupy-gpu", 2, nccl, "no", gpus_here=None) == ""
    multi = {"path": "n/a", "mode": "cupy_devices", "size": 8, "devices": 2}
    assert "2 GPUs: 1 visible" in step.pre_skip("multi_gpu", "cupy-gpu", 2, multi, "n/a",
                                                gpus_here=1)
    assert step.pre_skip("multi_gpu", "cupy-gpu", 2, multi, "n/a", gpus_here=2) == ""


def test_ranks_sharing_a_gpu_run_with_nccl_skipped_and_jax_not_preallocating(tmp_path,
                                                                           monkeypatch):
    envs = []

    class FakeLauncher:
        returncode = 1

        def __init__(self, cmd, env, **kwargs):
            envs.append(env)

        def wait(self, timeout=None):
            return 1

    def one_gpu(self, env):
        self.n_gpus = 1
        self.launcher = launch.Launcher("mpiexec", "/usr/bin/mpiexec", "openmpi")
        return "", ""

    monkeypatch.setattr(step.Step, "unavailable_reason", one_gpu)
    monkeypatch.setattr(launch, "cuda_aware_static", lambda *a, **k: ("no", "test"))
    monkeypatch.setattr(step.subprocess, "Popen", FakeLauncher)
    cfg = _config(oversubscribe=True)
    cfg["mpi"]["jobs"] = {"allreduce": {"min_bytes": 4, "max_bytes": 8}}
    step.run_step("allreduce", "cupy-gpu", 2, cfg, str(tmp_path / "r.csv"),
                  str(tmp_path / "s.csv"))
    frame = schema.read(tmp_path / "r.csv")
    nccl = frame[frame["mode"] == "nccl"]
    assert len(nccl) == 2 and (nccl["status"] == "skipped").all()
    assert nccl["reason"].str.contains("NCCL needs one GPU per rank").all()
    assert envs and envs[0]["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    # NVLink multicast off in every GPU rank, whatever library the job reaches
    assert {v: envs[0][v] for v in step.NO_MULTICAST} == {
        "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1"}


def test_the_timed_loop_stops_at_max_time_s_of_wall_time():
    """A call far shorter than its loop's overhead (barrier, reduction) must not loop
    until its own times add up to ``max_time_s``: the cap is the loop's wall time, as on
    one device, agreed through the one reduction per sample."""
    from gpubench.mpi import jobs

    class Clock:
        now = 0.0

    class Comm:  # one rank; every barrier costs 1 s of wall time, a call 1 µs
        def Barrier(self):
            Clock.now += 1.0

        def Allreduce(self, send, recv, op):
            recv[:] = send

        def allgather(self, value):
            return [value]

    class Mpi:
        MAX = "max"

        @staticmethod
        def Wtime():
            return Clock.now

    def call():
        Clock.now += 1e-6

    settings = jobs.Settings(warmup=0, min_samples=3, max_samples=1000,
                             target_rel_spread=0.0, max_time_s=5.0)
    ctx = jobs.Context(Comm(), Mpi(), None, {}, settings, seed=1)
    samples = ctx.timed(call)
    assert 3 <= len(samples) <= 6  # not max_samples: 1000 µs of calls is not 5 s
    assert all(abs(s - 1e-6) < 1e-9 for s in samples)


class _Ring:
    """A one-rank periodic ring for the halo steps: messages to oneself, matched by tag
    (``Sendrecv``; ``Isend``/``Irecv`` delivered at ``Waitall``), and a clock that
    advances a fixed amount per reading."""

    def __init__(self) -> None:
        self.sent: dict[int, np.ndarray] = {}
        self.now = 0.0

    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return 1

    def Sendrecv(self, send, dest, sendtag, recvbuf, source, recvtag):
        recvbuf[...] = np.array(send, copy=True)

    def Isend(self, buf, dest, tag):
        self.sent[tag] = np.array(buf, copy=True)  # the value at posting time
        return ("send", tag, None)

    def Irecv(self, buf, source, tag):
        return ("recv", tag, buf)

    def allgather(self, value):
        return [value]

    def allreduce(self, value, op=None):
        return value


def _ring_ctx():
    from gpubench.backends.numpy.adapter import NumpyCPU
    from gpubench.mpi import jobs
    from gpubench.mpi.jobs import halo, halo_overlap

    ring = _Ring()

    class Request:
        @staticmethod
        def Waitall(requests):
            for kind, tag, buf in requests:
                if kind == "recv":
                    buf[...] = ring.sent.pop(tag)

    class Mpi:
        MAX = "max"
        SUM = "sum"

        @staticmethod
        def Wtime():
            ring.now += 1e-3
            return ring.now

    Mpi.Request = Request
    steps = SimpleNamespace(halo_blocking_step=halo.halo_blocking_step,
                            halo_overlap_step=halo_overlap.halo_overlap_step,
                            HALO_ALPHA=halo.HALO_ALPHA)
    return jobs.Context(ring, Mpi(), NumpyCPU(), {}, jobs.Settings(), seed=1), steps


@pytest.mark.parametrize("n", [1, 2, 3, 97])
def test_overlapped_halo_step_gives_the_blocking_answer_bit_for_bit(n):
    """Interior while the messages fly, then the edge cells: the same cells by the same
    formula as the blocking exchange, so the same numbers, to the last bit."""
    ctx, jobs = _ring_ctx()
    u0 = np.zeros(n + 2)
    u0[1:-1] = np.random.default_rng(n).random(n)
    states = []
    for take in (jobs.halo_blocking_step, jobs.halo_overlap_step):
        u, out = u0.copy(), u0.copy()
        for _ in range(7):
            u, out = take(ctx, u, out, n, "host", {})
        states.append(u[1:-1].copy())
    ref = u0[1:-1].copy()
    for _ in range(7):
        ref = ref + jobs.HALO_ALPHA * (np.roll(ref, 1) - 2 * ref + np.roll(ref, -1))
    assert np.array_equal(states[0], states[1])
    np.testing.assert_allclose(states[1], ref, rtol=1e-13, atol=1e-15)
    # the ghosts really travelled: without the exchange the answer is different
    if n > 1:
        assert not np.allclose(states[1], u0[1:-1])


def test_overlapped_halo_step_is_split_into_compute_and_communication():
    """Each step: posting and waiting counted as communication, the interior and the
    edge cells as computation (two clock readings each on the ring's clock)."""
    ctx, jobs = _ring_ctx()
    n = 16
    u, out = np.ones(n + 2), np.ones(n + 2)
    jobs.halo_overlap_step(ctx, u, out, n, "host", {})
    # four regions, each 1 ms apart on the ring's clock: 2 compute, 2 communication
    assert ctx.split.compute_s == pytest.approx(2e-3)
    assert ctx.split.comm_s == pytest.approx(2e-3)
    ctx.split.reset()
    jobs.halo_blocking_step(ctx, u, out, n, "host", {})
    assert ctx.split.compute_s == pytest.approx(1e-3)
    assert ctx.split.comm_s == pytest.approx(1e-3)


def test_split_is_agreed_as_the_mean_and_the_max_over_ranks():
    """Rank times per call: the mean is the split (it sums to at most the step), the
    max is the worst rank; a job that recorded nothing gets no split fields."""
    from gpubench.mpi import jobs

    class Comm:
        def allgather(self, value):  # this rank's per call, then two others'
            return [value, (0.4, 0.0), (0.0, 0.8)]

    ctx = jobs.Context(Comm(), None, None, {}, jobs.Settings(), seed=1)
    ctx.split.compute_s, ctx.split.comm_s = 0.8, 0.4  # over 4 calls: 0.2, 0.1 a call
    ctx.agree_split(4)
    assert ctx.split_fields == pytest.approx({"compute_s": 0.2, "comm_s": 0.3,
                                              "compute_max_s": 0.4, "comm_max_s": 0.8})

    class Idle:
        def allgather(self, value):
            return [value, value]

    idle = jobs.Context(Idle(), None, None, {}, jobs.Settings(), seed=1)
    idle.agree_split(3)
    assert idle.split_fields == {}


def test_hidden_time_is_the_blocking_halos_communication_less_the_overlapped():
    rows = []
    for job, comm, status in (("halo", 3e-3, "ok"), ("halo_overlap", 1e-3, "ok"),
                              ("reduction", 5e-3, "ok")):
        r = schema.empty_row()
        r.update(job=job, backend="numpy-cpu", ranks=2, size=64, dtype="float64",
                 path="host", mode="" if job == "reduction" else "weak", status=status,
                 median_s=1e-2, comm_s=comm)
        rows.append(r)
    other = dict(rows[1], ranks=4)  # no blocking row with 4 ranks: nothing to compare
    frame = schema.add_hidden(schema.rows_frame([*rows, other]))
    hidden = frame.set_index(["job", "ranks"])["hidden_s"]
    assert hidden[("halo_overlap", 2)] == pytest.approx(2e-3)
    assert np.isnan(hidden[("halo_overlap", 4)])
    assert np.isnan(hidden[("halo", 2)]) and np.isnan(hidden[("reduction", 2)])


# -- the link between GPUs, measured ------------------------------------------------------


def test_peer_copy_plans_both_directions_between_the_first_gpu_and_each_other():
    items = step.plan("peer_copy", "cupy-gpu", 3,
                      {"jobs": {"peer_copy": {"min_bytes": 1, "max_bytes": 4}}})
    assert [(it["mode"], it["size"]) for it in items] == [
        (m, s) for m in ("0->1", "1->0", "0->2", "2->0") for s in (1, 2, 4)]
    assert {it["devices"] for it in items} == {3} and {it["path"] for it in items} == {"n/a"}
    assert "needs 2 ranks" in step.pre_skip("peer_copy", "cupy-gpu", 1, items[0], "n/a")


def _link_rows():
    """Peer copies on host a (400 and 200 GB/s at the largest size), p2p and allreduce
    rows on hosts a and b."""
    rows = []

    def add(job, path, mode, size, gbps, host="a", ranks=2, **kw):
        r = schema.empty_row()
        r.update(job=job, backend="cupy-gpu", ranks=ranks, size=size, dtype="uint8",
                 path=path, mode=mode, status="ok", median_s=1.0, gbps=gbps, host=host, **kw)
        rows.append(r)

    add("peer_copy", "n/a", "0->1", 1024, 10.0)
    add("peer_copy", "n/a", "0->1", 1 << 28, 400.0)
    add("peer_copy", "n/a", "1->0", 1 << 28, 200.0)
    add("peer_copy", "n/a", "0->2", 1 << 28, 900.0)  # another pair: not the reference
    add("p2p", "direct", "", 1 << 28, 200.0)
    add("p2p", "host", "", 1 << 28, 8.0)
    add("p2p", "direct", "", 1 << 28, 200.0, host="b")
    add("allreduce", "direct", "nccl", 1 << 28, 100.0, bus_gbps=400 / 3, ranks=4)
    add("allreduce", "direct", "nccl", 1 << 28, 100.0, bus_gbps=0.0, ranks=1)
    return schema.rows_frame(rows)


def test_measured_link_is_the_harmonic_mean_of_the_reference_pair():
    """A round trip crosses the link once each way: 2 / (1/400 + 1/200) GB/s."""
    assert schema.link_reference(_link_rows()) == {"a": pytest.approx(800 / 3)}
    bad = _link_rows()
    bad.loc[2, ["status", "reason"]] = ["error", "boom"]  # 1->0 failed: 0->1 alone
    assert schema.link_reference(bad) == {"a": pytest.approx(400.0)}
    bad.loc[1, ["status", "reason"]] = ["wrong_result", "differs"]  # not the 1 KiB row
    assert schema.link_reference(bad) == {}


def test_pct_of_measured_link_only_between_ranks_on_the_same_host():
    out = schema.add_link(_link_rows())
    pct = out["pct_of_link_ref"].tolist()
    assert pct[4] == pytest.approx(75.0)  # p2p direct, 200 of 266.7 GB/s
    assert pct[7] == pytest.approx(50.0)  # allreduce bus bandwidth, 133.3 of 266.7
    assert out["link_ref_gbps"].iloc[4] == pytest.approx(800 / 3)
    # the peer copies themselves, host buffers, another host, one rank: none
    for i in (0, 1, 2, 3, 5, 6, 8):
        assert math.isnan(pct[i]), i
