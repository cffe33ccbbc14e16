"""Hostile inputs: each gives a clear one-line error or a row flagged ``implausible``,
never a traceback, a hang or a verdict changed without a word.

Rows whose numbers disagree (a pipelined time far below the device time, a throughput
off its count and time, a size no case can have, a mode or device outside its set, a
CPU row faster than its host), readers given a value of the wrong type, nesting past
Python's recursion limit, a device instead of a file or a file cut short, configs that
are not a mapping or expand without end, outputs that cannot be written, and inputs
far larger than a run writes. Each test reads small files in this process (no
Snakemake, no report build), and none measures time.
"""

from __future__ import annotations

import argparse
import base64
import errno
import gzip
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from report_data import ENV, row, write_set

from gpubench import ceilings, cli, config, files, inputs, plausibility, results, safety
from gpubench import workflow as gw
from gpubench.report import base, compare, figures, headline, read_timings_lenient, stats
from gpubench.report import main as report_main

ROOT = Path(__file__).resolve().parents[1]
PIPELINED = ("pipelined_median_s", "pipelined_q1_s", "pipelined_q3_s")


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    """The rows as a CSV, their values as given (not coerced to the schema's types)."""
    results.atomic_write_csv(path, pd.DataFrame(rows, columns=list(results.COLUMN_NAMES)))
    return path


def two_rows(**change: Any) -> list[dict[str, Any]]:
    """A NumPy row and a CuPy row of one case; ``change`` applied to the CuPy row."""
    cpu = row("numpy", "cpu", "ufunc", "vector_add", 1 << 20, "float32", 1e-3)[0]
    gpu = row("cupy", "gpu", "array_ops", "vector_add", 1 << 20, "float32", 2e-5)[0]
    gpu.update(change)
    return [cpu, gpu]


def refusal(path: Path) -> str:
    with pytest.raises(results.SchemaError) as exc:
        results.read_timings(path)
    return str(exc.value)


# -- 1. a GPU row's clocks against each other ------------------------------------------


def test_a_pipelined_time_far_below_the_device_time_is_implausible() -> None:
    """Pipelined times divided by 100 (device and sync untouched) passed every gate and
    made the headline 100x larger; now the row is refused, with or without a probe
    record, and an unmodified row (pipelined above the device time) passes."""
    gpu = two_rows()[1]
    assert plausibility.reason(gpu, ENV["ceilings"]) == ""
    bad = {**gpu, **{c: gpu[c] / 100 for c in PIPELINED}}
    assert "one of the two clocks is wrong" in plausibility.reason(bad, ENV["ceilings"])
    frame = pd.DataFrame([gpu, bad])
    base.judged(frame, base.Environment({}, "host.json", "missing"))  # no ceilings at all
    assert list(frame["status"]) == ["ok", "implausible"]
    assert "pipelined calls took" in frame["reason"].iloc[1]


def test_the_pipelined_gate_spares_the_committed_rows() -> None:
    """The lowest pipelined/device ratio among correct device-clocked rows is 0.25
    (torch's 2-D FFT): well above the gate's 0.1."""
    gpu = two_rows()[1]
    low = {**gpu, "median_s": 196e-6, "q1_s": 190e-6, "pipelined_median_s": 49e-6,
           "pipelined_q1_s": 48e-6, "pipelined_q3_s": 50e-6}
    assert plausibility._pipelined_reason(low) == ""


# -- 1. CPU rows against the probe -------------------------------------------------------


