"""The columns verdicts use are validated: every measured column of an
``ok`` or ``implausible`` row finite and within its bound where present, quantiles in order
per clock, sample counts whole and positive; samples' times finite and positive and no
sample given twice. A bad row is a :class:`~gpubench.results.SchemaError` naming the file,
the row's line and key, the column and the value; the report and compare CLIs exit 2 with
that message, and collect exits 1."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_data import write_set

from gpubench import cli, results
from gpubench.report import compare, stats

SRC = Path(__file__).resolve().parents[1] / "src"
KEY_TEXT = "cupy-gpu vector_add/default float32 size=1048576 elementwise hot threads=8"

#: the bounds table by column
BOUND = {col: bound for col, bound, _ in results.MEASURED}
INT_COLUMNS = [c for c, b in BOUND.items() if b.startswith("int")]
#: whole numbers that must be above zero (``int >= 0`` ones may be 0)
INT_POSITIVE = [c for c, b in BOUND.items() if b == "int > 0"]
POSITIVE = [c for c, b in BOUND.items() if b == "> 0"]
NON_NEGATIVE = [c for c, b in BOUND.items() if b == ">= 0"]


def full_row(**kw: Any) -> dict[str, Any]:
    """A GPU hot row with every measured column filled, consistently."""
    row = results.empty_row()
    row.update(
        framework="cupy", device="gpu", backend="cupy-gpu", implementation="elementwise",
        kernel="vector_add", variant="default", size=1 << 20, dtype="float32", threads=8,
        status="ok", reason="", mode="hot", timer="cuda_event",
        schema_version=results.SCHEMA_VERSION,
        samples=21, median_s=1.2e-5, min_s=1.0e-5, max_s=2.0e-5, q1_s=1.1e-5, q3_s=1.3e-5,
        iqr_s=2e-6, mean_s=1.25e-5, rel_spread=2e-6 / 1.2e-5, stop_reason="converged",
        first_call_s=0.2, setup_s=0.01, bytes=12.0 * (1 << 20), flops=float(1 << 20),
        gbps=12.0 * (1 << 20) / 1.2e-5 / 1e9, gflops=(1 << 20) / 1.2e-5 / 1e9,
        caller_timer="perf_counter+sync", sync_samples=11, sync_median_s=2.0e-5,
        sync_q1_s=1.9e-5, sync_q3_s=2.2e-5, pipelined_k=8, pipelined_samples=11,
        pipelined_median_s=1.5e-5, pipelined_q1_s=1.4e-5, pipelined_q3_s=1.6e-5,
        pipelined_wait_s=1e-5, energy_j=3e-3, energy_power_w=250.0, energy_sm_mhz=1980.0,
        energy_calls=40000.5, energy_window_s=0.5, energy_meter="nvml_total_energy",
        rel_err=1e-7, tolerance=1e-5, ceiling="d2d_copy 2000 GB/s", pct_of_ceiling=52.4)
    row.update(kw)
    return row


def other_row(**kw: Any) -> dict[str, Any]:
    """A valid NumPy row to stand before the row under test (so it is not line 2)."""
    return full_row(**{"framework": "numpy", "device": "cpu", "backend": "numpy-cpu",
                       "implementation": "ufunc", "timer": "perf_counter", "threads": 1,
                       "caller_timer": "perf_counter", "pipelined_k": 1, **kw})


def write(tmp_path: Path, rows: list[dict[str, Any]], name: str = "timings.csv") -> Path:
    """The rows as a CSV, written as they are (not coerced to the schema's types)."""
    path = tmp_path / name
    results.atomic_write_csv(path, pd.DataFrame(rows, columns=list(results.COLUMN_NAMES)))
    return path


def refused(path: Path) -> str:
    with pytest.raises(results.SchemaError) as exc:
        results.read_timings(path)
    return str(exc.value)


def assert_names(message: str, path: Path, line: int, *words: str,
                 key: str = KEY_TEXT) -> None:
    """The message names the file, the line, the row's key and each of ``words``."""
    assert str(path) in message, message
    assert f"line {line} ({key})" in message, message
    for word in words:
        assert word in message, (word, message)


# -- accepted ---------------------------------------------------------------------------------


def test_a_full_row_and_the_committed_kinds_of_row_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, [other_row(), full_row()])
    back = results.read_timings(path)
    assert len(back) == 2 and back["pipelined_median_s"].iloc[1] == 1.5e-5


