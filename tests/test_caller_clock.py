"""The caller's clock (sync and pipelined) beside the device clock, and the plausibility
gates that refuse a row whose work escaped the timed stream.

Covers the CPU code paths of JAX and PyTorch (caller clock = wall time), Numba's CUDA
simulator for the GPU code path (both caller clocks measured with the device-wide wait),
and a stand-in GPU whose side stream is a thread (tests/escape_plugin.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gpubench import plausibility, results
from gpubench.backends.base import Backend, Facts
from gpubench.harness import Settings, caller_clocks, caller_sample, pipeline_depth
from gpubench.runner import run_backend

FAST = {"warmup": 1, "min_samples": 3, "max_time_s": 0.05, "caller_max_time_s": 0.02}


def _run(backend_id: str, tmp_path, sizes, harness=None, kernel="vector_add",
         dtypes=("float32",), modes=("hot",)):
    cfg = {"threads": [1], "harness": {**FAST, **(harness or {})}, "gpu_modes": list(modes),
           "kernels": {kernel: {"sizes": list(sizes), "dtypes": list(dtypes)}}}
    csv, samples = tmp_path / f"{backend_id}.csv", tmp_path / f"{backend_id}_s.csv"
    run_backend(backend_id, cfg, 1, str(csv), str(samples))
    return results.read_timings(csv), results.read_samples(samples)


class _Counting(Backend):
    """A host backend that counts device-wide waits and records when work ran."""

    device = "gpu"
    facts = Facts(caller_timer="perf_counter+count")

    def __init__(self) -> None:
        self.waits = 0
        self.calls = 0

    def device_sync(self, result):
        self.waits += 1


def test_pipelined_sample_is_k_calls_and_one_device_wide_wait():
    backend = _Counting()

    def call():
        backend.calls += 1
        return backend.calls

    result, seconds = caller_sample(call, backend, k=7)
    assert (backend.calls, backend.waits, result) == (7, 1, 7)
    assert seconds > 0


def test_pipeline_depth_fills_a_batch_and_long_calls_are_not_batched():
    s = Settings(pipeline_batch_s=0.002, pipeline_max_k=256)
    assert pipeline_depth(10e-6, s) == 200
    assert pipeline_depth(1e-7, s) == 256
    assert pipeline_depth(0.002, s) == 1
    assert pipeline_depth(0.5, s) == 1
    assert pipeline_depth(math.nan, s) == 1


def test_caller_clocks_k1_reuses_the_sync_samples_and_k_gt_1_measures_anew():
    backend = _Counting()

    def call():
        backend.calls += 1

    fields, samples, _ = caller_clocks(call, backend, Settings(
        caller_min_samples=3, caller_max_time_s=0.0, pipeline_batch_s=1e-12))
    assert fields["pipelined_k"] == 1 and samples["pipelined"] == samples["sync"]
    assert fields["caller_timer"] == "perf_counter+count"
    backend = _Counting()
    fields, samples, _ = caller_clocks(call, backend, Settings(
        caller_min_samples=3, caller_max_time_s=0.0, pipeline_batch_s=10.0,
        pipeline_max_k=5, caller_round_gap_s=0.0, caller_settle_s=0.0))
    assert fields["pipelined_k"] == 5
    assert fields["pipelined_samples"] == len(samples["pipelined"]) >= 3
    assert fields["pipelined_wait_s"] >= 0
    # one untimed call before the clocks, one per sync sample, one for the untimed batch
    # that warms the pipeline, one per pipelined batch (no gap between the rounds: no
    # calls that only fill one, no settling calls; tests/test_caller_rounds.py has those)
    assert backend.waits == 1 + len(samples["sync"]) + 1 + len(samples["pipelined"])


@pytest.mark.parametrize("backend_id", ["torch-cpu", "jax-cpu"])
def test_cpu_rows_caller_clock_is_their_wall_time(backend_id, tmp_path):
    pytest.importorskip(backend_id.split("-")[0])
    df, samples = _run(backend_id, tmp_path, [1024, 65536])
    ok = df[df["status"] == "ok"]
    assert len(ok) >= 2
    for col in ("median_s", "q1_s", "q3_s", "samples"):
        assert (ok[f"sync_{col}" if col != "samples" else "sync_samples"].to_numpy(float)
                == ok[col].to_numpy(float)).all()
        assert (ok[f"pipelined_{col}" if col != "samples" else "pipelined_samples"]
                .to_numpy(float) == ok[col].to_numpy(float)).all()
    assert (ok["pipelined_k"] == 1).all()
    assert (ok["caller_timer"] == ok["timer"]).all()
    # the samples are written once, on the device (= wall) clock
    assert set(samples["clock"]) == {"device"}


def test_numba_simulator_gpu_rows_carry_both_caller_clocks(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    df, samples = _run("numba-gpu", tmp_path, [256, 4096], modes=("hot", "cold"),
                       harness={"pipeline_batch_s": 1.0, "pipeline_max_k": 4})
    hot = df[(df["status"] == "ok") & (df["mode"] == "hot")]
    cold = df[(df["status"] == "ok") & (df["mode"] == "cold")]
    assert len(hot) >= 2 and len(cold) >= 2
    assert (hot["caller_timer"] == "perf_counter+numba.cuda.synchronize").all()
    assert (hot["pipelined_k"] == 4).all()
    for clock in ("sync", "pipelined"):
        assert (hot[f"{clock}_median_s"] > 0).all()
        assert (hot[f"{clock}_samples"] >= 3).all()
    # the cold mode flushes before every call, which no caller does: no caller clock
    assert cold["sync_median_s"].isna().all() and cold["pipelined_median_s"].isna().all()
    # every caller sample is kept, and reproduces the row's median
    for _, row in hot.iterrows():
        for clock in ("sync", "pipelined"):
            s = samples[(samples["clock"] == clock) & (samples["size"] == row["size"])
                        & (samples["implementation"] == row["implementation"])]
            assert len(s) == row[f"{clock}_samples"]
            assert np.median(s["time_s"]) == pytest.approx(row[f"{clock}_median_s"])


SIZE = 1 << 22  # float32: 48 MiB moved per call, several ms in NumPy here
#: a stand-in GPU that copies at 100 GB/s: the add needs >= 0.5 ms, so the kernel
#: should dominate what a caller waits for and the escape gate looks at it
STANDIN = {"d2d_copy_gbps": 100.0, "l2_bytes": 2**40, "sgemm_gflops": 1e9,
           "dgemm_gflops": 1e9}


def test_side_stream_is_refused_and_the_same_work_on_the_stream_is_not(escape_plugin,
                                                                        tmp_path):
    df, _ = _run("escape-gpu", tmp_path, [SIZE])
    assert set(df["status"]) == {"ok"}  # both correct: the check waits for the device
    plausibility.judge(df, STANDIN)
    side = df[df["implementation"] == "side_stream"].iloc[0]
    same = df[df["implementation"] == "same_stream"].iloc[0]
    # the work on the stream is neither escaped nor too fast. (The stand-in's "device
    # clock" is the host's: on a loaded CPU its first samples can outlast the sync clock
    # taken later, which the sync gate refuses; that gate has tests of its own.)
    assert same["status"] == "ok" or same["reason"].startswith("a caller that waited"), (
        same["reason"])
    assert side["status"] == "implausible"
    assert "escaped the timed stream" in side["reason"]
    # the caller's clock saw the real work: it waits for the side thread
    assert side["pipelined_median_s"] > 5 * side["median_s"]
    assert side["sync_median_s"] > 5 * side["median_s"]
    assert side["pipelined_wait_s"] > 5 * side["median_s"]
    # the same work in the calling thread: the host was busy, the wait is short
    assert same["pipelined_wait_s"] < 0.5 * same["median_s"]


def test_side_stream_above_the_copy_ceiling_is_refused_by_the_bandwidth_gate(
        escape_plugin, tmp_path):
    df, _ = _run("escape-gpu", tmp_path, [SIZE], harness={"caller_clocks": False})
    assert df["pipelined_median_s"].isna().all()  # no caller clock: only gate 1 can tell
    plausibility.judge(df, {**STANDIN, "l2_bytes": 2**20})
    side = df[df["implementation"] == "side_stream"].iloc[0]
    assert side["status"] == "implausible"
    assert "faster than memory" in side["reason"]
    assert df[df["implementation"] == "same_stream"].iloc[0]["status"] == "ok"


def _row(**kw):
    row = {"device": "gpu", "kernel": "vector_add", "dtype": "float32", "bytes": 12 * 2**26,
           "flops": 2**26, "timer": "cuda_event", "status": "ok", "reason": "",
           "median_s": 3e-4, "pipelined_median_s": 3.1e-4, "pipelined_wait_s": 2.9e-4}
    row.update(kw)
    row["gbps"] = row["bytes"] / row["median_s"] / 1e9
    row["gflops"] = row["flops"] / row["median_s"] / 1e9
    return row


H100 = {"d2d_copy_gbps": 2972.0, "l2_bytes": 50 * 2**20, "sgemm_gflops": 51_600.0,
        "dgemm_gflops": 57_900.0}


@pytest.mark.parametrize(("kw", "refused"), [
    ({}, ""),                                          # 2684 GB/s: 90 % of the ceiling
    ({"median_s": 2.48e-4}, ""),                       # 109.3 %: inside the 10 % margin
    ({"median_s": 2.4e-4}, "faster than memory"),     # 112.9 %
    ({"median_s": 6.7e-6, "pipelined_median_s": 2.8e-4, "pipelined_wait_s": 2.7e-4},
     "faster than memory"),
    # inside 2x L2 (L2 may be faster than memory): the bandwidth gate does not apply
    ({"bytes": 12 * 2**20, "median_s": 3e-6, "pipelined_median_s": 1e-5}, ""),
    # escape: plausible bandwidth, but the caller waited three times as long for the
    # device after its calls had returned as the device clock saw
    ({"kernel": "moving_average", "median_s": 3e-4, "pipelined_median_s": 9.2e-4,
      "pipelined_wait_s": 9e-4}, "escaped the timed stream"),
    ({"median_s": 3e-4, "pipelined_median_s": 6e-4, "pipelined_wait_s": 5.9e-4}, ""),  # 0.51
    # the same caller time spent on the host (dispatch, allocation): the device clock is
    # right, the wait is short, nothing escaped (Numba's CUDA ufuncs, CuPy's allocator)
    ({"median_s": 3e-4, "pipelined_median_s": 1.6e-3, "pipelined_wait_s": 2e-5}, ""),
    # host-timed rows cannot miss device work: the escape gate does not apply
    ({"timer": "perf_counter+sync", "median_s": 3e-4, "pipelined_wait_s": 9e-4}, ""),
    # launch-bound (least work 4 µs < 100 µs): the caller time is dispatch, not escape
    ({"bytes": 12 * 2**20, "median_s": 5e-6, "pipelined_median_s": 2e-5,
      "pipelined_wait_s": 1.5e-5}, ""),
    ({"kernel": "matmul", "bytes": 3 * 4 * 8192**2, "flops": 2 * 8192**3,
      "median_s": 0.0183, "pipelined_median_s": 0.0185}, "faster than the arithmetic"),
    ({"kernel": "matmul", "bytes": 3 * 4 * 8192**2, "flops": 2 * 8192**3,
      "median_s": 0.0205, "pipelined_median_s": 0.0206}, ""),  # 53.6 TFLOP/s: 104 %
    ({"device": "cpu", "median_s": 1e-9}, ""),         # CPU rows: no L2 known, no gate
])
def test_gates(kw, refused):
    row = _row(**kw)
    text = plausibility.reason(row, H100)
    assert (refused in text) if refused else text == "", text


def test_judge_re_judges_and_leaves_failures_alone():
    frame = pd.DataFrame([_row(), _row(median_s=6.7e-6, pipelined_median_s=2.8e-4,
                                       pipelined_wait_s=2.7e-4),
                          _row(status="error", reason="boom")])
    frame["ceiling"], frame["pct_of_ceiling"] = "", math.nan
    for col in ("size", "variant", "mode"):
        frame[col] = 0 if col == "size" else "x"
    plausibility.judge(frame, H100)
    assert list(frame["status"]) == ["ok", "implausible", "error"]
    assert frame["pct_of_ceiling"].iloc[1] > 1000
    assert frame["reason"].iloc[2] == "boom"
    # judged again with no ceilings (an old environment record): back to ok, never lost
    plausibility.judge(frame, {})
    assert list(frame["status"]) == ["ok", "ok", "error"]



# -- the report ranks the caller's clock --------------------------------------------------


def _report_frame(gpu_device_s: float, gpu_caller_s: float) -> pd.DataFrame:
    """numpy-cpu (1 µs + 1 ns per element, wall) against a cupy-gpu row per size whose
    device time is ``gpu_device_s`` and whose pipelined caller time is ``gpu_caller_s``."""
    from gpubench.report.base import prepare

    rows = []
    for size in (1024, 4096, 16384, 65536, 262144):
        cpu = results.empty_row()
        t = 1e-6 + size * 1e-9
        cpu.update(framework="numpy", device="cpu", backend="numpy-cpu", implementation="ufunc",
                   kernel="vector_add", variant="default", size=size, dtype="float32",
                   threads=1, status="ok", mode="hot", timer="perf_counter", samples=5,
                   median_s=t, q1_s=t * 0.99, q3_s=t * 1.01, bytes=12.0 * size)
        gpu = results.empty_row()
        gpu.update(framework="cupy", device="gpu", backend="cupy-gpu", implementation="raw",
                   kernel="vector_add", variant="default", size=size, dtype="float32",
                   threads=16, status="ok", mode="hot", timer="cuda_event", samples=5,
                   median_s=gpu_device_s, q1_s=gpu_device_s * 0.99,
                   q3_s=gpu_device_s * 1.01, bytes=12.0 * size,
                   sync_median_s=gpu_caller_s * 2, sync_q1_s=gpu_caller_s * 1.98,
                   sync_q3_s=gpu_caller_s * 2.02, pipelined_median_s=gpu_caller_s,
                   pipelined_q1_s=gpu_caller_s * 0.99, pipelined_q3_s=gpu_caller_s * 1.01)
        rows += [cpu, gpu]
    return prepare(results.rows_frame(rows))


def test_verdicts_and_crossover_rank_the_callers_clock_not_the_device_clock():
    from gpubench.report import sections, stats

    df = sections.canonical_order(_report_frame(gpu_device_s=1e-6, gpu_caller_s=20e-6))
    none = stats.Samples({}, "")
    (_, _, _, found), = sections.picks_for(df, none, "hot", "caller")
    # the device clock alone would crown the GPU at every size; a caller waits 20 µs
    assert found["small"].winner["backend"] == "numpy-cpu"
    assert found["large"].winner["backend"] == "cupy-gpu"
    assert "pipelined" in found["large"].text() and "device 1 µs" in found["large"].text()
    (dev_pick,) = [f for *_, f in sections.picks_for(df, none, "hot", "device")]
    assert dev_pick["small"].winner["backend"] == "cupy-gpu"
    (c,) = sections.crossings(df, {})
    # numpy reaches 20 µs at 19,000 elements: inside 16,384..65,536, log-log between them
    assert 16_384 < c.device_resident[1] < 65_536
    assert c.device_resident[1] == pytest.approx(19_000, rel=0.15)
    # the sync clock (40 µs) crosses later; the device clock (1 µs) at every size
    assert c.device_resident_sync[1] > c.device_resident[1]
    assert c.device_clock[0].startswith("≤ 1,024")
    # speedup over NumPy is on the caller's clock too
    large = df[(df["backend"] == "cupy-gpu") & (df["size_key"] == 262144)].iloc[0]
    assert large["speedup"] == pytest.approx((1e-6 + 262144e-9) / 20e-6)
    assert large["speedup_device"] == pytest.approx((1e-6 + 262144e-9) / 1e-6)


def test_cross_curves_compares_at_every_size_either_side_measured():
    from gpubench.report.sections import cross_curves

    gpu_sizes = np.array([1024.0, 1048576.0])
    cpu_sizes = np.array([1024.0, 16384.0, 262144.0, 1048576.0])
    _, x = cross_curves(gpu_sizes, np.array([1e-5, 1e-5]), cpu_sizes,
                           np.array([1e-6, 2e-5, 3e-4, 1e-3]))
    assert 1024 < x < 16384  # found between the CPU's own sizes, not 1024..1M
    assert cross_curves(np.array([1e6, 2e6]), np.array([1.0, 1.0]), cpu_sizes[:2],
                        np.array([1.0, 1.0])) is None  # no overlap: nothing compared


def test_launch_floor_table_sets_the_call_cost_against_the_device_time():
    from gpubench.report.base import prepare
    from gpubench.report.sections import canonical_order, launch_floor_table

    rows = []
    for kernel, size, device_s in (("launch_overhead", 1, 5e-6), ("vector_add", 1024, 3e-6),
                                   ("vector_add", 65536, 6e-6),
                                   ("vector_add", 1048576, 60e-6)):
        r = results.empty_row()
        r.update(framework="cupy", device="gpu", backend="cupy-gpu", implementation="x",
                 kernel=kernel, variant="default", size=size, dtype="float32", threads=16,
                 status="ok", mode="hot", timer="cuda_event", samples=5, median_s=device_s,
                 q1_s=device_s, q3_s=device_s, sync_median_s=2e-5, pipelined_median_s=1e-5)
        rows.append(r)
    md = launch_floor_table(canonical_order(prepare(results.rows_frame(rows)))).report.markdown()
    assert "| cupy-gpu | x | 1 | 10 µs | 20 µs | 5 µs (cuda_event) |" in md
    # 10 µs of call against 6 µs at 65,536 and 60 µs at 1,048,576: between the two
    assert "(between 65,536 and 1,048,576)" in md


def test_a_schema_1_file_renders_with_its_gpu_rows_left_out_of_the_verdicts(tmp_path):
    from gpubench.report import build_report

    old = _report_frame(1e-6, 20e-6)
    old = old[[c for c in results.COLUMN_NAMES if c not in (
        "caller_timer", "sync_samples", "sync_median_s", "sync_q1_s", "sync_q3_s",
        "pipelined_k", "pipelined_samples", "pipelined_median_s", "pipelined_q1_s",
        "pipelined_q3_s", "pipelined_wait_s")]].assign(schema_version=1)
    old.to_csv(tmp_path / "timings.csv", index=False)
    build_report(tmp_path / "timings.csv", tmp_path / "none.json", tmp_path / "i.html",
                 tmp_path / "s.md", workers=1)
    md = (tmp_path / "s.md").read_text()
    # the older file said in words, below the answer
    about = md.split("## About the input files", 1)[1].split("\n## ", 1)[0]
    assert "rows were written by an older gpubench" in about and "caller's clock" in about
    # the banner names the rows it warns about
    assert ("5 ok GPU row(s) (CuPy vector_add/default float32 raw at 1,024, 4,096, "
            "16,384, 65,536, 262,144) have no caller's clock") in md
    summary = md.split("## Summary")[1].split("##")[0]
    assert "cupy-gpu" not in summary and "numpy-cpu" in summary


@pytest.mark.parametrize(("n", "differs"), [(4, False), (5, True), (6, True)])
def test_six_caller_samples_are_the_fewest_a_verdict_can_rest_on(n, differs):
    """Two GPU rows, one twice the other with no overlap: with 4 samples each no 99 %
    interval exists (the exact Mann–Whitney p of complete separation is 2/70); from 5 it
    does (2/252). ``caller_min_samples`` is 6 so that one stray sample still leaves a
    verdict possible."""
    from gpubench.report import stats

    fast = 1e-5 * (1 + 0.001 * np.arange(n))
    slow = 2 * fast
    assert stats.compare(1e-5, 2e-5, fast, slow).differs is differs
    assert Settings().caller_min_samples == 6


def test_a_backend_without_a_callers_clock_is_not_counted_as_never_crossing():
    from gpubench.report import sections

    df = sections.canonical_order(_report_frame(1e-6, 20e-6))
    df.loc[df["device"] == "gpu", ["caller_s", "sync_s"]] = float("nan")
    (c,) = sections.crossings(df, {})
    assert c.device_resident[0] == sections.NO_CALLER_CLOCK
    assert c.device_clock is not None  # the hardware's crossover is still shown
    assert sections.crossover_headline([c]) == []