def test_cpu_rows_are_checked_against_the_probe(tmp_path: Path) -> None:
    """A CPU row past the host's caches faster than its threads can copy, or a call
    faster than timing an empty one, is implausible; the probe reads the caches' size
    from sysfs (each shared cache once); an older record without it says so."""
    record = {**ENV, "ceilings": {**ENV["ceilings"], "cpu_cache_bytes": 32.0 * 2**20},
              "timer_overhead_s": {"per_sample_s": 1e-7, "loop_s": 5e-7}}
    gates = ceilings.from_record(record)
    big = row("numpy", "cpu", "ufunc", "vector_add", 1 << 23, "float64", 1e-2)[0]
    assert big["bytes"] > 2 * 32 * 2**20 and plausibility.reason(big, gates) == ""
    fast = {**big, "median_s": big["median_s"] / 100, "gbps": big["gbps"] * 100}
    assert "faster than memory" in plausibility.reason(fast, gates)
    loaded = {**big, "median_s": big["median_s"] / 5, "gbps": big["gbps"] * 5}
    assert plausibility.reason(loaded, gates) == ""  # within the margin: a busy probe
    small = row("numpy", "cpu", "ufunc", "vector_add", 1024, "float32", 2e-6)[0]
    assert plausibility.reason(small, gates) == ""
    assert "faster than the clock" in plausibility.reason({**small, "median_s": 2e-8}, gates)
    assert plausibility.reason({**small, "median_s": 8e-8}, gates) == ""  # a floor timed busy
    assert any("no size of the CPU's caches" in n for n in plausibility.gate_notes(
        ENV["ceilings"]))
    sysfs = tmp_path / "cpu"
    for cpu, index, level, kind, shared, size in (
            (0, 0, 1, "Data", "0", "32K"), (0, 1, 1, "Instruction", "0", "32K"),
            (1, 0, 1, "Data", "1", "32K"), (0, 2, 3, "Unified", "0-1", "32768K"),
            (1, 2, 3, "Unified", "0-1", "32768K")):
        folder = sysfs / f"cpu{cpu}" / "cache" / f"index{index}"
        folder.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("shared_cpu_list", shared),
                            ("size", size)):
            (folder / name).write_text(f"{value}\n")
    assert ceilings.cpu_cache_bytes(sysfs) == 2 * 32 * 2**10 + 32 * 2**20
    assert ceilings.cpu_cache_bytes(tmp_path / "none") is None


def test_cpu_rows_within_the_caches_are_bounded_by_what_their_cores_move(tmp_path: Path
                                                                          ) -> None:
    """Within the caches no copy rate bounds a row; what its cores can move at all does:
    256 bytes a cycle per thread at twice the clock the probe read (3 GHz: 1,536 GB/s a
    thread). The clock: cpufreq's highest where the kernel has it, else /proc/cpuinfo's."""
    gates = {**ceilings.from_record(ENV), "cpu_clock_hz": 3e9}
    small = {**row("numpy", "cpu", "ufunc", "vector_add", 1 << 16, "float32", 1e-5)[0],
             "threads": 1}
    assert plausibility.reason(small, gates) == ""  # 78.6 GB/s
    fast = {**small, "median_s": small["median_s"] / 100, "gbps": small["gbps"] * 100}
    assert "more than 1 core(s) can move at all" in plausibility.reason(fast, gates)
    assert "1,536 GB/s" in plausibility.reason(fast, gates)
    assert plausibility.reason({**fast, "threads": 8}, gates) == ""  # 12,288 GB/s for 8
    edge = {**small, "gbps": 1536.0}
    assert plausibility.reason(edge, gates) == ""
    assert plausibility.reason({**edge, "gbps": 1536.5}, gates) != ""
    assert any("no CPU clock" in n for n in plausibility.gate_notes(ENV["ceilings"]))
    freq = tmp_path / "cpu" / "cpu1" / "cpufreq"
    freq.mkdir(parents=True)
    (freq / "cpuinfo_max_freq").write_text("3500000\n")  # kHz
    (tmp_path / "cpuinfo").write_text("cpu MHz\t\t: 2596.146\ncpu MHz\t: 2400.0\n")
    assert ceilings.cpu_clock_hz(tmp_path / "cpu", tmp_path / "cpuinfo") == 3.5e9
    assert ceilings.cpu_clock_hz(tmp_path / "none", tmp_path / "cpuinfo") == 2596.146e6
    assert ceilings.cpu_clock_hz(tmp_path / "none", tmp_path / "missing") is None


# -- 2. columns checked against each other and their sets --------------------------------