@pytest.mark.parametrize("column", [c for c in BOUND if c != "median_s"])
def test_an_empty_cell_is_not_measured_and_passes(tmp_path: Path, column: str) -> None:
    """NaN = absent: a CPU row of an older file without caller's clocks, a row without an
    energy reading, a kernel without a byte or flop count."""
    results.read_timings(write(tmp_path, [full_row(**{column: math.nan})]))


def test_a_cpu_row_without_caller_clocks_or_energy_passes(tmp_path: Path) -> None:
    empty = {c: math.nan for c in BOUND if c.startswith(("sync_", "pipelined_", "energy_"))}
    results.read_timings(write(tmp_path, [other_row(**empty)]))


@pytest.mark.parametrize("column", NON_NEGATIVE)
def test_zero_passes_where_zero_is_legitimate(tmp_path: Path, column: str) -> None:
    results.read_timings(write(tmp_path, [full_row(**{column: 0.0})]))


def test_equal_quartiles_and_a_mean_off_by_rounding_pass(tmp_path: Path) -> None:
    t = 3e-6
    row = full_row(min_s=t, q1_s=t, median_s=t, q3_s=t, max_s=t, iqr_s=0.0, rel_spread=0.0,
                   mean_s=float(np.nextafter(t, 1.0)),  # a mean of equal samples, 1 ulp up
                   sync_q1_s=t * 2, sync_median_s=t * 2, sync_q3_s=t * 2,
                   pipelined_q1_s=t, pipelined_median_s=t, pipelined_q3_s=t,
                   gbps=12.0 * (1 << 20) / t / 1e9, gflops=(1 << 20) / t / 1e9)
    results.read_timings(write(tmp_path, [row]))


@pytest.mark.parametrize("status", ["wrong_result", "error", "skipped", "unavailable"])
def test_rows_not_ranked_are_not_held_to_the_bounds(tmp_path: Path, status: str) -> None:
    """A wrong result may have an infinite error or a NaN time: it is never ranked."""
    row = full_row(status=status, reason="relative error inf > 1e-05", rel_err=math.inf,
                   median_s=math.nan, q1_s=5.0)
    results.read_timings(write(tmp_path, [row]))


# -- refused: bounds --------------------------------------------------------------------------


def _bad_values() -> list[tuple[str, float]]:
    cases = [(c, v) for c in BOUND for v in (math.inf, -math.inf, -1.0)]
    cases += [(c, 0.0) for c in POSITIVE + INT_POSITIVE]
    cases += [(c, 2.5) for c in INT_COLUMNS]
    cases += [("median_s", math.nan)]  # the one column a measured row must have
    return cases


@pytest.mark.parametrize(("column", "value"), _bad_values())
@pytest.mark.parametrize("status", ["ok", "implausible"])
def test_a_value_out_of_bounds_names_file_line_key_column_value(
        tmp_path: Path, column: str, value: float, status: str) -> None:
    reason = "" if status == "ok" else "above the d2d_copy ceiling"
    path = write(tmp_path, [other_row(), full_row(status=status, reason=reason,
                                                  **{column: value})])
    message = refused(path)
    shown = {math.inf: "inf", -math.inf: "-inf", -1.0: "-1", 0.0: "0", 2.5: "2.5"}
    assert_names(message, path, 3, repr(column) if column not in INT_COLUMNS
                 or value in (-1.0, 0.0) else column,
                 "nan" if math.isnan(value) else shown[value])


