"""Faults in one implementation cost one row, never the step: crash, hang, wrong, raise."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from gpubench import results
from gpubench.runner import BackendRun, plan, thread_counts

FAST = {"warmup": 1, "min_samples": 3, "max_samples": 20, "target_rel_spread": 0.5,
        "max_time_s": 0.01, "case_timeout_s": 5, "start_timeout_s": 60}


def _config(sizes=(1024, 4096, 8192)):
    return {"threads": [1], "harness": FAST,
            "kernels": {"vector_add": {"sizes": list(sizes), "dtypes": ["float64"]}}}


def _by_impl(rows):
    frame = results.rows_frame(rows)
    return {(r.implementation, r.size): (r.status, r.reason) for r in frame.itertuples()}


def test_every_planned_item_gets_exactly_one_row(fault_plugin, tmp_path):
    run = BackendRun("fault-cpu", _config(), cores=1)
    run.run()
    keys = [(r["implementation"], r["size"]) for r in run.rows]
    planned = [(i.implementation, i.size) for i in run.items]
    assert sorted(keys) == sorted(planned)
    assert len(set(keys)) == len(keys)
    got = _by_impl(run.rows)
    for size in (1024, 4096, 8192):
        assert got[("correct", size)][0] == "ok"
        assert got[("unwritten", size)] == (
            "wrong_result", got[("unwritten", size)][1])
        assert "not finite" in got[("unwritten", size)][1]
        assert got[("wrong", size)][0] == "wrong_result"
        assert "relative error" in got[("wrong", size)][1]
        assert got[("wrong_after_first", size)][0] == "wrong_result"
        assert "after timed calls" in got[("wrong_after_first", size)][1]
        assert got[("raises", size)][0] == "error"
        assert "ILLEGAL_ADDRESS" in got[("raises", size)][1]
        assert got[("fails_to_compile", size)][0] == "error"
        assert "building" in got[("fails_to_compile", size)][1]
    # The crash and the hang cost the one case they happened in; the next size runs.
    assert got[("segfault", 4096)][0] == "error"
    assert "SIGSEGV" in got[("segfault", 4096)][1]
    assert got[("segfault", 8192)][0] == "ok"
    assert got[("hang", 4096)][0] == "error"
    assert "timed out" in got[("hang", 4096)][1]
    assert got[("hang", 8192)][0] == "ok"
    # and the file it writes passes the schema
    run.write(tmp_path / "t.csv", tmp_path / "s.csv")
    frame = results.read_timings(tmp_path / "t.csv")
    assert len(frame) == len(planned)
    samples = pd.read_csv(tmp_path / "s.csv")
    ok = frame[frame.status == "ok"]
    kept = samples.groupby(["implementation", "size"]).size()
    for row in ok.itertuples():
        # every timed sample of an ok row is in the samples file
        assert kept[(row.implementation, row.size)] == row.samples
    assert (frame.loc[frame.status == "ok", "samples"] >= FAST["min_samples"]).all()


def test_unavailable_framework_gives_a_row_per_item_with_reason(fault_plugin):
    import fault_plugin as fp

    from gpubench.spec import implementation

    implementation("vector_add", "broken", "anything")(fp.correct)
    run = BackendRun("broken-cpu", _config((1024,)), cores=1)
    run.run()
    assert len(run.rows) == len(run.items) >= 1
    assert {r["status"] for r in run.rows} == {"unavailable"}
    assert all("No module named 'broken'" in r["reason"] for r in run.rows)


def test_thread_counts_resolve_names():
    assert thread_counts([1, "max"], 8) == [1, 8]
    assert thread_counts(["sweep"], 6) == [1, 2, 4, 6]
    assert thread_counts([16], 4) == [4]


def test_plan_sweeps_threads_only_for_parallel_implementations():
    pytest.importorskip("numba")
    items = plan("numba-cpu", {"threads": [1, "max"], "kernels": {
        "vector_add": {"sizes": [1024], "dtypes": ["float32"]}}}, cores=2)
    counts = Counter((i.implementation, i.threads) for i in items)
    assert counts[("njit_loop", 1)] == 1 and ("njit_loop", 2) not in counts
    assert counts[("njit_prange", 1)] == 1 and counts[("njit_prange", 2)] == 1


def test_plan_gpu_modes_per_kernel_and_cold_size_cap():
    """Cold rows where a flush matters only: per-kernel modes, and no cold row for a case
    moving more than gpu_cold_max_bytes (planning needs no GPU)."""
    config = {"gpu_modes": ["hot", "cold"], "gpu_cold_max_bytes": 3 * 4 * 4096, "kernels": {
        "vector_add": {"gpu_sizes": [1024, 4096, 8192], "dtypes": ["float32"]},
        "matmul": {"gpu_sizes": [64], "dtypes": ["float32"], "gpu_modes": ["hot"]}}}
    items = plan("cuda_python-gpu", config, cores=2)
    modes: dict[tuple[str, int], list[str]] = {}
    for item in items:
        modes.setdefault((item.kernel, item.size), []).append(item.mode)
    assert sorted(modes[("vector_add", 1024)]) == ["cold", "hot"]
    assert sorted(modes[("vector_add", 4096)]) == ["cold", "hot"]  # 48 KiB moved: at the cap
    assert modes[("vector_add", 8192)] == ["hot"]
    assert set(modes[("matmul", 64)]) == {"hot"}