@pytest.mark.parametrize(("column", "value", "says"), [
    ("size", 0, "must be a whole number from 1 to 2**53"),
    ("size", -4, "must be a whole number from 1 to 2**53"),
    ("size", "", "column 'size' = empty"),
    ("size", 2**62, "must be a whole number from 1 to 2**53"),
    ("size", 2**50, "more than a 64-bit machine can address"),
    ("mode", "lukewarm", "column 'mode' = 'lukewarm': must be one of 'hot', 'cold'"),
    ("mode", "", "column 'mode' = '': must be one of"),
    ("device", "tpu", "column 'device' = 'tpu'"),
    ("stop_reason", "bored", "column 'stop_reason' = 'bored'"),
    ("gbps", "x100", "column 'gbps' = "),
    ("gflops", "x100", "column 'gflops' = "),
], ids=lambda v: str(v)[:12])
def test_a_column_off_its_set_or_its_other_columns_is_refused(
        tmp_path: Path, column: str, value: Any, says: str) -> None:
    rows = two_rows()
    if column == "size" and value == 2**50:
        rows[1]["kernel"] = "matmul"  # n = 2**50: 2**100 elements
    rows[1][column] = rows[1][column] * 100 if value == "x100" else value
    path = write_rows(tmp_path / "timings.csv", rows)
    message = refusal(path)
    assert says in message and str(path) in message and "line 3 (cupy-gpu" in message
    with pytest.raises(results.SchemaError):  # the report's reader too
        read_timings_lenient(path)


# -- 3. one bad value, every reader --------------------------------------------------------


def test_a_schema_version_that_is_not_a_whole_number_is_refused(tmp_path: Path) -> None:
    rows = two_rows(schema_version=math.inf)
    path = write_rows(tmp_path / "timings.csv", rows)
    with pytest.raises(results.SchemaError, match="column 'schema_version' is not int: "
                       "line 3"):
        read_timings_lenient(path)


@pytest.mark.parametrize("cores", ["four", [4], {"n": 4}, 0])
def test_a_host_record_field_of_the_wrong_type_is_left_out_with_a_note(
        tmp_path: Path, cores: Any) -> None:
    path = tmp_path / "host.json"
    path.write_text(json.dumps({**ENV, "cpu_cores": cores}))
    env = base.load_env(path)
    assert "cpu_cores" not in env.data and env.data["cpu_model"] == "Test CPU"
    assert env.problem.startswith("environment file host.json: key cpu_cores: ")
    frame = pd.DataFrame(two_rows())
    assert headline.machine(env, frame).cpu.startswith("Test CPU, 4 cores")  # the rows'


def test_a_host_record_too_deep_or_a_device_is_a_note(tmp_path: Path) -> None:
    deep = tmp_path / "host.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested deeper than Python can parse" in base.load_env(deep).problem
    deep.write_text(json.dumps(json.loads("[" * 40 + "]" * 40)))
    assert "nested more than 32 levels" in base.load_env(deep).problem
    assert "not a regular file" in base.load_env("/dev/zero").problem
    assert not ceilings.link_table({"pinned_gbps": {"h2d": {"inf": 5.0, "1e999": 3.0}}})


@pytest.mark.parametrize(("flag", "value"), [("--alpha", "2"), ("--alpha", "nan"),
                                             ("--alpha", "0"), ("--min-effect", "-1"),
                                             ("--min-effect", "inf"), ("--jobs", "0")])
def test_compare_options_out_of_range_are_usage_errors(
        capsys: pytest.CaptureFixture[str], flag: str, value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        compare.make_parser().parse_args(["--base", "a", "--new", "b", "--html", "c",
                                          flag, value])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"argument {flag}: '{value}' is " in err
    assert isinstance(inputs.number_in(0, 1)("0.5"), float)
    with pytest.raises(argparse.ArgumentTypeError):
        inputs.number_in(1, integer=True)("1.5")


# -- 4. configs --------------------------------------------------------------------------

BOMB = "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n"
               for a, b in zip("abcdef", "bcdefg", strict=True))