def test_the_first_problems_are_listed_with_the_count_of_the_rest(tmp_path: Path) -> None:
    rows = [full_row(size=1 << k, pipelined_median_s=-1e-5) for k in range(10, 22)]
    path = write(tmp_path, rows)
    message = refused(path)
    # each row: out of bounds, and pipelined_q1_s above it
    assert "24 problem(s) in 12 row(s)" in message
    assert message.count("\n  line ") == results.SHOWN_PROBLEMS
    assert "... and 19 more" in message
    assert "line 2 (cupy-gpu vector_add/default float32 size=1024 " in message


def test_the_line_counts_a_quoted_field_that_spans_lines(tmp_path: Path) -> None:
    """A reason with a newline makes a record two lines long; the error counts them."""
    rows = [other_row(status="error", reason="worker said:\ncrash"),
            full_row(max_s=math.inf)]
    path = write(tmp_path, rows)
    assert_names(refused(path), path, 4, "'max_s'", "inf")


def test_a_table_from_no_one_file_names_the_row_number() -> None:
    frame = results.rows_frame([other_row(), full_row(q3_s=-2.0)])
    with pytest.raises(results.SchemaError, match=r"(?s)merged: .*row 2 \(cupy-gpu .*'q3_s' = -2"):
        results.validate(frame, "merged")


def test_a_value_that_is_not_a_number_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, [other_row(), full_row()])
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace(",21,1.2e-05,", ",many,1.2e-05,")
    path.write_text("".join(lines))
    message = refused(path)
    assert_names(message, path, 3, "column 'samples' is not int", "'many'")


# -- refused: order ---------------------------------------------------------------------------

#: (column, value) that breaks one order of results.ORDERS, and the pair named
ORDER_CASES = [
    ("min_s", 1.15e-5, "min_s = 1.15e-05 > q1_s = 1.1e-05"),
    ("q1_s", 1.25e-5, "q1_s = 1.25e-05 > median_s = 1.2e-05"),
    ("median_s", 1.35e-5, "median_s = 1.35e-05 > q3_s = 1.3e-05"),
    ("q3_s", 2.5e-5, "q3_s = 2.5e-05 > max_s = 2e-05"),
    ("mean_s", 2.1e-5, "mean_s = 2.1e-05 > max_s = 2e-05"),
    ("mean_s", 0.9e-5, "min_s = 1e-05 > mean_s = 9e-06"),
    ("sync_q1_s", 2.1e-5, "sync_q1_s = 2.1e-05 > sync_median_s = 2e-05"),
    ("sync_q3_s", 1.95e-5, "sync_median_s = 2e-05 > sync_q3_s = 1.95e-05"),
    ("pipelined_q1_s", 1.55e-5, "pipelined_q1_s = 1.55e-05 > pipelined_median_s = 1.5e-05"),
    ("pipelined_q3_s", 1.45e-5, "pipelined_median_s = 1.5e-05 > pipelined_q3_s = 1.45e-05"),
]


@pytest.mark.parametrize(("column", "value", "pair"), ORDER_CASES)
def test_quantiles_out_of_order_are_refused(tmp_path: Path, column: str, value: float,
                                            pair: str) -> None:
    path = write(tmp_path, [other_row(), full_row(**{column: value})])
    assert_names(refused(path), path, 3, pair)


def test_order_skips_an_empty_quantile_but_still_compares_around_it(tmp_path: Path) -> None:
    path = write(tmp_path, [full_row(q1_s=math.nan, median_s=0.9e-5)])
    assert_names(refused(path), path, 2, "min_s = 1e-05 > median_s = 9e-06")


def test_order_allows_rounding_but_not_more(tmp_path: Path) -> None:
    t = 1.2e-5
    near = full_row(q1_s=t * (1 + 1e-12))  # above the median in its last bits
    results.read_timings(write(tmp_path, [near]))
    beyond = full_row(q1_s=t * (1 + 1e-6))
    path = write(tmp_path, [beyond], "beyond.csv")
    assert_names(refused(path), path, 2, "q1_s = ", "> median_s = 1.2e-05")


# -- samples ----------------------------------------------------------------------------------


