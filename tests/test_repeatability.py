"""tools/repeatability.py: the item-7 bar over three runs, on synthetic CSVs."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from gpubench import results

SCRIPT = ROOT / "tools" / "repeatability.py"


@pytest.fixture(scope="module")
def rep():
    spec = importlib.util.spec_from_file_location("repeatability", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(factors: dict[int, float] | None = None, n_gpu: int = 100, n_cpu: int = 20,
          seed: int = 0, noise: float = 0.03):
    """One run: n_gpu GPU rows and n_cpu CPU rows of vector_add, each row's pipelined
    median its base time times a noise within ±``noise``, times ``factors[i]`` for row
    i; one cold and one failed row besides, which are never judged."""
    rng = np.random.default_rng(seed)
    factors = factors or {}
    rows = []
    for i in range(n_gpu + n_cpu):
        gpu = i < n_gpu
        r = results.empty_row()
        t = 1e-5 * (1 + i % 7) * rng.uniform(1 - noise, 1 + noise) * factors.get(i, 1.0)
        r.update(framework="cupy" if gpu else "numpy", device="gpu" if gpu else "cpu",
                 backend="cupy-gpu" if gpu else "numpy-cpu", implementation=f"impl{i % 3}",
                 kernel="vector_add", variant="default", size=1024 * (i + 1),
                 dtype="float32", threads=16 if gpu else 1, status="ok", mode="hot",
                 samples=6, median_s=t / 2, pipelined_median_s=t, sync_median_s=2 * t,
                 schema_version=results.SCHEMA_VERSION)
        rows.append(r)
    cold = dict(rows[0], mode="cold", pipelined_median_s=float("nan"))
    failed = dict(rows[1], implementation="broken", status="error", reason="boom",
                  pipelined_median_s=float("nan"))
    return results.rows_frame([*rows, cold, failed])


def _write(tmp_path, runs):
    paths = []
    for i, frame in enumerate(runs):
        path = tmp_path / f"run{i}.csv"
        frame.to_csv(path, index=False)
        paths.append(str(path))
    return paths


def test_three_quiet_runs_meet_the_bar(rep, tmp_path, capsys):
    paths = _write(tmp_path, [_rows(seed=s) for s in range(3)])
    assert rep.main(paths) == 0
    out = capsys.readouterr().out
    assert "GPU: 100 ranked rows in every run; meets the bar" in out
    assert "CPU: 20 ranked rows in every run; meets the bar" in out
    assert "rows with every run within ±10%: 100.0%" in out
    assert out.rstrip().endswith("bar met")


def test_one_row_2_1x_off_misses_the_bar_though_every_other_row_is_within(
        rep, tmp_path, capsys):
    paths = _write(tmp_path, [_rows(seed=0, noise=0), _rows(seed=1, noise=0),
                              _rows({17: 2.1}, seed=2, noise=0)])
    assert rep.main(paths) == 1
    out = capsys.readouterr().out
    assert "GPU: 100 ranked rows in every run; MISSES the bar" in out
    assert "rows with every run within ±10%: 99.0%" in out
    gpu = out.split("GPU:")[1].split("CPU:")[0]
    assert "largest ratio off: 2.1" in gpu
    # the worst row is named first, with each run's value and the median
    worst = gpu.split("worst rows")[1].splitlines()[1]
    assert "size=18432" in worst and worst.strip().startswith("2.1")
    assert "CPU: 20 ranked rows in every run; meets the bar" in out
    assert "bar NOT met" in out


def test_at_2x_the_row_is_still_allowed(rep, tmp_path):
    # 2x off is the edge: allowed (if the share holds)
    paths = _write(tmp_path, [_rows(seed=0, noise=0), _rows(seed=1, noise=0),
                              _rows({17: 2.0}, seed=2, noise=0)])
    assert rep.main(paths) == 0


def test_six_percent_of_rows_12_percent_off_misses_the_share(rep, tmp_path, capsys):
    off = {i: 1.12 for i in range(0, 100, 17)}  # 6 of 100 GPU rows
    assert len(off) == 6
    paths = _write(tmp_path, [_rows(seed=0, noise=0), _rows(seed=1, noise=0),
                              _rows(off, seed=2, noise=0)])
    assert rep.main(paths) == 1
    out = capsys.readouterr().out
    assert "rows with every run within ±10%: 94.0%" in out
    assert "largest ratio off: 1.1" in out  # no row near 2x: the share alone fails
    # four rows 12 % off is 96 %: within the bar
    four = {i: 1.12 for i in range(0, 68, 17)}
    paths = _write(tmp_path, [_rows(seed=0, noise=0), _rows(seed=1, noise=0),
                              _rows(four, seed=2, noise=0)])
    assert rep.main(paths) == 0


def test_device_option_judges_one_device_and_prints_both(rep, tmp_path, capsys):
    cpu_off = {110: 3.0}  # a CPU row 3x off
    paths = _write(tmp_path, [_rows(seed=0), _rows(seed=1), _rows(cpu_off, seed=2)])
    assert rep.main(paths) == 1
    assert rep.main([*paths, "--device", "gpu"]) == 0
    out = capsys.readouterr().out
    assert "CPU: 20 ranked rows in every run; (not judged)" in out


def test_a_folder_of_step_csvs_is_one_run_and_rows_of_some_runs_are_listed(
        rep, tmp_path, capsys):
    runs = []
    for s in range(3):
        frame = _rows(seed=s)
        folder = tmp_path / f"r{s}" / "raw"
        folder.mkdir(parents=True)
        gpu, cpu = frame[frame["device"] == "gpu"], frame[frame["device"] == "cpu"]
        if s == 2:
            gpu = gpu.iloc[1:]  # this run lost a row
        gpu.to_csv(folder / "cupy-gpu.csv", index=False)
        cpu.to_csv(folder / "numpy-cpu.csv", index=False)
        (folder / "cupy-gpu.samples.csv").write_text("not a timings file\n")
        runs.append(str(folder))
    assert rep.main(runs) == 0
    out = capsys.readouterr().out
    assert "GPU: 99 ranked rows in every run" in out
    assert "1 rows ranked in only some runs (not judged)" in out


def test_unusable_input_is_a_clear_error(rep, tmp_path, capsys):
    paths = _write(tmp_path, [_rows(seed=s) for s in range(3)])
    assert rep.main(paths[:2]) == 2
    assert "three or more runs" in capsys.readouterr().err
    dup = _rows(seed=2)
    dup = pd.concat([dup, dup.iloc[[3]]])
    dup.to_csv(tmp_path / "dup.csv", index=False)
    assert rep.main([*paths[:2], str(tmp_path / "dup.csv")]) == 2
    err = capsys.readouterr().err
    assert "dup.csv" in err and "share a key" in err
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    assert rep.main([*paths[:2], str(tmp_path / "bad.csv")]) == 2
    assert "bad.csv: missing columns" in capsys.readouterr().err
    assert rep.main([*paths[:2], str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_sync_and_device_clocks_can_be_judged_too(rep, tmp_path):
    paths = _write(tmp_path, [_rows(seed=0), _rows(seed=1), _rows({5: 3.0}, seed=2)])
    assert rep.main([*paths, "--clock", "device"]) == 1
    assert rep.main([*paths, "--clock", "sync", "--max-ratio", "4"]) == 0


def test_the_gpu_rows_are_split_by_what_bounds_them(rep):
    """A diagnostic beside the bar: rows whose device time is >= 90 % of their caller's
    time in every run are device-bound, the rest host-bound, each with its share."""
    idx = pd.MultiIndex.from_tuples([("a",), ("b",), ("c",)], names=["k"])
    ratios = pd.DataFrame({1: [1.0, 1.0, 1.5], 2: [1.0, 1.2, 1.0], 3: [1.0, 1.0, 1.0]},
                          index=idx)
    share = pd.Series([0.95, 0.9, 0.2], index=idx)
    text = rep.bound_split(ratios, share, 0.10)
    assert "device-bound" in text and "2 rows, 50.0% within" in text
    assert "host-bound (the rest): 1 rows, 0.0% within ±10%, largest 1.5x off" in text