@pytest.mark.parametrize(("name", "content", "says"), [
    ("list", "- a\n- b\n", "the document is a list, not a mapping of config keys"),
    ("scalar", "42\n", "the document is a number, not a mapping"),
    ("binary", b"\xff\xfe\x00\x01garbage", "not UTF-8 text (byte 0): a binary file?"),
    ("syntax", "a: [1, 2\nb: 3\n", "not valid YAML: expected ',' or ']', but got ':' (line 2"),
    ("missing", None, "file is missing"),
    ("folder", "dir", "is a folder, not a config file"),
    ("deep", "a: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 32 levels deep"),
    ("recursive", "x: &x [*x]\n", "a value contains itself"),
    ("bomb", "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + BOMB
     + "backends: *g\n", "more than 100,000 values once its YAML aliases are expanded"),
    ("huge-size", "big", "config key kernels.vector_add.sizes[0]: 18446744073709551616: "
     "must be a whole number from 1 to 2**53"),
    ("huge-bytes", "bytes", "config key kernels.matmul.sizes[0]: 4294967296: matmul at "
     "4,294,967,296"),
], ids=lambda v: str(v)[:10])
def test_validate_config_refuses_in_one_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             name: str, content: Any, says: str) -> None:
    path = tmp_path / f"{name}.yaml"
    if content in ("big", "bytes"):
        cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
        kernel = "vector_add" if content == "big" else "matmul"
        cfg["kernels"][kernel]["sizes"] = [2**64 if content == "big" else 2**32]
        content = yaml.safe_dump(cfg)
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert cli.main(["validate-config", str(path)]) == 1
    err = capsys.readouterr().err
    assert err == f"{path}: {err.split(': ', 1)[1]}" and err.count("\n") == 1, err
    assert says in err, err


def test_a_config_given_to_snakemake_is_bounded_too() -> None:
    """Snakemake loads the config itself: the same bounds apply to the object."""
    shared: list[Any] = ["lol"] * 10
    for _ in range(6):
        shared = [shared] * 10
    with pytest.raises(config.ConfigError, match="alias bomb"):
        config.validate_config({"backends": shared})
    with pytest.raises(config.ConfigError, match="not a mapping"):
        config.validate_config([1, 2])  # type: ignore[arg-type]


# -- 5. a file cut mid-row ----------------------------------------------------------------


def test_a_file_cut_mid_row_is_refused_by_the_report_and_compare(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "set")
    for name in ("timings", "samples"):
        text = paths[name].read_text()
        paths[name].write_text(text[: len(text) - 40])
    message = re.escape("ends in the middle of a row (cut short?)")
    with pytest.raises(results.SchemaError, match=message):
        read_timings_lenient(paths["timings"])
    with pytest.raises(results.SchemaError, match=message):
        compare.resolve(tmp_path / "set")
    frame = results.read_timings(write_rows(tmp_path / "t.csv", two_rows()))
    with pytest.raises(results.SchemaError, match=message):
        stats.load_samples(paths["samples"], frame)
    gz = tmp_path / "timings.csv.gz"  # the same check on the decompressed text
    gz.write_bytes(gzip.compress(b"a,b\n1,2\n3,"))
    with pytest.raises(results.SchemaError, match=message):
        read_timings_lenient(gz)


# -- 6. outputs ---------------------------------------------------------------------------


def test_a_failed_write_names_the_file_and_leaves_the_earlier_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "summary.md"
    files.atomic_write_text(target, "earlier")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(files.WriteError) as exc:
        files.atomic_write_text(target, "new")
    assert str(exc.value) == f"cannot write {target}: No space left on device"
    assert target.read_text() == "earlier" and sorted(target.parent.iterdir()) == [target]
    with pytest.raises(files.WriteError, match="it is a folder"):
        files.atomic_write_text(tmp_path, "x")

    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(files.tempfile, "mkstemp", read_only)
    with pytest.raises(files.WriteError, match=r"cannot write .*: Permission denied"):
        files.atomic_write_text(tmp_path / "ro" / "index.html", "x")