def sample_frame(rows: list[dict[str, Any]], n: int = 5) -> pd.DataFrame:
    out = []
    for r in rows:
        key = {k: r[k] for k in results.KEY_NAMES}
        out += [{**key, "clock": "device", "sample": i, "time_s": 1e-5 + i * 1e-7}
                for i in range(n)]
    return pd.DataFrame(out, columns=list(results.SAMPLE_COLUMNS))


@pytest.mark.parametrize(("column", "value", "shown"), [
    ("time_s", math.nan, "nan"), ("time_s", math.inf, "inf"), ("time_s", -1e-6, "-1e-06"),
    ("time_s", 0.0, "0.0"), ("sample", -1, "-1"), ("sample", 1.5, "1.5"),
    ("clock", "wall", "'wall'")])
def test_a_bad_sample_names_file_line_key_column_value(tmp_path: Path, column: str,
                                                       value: Any, shown: str) -> None:
    frame = sample_frame([full_row()])
    frame[column] = frame[column].astype(object)
    frame.loc[3, column] = value
    path = tmp_path / "step.samples.csv"
    results.atomic_write_csv(path, frame)
    with pytest.raises(results.SchemaError) as exc:
        results.read_samples(path)
    assert_names(str(exc.value), path, 5, f"'{column}' = {shown}",
                 key=KEY_TEXT.replace(" hot", ""))  # samples carry no mode


def test_hot_and_cold_runs_share_indices_legitimately() -> None:
    rows = [full_row(), full_row(mode="cold")]
    frame = sample_frame(rows)  # the same key twice: samples carry no mode
    results.check_samples(frame, "samples", results.rows_frame(rows))


def test_a_doubled_run_is_refused_with_the_lines() -> None:
    rows = [other_row(), full_row()]
    frame = sample_frame(rows)
    doubled = pd.concat([frame, frame.iloc[5:]], ignore_index=True)
    with pytest.raises(results.SchemaError) as exc:
        results.check_samples(doubled, "samples", results.rows_frame(rows))
    message = str(exc.value)
    assert "row 11 (cupy-gpu vector_add/default float32 size=1048576" in message
    assert "clock 'device': 5 sample index(es) (0 to 4) given up to 2 times" in message
    assert "1 row(s) of this key (first given on row 6)" in message


def test_a_file_doubled_with_hot_and_cold_runs_is_refused() -> None:
    rows = [full_row(), full_row(mode="cold")]
    frame = sample_frame(rows)
    with pytest.raises(results.SchemaError, match="given up to 4 times, where the timings "
                       r"have 2 row\(s\)"):
        results.check_samples(pd.concat([frame, frame], ignore_index=True), "samples",
                              results.rows_frame(rows))


def test_a_mode_column_makes_each_run_its_own_key() -> None:
    rows = [full_row(), full_row(mode="cold")]
    frame = sample_frame(rows)
    frame["mode"] = ["hot"] * 5 + ["cold"] * 5
    results.check_samples(frame, "samples", results.rows_frame(rows))
    frame["mode"] = "hot"  # both runs claimed by one row
    with pytest.raises(results.SchemaError, match="given up to 2 times"):
        results.check_samples(frame, "samples", results.rows_frame(rows))


def test_the_report_refuses_doubled_samples(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "in")
    rows = results.read_timings(paths["timings"])
    assert stats.load_samples(paths["samples"], rows).by_row  # the control: attached
    text = paths["samples"].read_text()
    paths["samples"].write_text(text + text.split("\n", 1)[1])  # concatenated twice
    with pytest.raises(results.SchemaError, match=r"(?s)samples\.csv: .*doubled samples"):
        stats.load_samples(paths["samples"], rows)


# -- collect ----------------------------------------------------------------------------------