def test_outputs_that_cannot_be_written_are_refused_before_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    paths = write_set(tmp_path / "set")
    (tmp_path / "md").mkdir()
    args = ["--timings", str(paths["timings"]), "--env", str(paths["env"]),
            "--html", str(tmp_path / "o" / "index.html")]
    with pytest.raises(SystemExit) as exc:
        report_main([*args, "--md", str(tmp_path / "md")])
    assert exc.value.code == 2
    assert capsys.readouterr().err == (f"gpubench report: --md {tmp_path / 'md'} is a "
                                       "folder: give a file name\n")
    monkeypatch.setattr(safety.os, "access", lambda path, mode: False)  # as for a user
    with pytest.raises(SystemExit) as exc:
        report_main([*args, "--md", str(tmp_path / "o" / "s.md")])
    assert "--html" in capsys.readouterr().err and "(read-only?)" in safety.unwritable_output(
        {"--html": tmp_path / "o" / "index.html"})
    assert not (tmp_path / "o").exists()


def _png(name: str) -> str:
    return base64.b64encode(name.encode()).decode()


def test_a_report_stopped_while_writing_figures_runs_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk after the first of three figures: the PNGs written are listed as the
    report's own, so the next report replaces them instead of refusing to start."""
    queue = figures.FigureQueue()
    for name in ("a", "b", "c"):
        queue.add(_png, name)
    folder, real = tmp_path / "summary_figures", figures.atomic_write_bytes
    written: list[Path] = []

    def one_then_full(path: Path, data: bytes) -> None:
        if written:
            raise files.WriteError(errno.ENOSPC, f"cannot write {path}: No space left")
        written.append(path)
        real(path, data)

    monkeypatch.setattr(figures, "atomic_write_bytes", one_then_full)
    with pytest.raises(files.WriteError):
        queue.write_pngs(folder, workers=1)
    assert [p.name for p in folder.glob("fig-*.png")] == ["fig-001.png"]
    assert safety.foreign_figures(folder, tmp_path / "summary.md") == []
    monkeypatch.setattr(figures, "atomic_write_bytes", real)
    assert len(queue.write_pngs(folder, workers=1)) == 3


# -- 7. the logs folder ---------------------------------------------------------------------


def test_a_logs_folder_of_someone_else_is_refused_and_ours_is_marked(tmp_path: Path) -> None:
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg.update(results_dir=str(tmp_path / "r"), logs_dir=str(tmp_path / "l"))
    gw.prepare(cfg)
    assert (tmp_path / "l" / safety.RESULTS_MARKER).is_file()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "collect.log").write_text("my own log")
    cfg["logs_dir"] = str(mine)
    with pytest.raises(gw.SetupError, match=r"config key logs_dir: .* holds files "
                       r"\(collect.log\) and no .gpubench-results marker"):
        gw.prepare(cfg)
    assert sorted(p.name for p in mine.iterdir()) == ["collect.log"]


# -- 8. large and endless inputs ----------------------------------------------------------


def test_inputs_over_their_size_or_endless_are_refused_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_rows(tmp_path / "timings.csv", two_rows())
    frame = results.read_timings(path)
    monkeypatch.setattr(results, "TIMINGS_MAX_BYTES", 1000)
    size = f"{path.stat().st_size:,}"
    with pytest.raises(results.SchemaError, match=rf"timings.csv: {size} bytes, over the "
                       "1,000 bytes a timings file may have"):
        read_timings_lenient(path)
    gz = tmp_path / "timings.csv.gz"  # compressed: counted while it is decompressed
    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(results.SchemaError, match="more than 1,000 bytes of text, the most "
                       "a timings file may have"):
        read_timings_lenient(gz)
    with pytest.raises(results.SchemaError, match="/dev/urandom: not a regular file"):
        stats.load_samples("/dev/urandom", frame)
    with pytest.raises(inputs.InputError, match="is a folder"):
        inputs.read_text(tmp_path)
    assert os.path.exists("/dev/zero")