def step(folder: Path, name: str, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    timings = folder / f"{name}.csv"
    samples = folder / f"{name}.samples.csv"
    results.atomic_write_csv(timings, results.rows_frame(rows))
    results.atomic_write_csv(samples, sample_frame(rows))
    return timings, samples


def run_collect(tmp_path: Path, timings: list[Path], samples: list[Path],
                capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    out = tmp_path / "out"
    rc = cli.main(["collect", "--timings", *map(str, timings), "--samples",
                   *map(str, samples), "--out-timings", str(out / "timings.csv"),
                   "--out-samples", str(out / "samples.csv")])
    written = out.exists() and any(out.iterdir())
    assert written == (rc == 0)
    return rc, capsys.readouterr().err


def _rows(backend: str) -> list[dict[str, Any]]:
    fw = backend.split("-")[0]
    return [full_row(backend=backend, framework=fw, size=1 << k) for k in (10, 20)]


def test_collect_merges_distinct_steps(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    a, b = step(tmp_path / "raw", "a", _rows("cupy-gpu")), step(tmp_path / "raw", "b",
                                                                  _rows("torch-gpu"))
    rc, err = run_collect(tmp_path, [a[0], b[0]], [a[1], b[1]], capsys)
    assert rc == 0, err


def test_collect_refuses_a_samples_file_given_twice(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a, b = step(tmp_path / "raw", "a", _rows("cupy-gpu")), step(tmp_path / "raw", "b",
                                                                  _rows("torch-gpu"))
    copy = tmp_path / "raw" / "a-copy.samples.csv"
    copy.write_bytes(a[1].read_bytes())
    rc, err = run_collect(tmp_path, [a[0], b[0]], [a[1], b[1], copy], capsys)
    assert rc == 1
    assert str(copy) in err and str(a[1]) in err and "collected once" in err


def test_collect_refuses_samples_doubled_within_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = step(tmp_path / "raw", "a", _rows("cupy-gpu"))
    text = a[1].read_text()
    a[1].write_text(text + text.split("\n", 1)[1])
    rc, err = run_collect(tmp_path, [a[0]], [a[1]], capsys)
    assert rc == 1
    assert str(a[1]) in err and "line 12 (cupy-gpu" in err and "doubled samples" in err


def test_collect_refuses_a_bad_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = step(tmp_path / "raw", "a", _rows("cupy-gpu"))
    frame = pd.read_csv(a[1])
    frame.loc[2, "time_s"] = -1e-5
    frame.to_csv(a[1], index=False)
    rc, err = run_collect(tmp_path, [a[0]], [a[1]], capsys)
    assert rc == 1 and str(a[1]) in err and "line 4 (cupy-gpu" in err
    assert "'time_s' = -1e-05" in err


def test_collect_refuses_a_bad_timings_row(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    a = step(tmp_path / "raw", "a", [other_row(), full_row(sync_median_s=math.inf)])
    rc, err = run_collect(tmp_path, [a[0]], [a[1]], capsys)
    assert rc == 1 and str(a[0]) in err and f"line 3 ({KEY_TEXT})" in err
    assert "'sync_median_s' = inf" in err


# -- hostile inputs, through the CLIs ---------------------------------------------------------


def _report_argv(paths: dict[str, Path], out: Path) -> list[str]:
    return ["report", "--timings", str(paths["timings"]), "--samples", str(paths["samples"]),
            "--env", str(paths["env"]), "--html", str(out / "index.html"), "--md",
            str(out / "summary.md"), "--jobs", "1"]


def _edit(path: Path, where: Any, **values: float) -> list[int]:
    """Set ``values`` in the rows ``where(frame)`` selects; their lines in the file."""
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    sel = where(frame)
    for col, v in values.items():
        frame.loc[sel, col] = v
    frame.to_csv(path, index=False)
    return [int(i) + 2 for i in np.flatnonzero(sel.to_numpy())]


def _exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_negative_pipelined_medians_of_six_numpy_rows_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """They turned "below about 23,000 elements stay on NumPy" into "below about
    4,194,304", with exit code 0 and no note."""
    paths = write_set(tmp_path / "in")
    out = tmp_path / "out"
    lines = _edit(paths["timings"], lambda f: (f["framework"] == "numpy")
                  & (f["kernel"] == "vector_add") & (f["size"] < 1 << 22),
                  pipelined_median_s=-1e-5)
    assert len(lines) == 6
    err = _exit_2(_report_argv(paths, out), capsys)
    assert err.startswith(f"gpubench report: {paths['timings']}: ")
    assert "in 6 row(s)" in err
    assert f"line {lines[0]} (numpy-cpu vector_add/" in err
    assert "column 'pipelined_median_s' = -1e-05: must be finite and > 0" in err
    assert not (out / "index.html").exists()


@pytest.mark.parametrize("column", ["median_s", "pipelined_median_s", "sync_median_s"])
def test_an_infinite_time_is_refused_by_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str) -> None:
    """inf printed speedups as "175×–—", and median_s = inf passed with a RuntimeWarning."""
    paths = write_set(tmp_path / "in")
    lines = _edit(paths["timings"], lambda f: (f["backend"] == "cupy-gpu")
                  & (f["mode"] == "hot") & (f["size"] == 1 << 18)
                  & (f["kernel"] == "vector_add") & (f["dtype"] == "float32"),
                  **{column: math.inf})
    err = _exit_2(_report_argv(paths, tmp_path / "out"), capsys)
    assert f"line {lines[0]} (cupy-gpu vector_add/default float32 size=262144" in err
    assert f"column {column!r} = inf" in err and str(paths["timings"]) in err


def test_an_infinite_median_is_refused_by_compare_never_same(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """compare labelled rows with median_s = inf SAME."""
    write_set(tmp_path / "base")
    new = write_set(tmp_path / "new")
    lines = _edit(new["timings"], lambda f: f["backend"] == "cupy-gpu", median_s=math.inf,
                  max_s=math.inf)
    err = _exit_2(["compare", "--base", str(tmp_path / "base"), "--new",
                   str(tmp_path / "new"), "--html", str(tmp_path / "c.html"), "--jobs", "1"],
                  capsys)
    assert err.startswith(f"gpubench compare: {new['timings']}: ")
    assert f"line {lines[0]} (cupy-gpu " in err and "column 'median_s' = inf" in err
    assert not (tmp_path / "c.html").exists()
    with pytest.raises(results.SchemaError):  # either side
        compare.build_compare(new["timings"], tmp_path / "base", tmp_path / "c.html")


def test_compare_refuses_doubled_samples(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    write_set(tmp_path / "base")
    new = write_set(tmp_path / "new")
    text = new["samples"].read_text()
    new["samples"].write_text(text + text.split("\n", 1)[1])
    err = _exit_2(["compare", "--base", str(tmp_path / "base"), "--new",
                   str(tmp_path / "new"), "--html", str(tmp_path / "c.html")], capsys)
    assert str(new["samples"]) in err and "doubled samples" in err


def test_the_installed_entry_points_exit_2(tmp_path: Path) -> None:
    """``python -m gpubench report`` and ``compare`` as a user runs them."""
    paths = write_set(tmp_path / "in")
    _edit(paths["timings"], lambda f: f["framework"] == "numpy", q1_s=-1.0)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    for argv in (_report_argv(paths, tmp_path / "out"),
                 ["compare", "--base", str(tmp_path / "in"), "--new", str(tmp_path / "in"),
                  "--html", str(tmp_path / "c.html")]):
        proc = subprocess.run([sys.executable, "-m", "gpubench", *argv], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 2, proc.stderr
        assert f"gpubench {argv[0]}: {paths['timings']}: " in proc.stderr
        assert "column 'q1_s' = -1: must be finite and > 0" in proc.stderr


def test_a_compressed_samples_file_names_its_lines(tmp_path: Path) -> None:
    """samples.csv.gz, as the workflow commits it: the error still gives the line."""
    rows = [other_row(), full_row()]
    frame = sample_frame(rows)
    path = tmp_path / "samples.csv.gz"
    pd.concat([frame, frame.iloc[5:]], ignore_index=True).to_csv(path, index=False)
    with pytest.raises(results.SchemaError) as exc:
        stats.load_samples(path, results.rows_frame(rows))
    message = str(exc.value)
    assert message.startswith(f"{path}: 1 problem(s)")
    assert "line 12 (cupy-gpu" in message and "(first given on line 7)" in message
