"""gpubench.ncu: Nsight Compute's profiles, and the report's "why" for a missed target.

No GPU and no ncu here: a stand-in ``ncu`` (a script printing what ncu prints) runs the
command line's whole path; parsing, the summary and the explanation run on that text.
"""

from __future__ import annotations

import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpubench import ncu
from gpubench.report import sections

SIZE = 1 << 26
NEED = 3 * 4 * SIZE  # vector_add float32: two reads, one write


def raw_csv(kernels: list[dict[str, float | str]]) -> str:
    """ncu --csv --page raw as it prints it: a message, the header, the units, a row per
    profiled kernel."""
    stall = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    cols = ["ID", "Kernel Name", *ncu.METRICS, stall.format("long_scoreboard"),
            stall.format("wait"), stall.format("not_selected")]
    lines = ["==PROF== Connected to process 1", ",".join(f'"{c}"' for c in cols),
             ",".join('""' if c in ("ID", "Kernel Name") else '"unit"' for c in cols)]
    for i, k in enumerate(kernels):
        lines.append(",".join(f'"{k.get(c, i if c == "ID" else 0)}"' for c in cols))
    return "\n".join(lines) + "\n"


def kernel(us: float = 300.0, dram_pct: float = 80.0, moved: float = NEED,
           inst: float = 5 * SIZE / 32, occ: float = 90.0, long_sb: float = 30.0,
           not_selected: float = 1.0) -> dict[str, float | str]:
    return {"Kernel Name": "add", "gpu__time_duration.sum": us * 1e3,
            "dram__throughput.avg.pct_of_peak_sustained_elapsed": dram_pct,
            "dram__bytes_read.sum": moved * 2 / 3, "dram__bytes_write.sum": moved / 3,
            "sm__warps_active.avg.pct_of_peak_sustained_active": occ,
            "launch__registers_per_thread": 24, "smsp__inst_executed.sum": inst,
            "lts__t_sector_hit_rate.pct": 33.0,
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio":
                long_sb,
            "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": 1.5,
            "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio":
                not_selected}


def test_parse_skips_messages_and_the_units_row_and_summarise_averages_per_call() -> None:
    rows = ncu.parse_raw(raw_csv([kernel(us=300), kernel(us=310), kernel(us=290)]))
    assert len(rows) == 3
    p = ncu.summarise(rows, NEED, SIZE)
    assert p["kernels_per_call"] == 1
    assert p["us_per_call"] == pytest.approx(300.0)
    assert p["bytes_ratio"] == pytest.approx(1.0)
    assert p["instructions_per_element"] == pytest.approx(5.0)
    assert p["dram_pct_of_peak"] == 80.0 and p["occupancy_pct"] == 90.0
    assert p["top_stall"] == "long_scoreboard" and p["top_stall_per_issue"] == 30.0
    with pytest.raises(ValueError):
        ncu.summarise([], NEED, SIZE)


def test_two_kernels_per_call_count_both_and_read_the_longest() -> None:
    """A reduction's two kernels (partial sums, then the finish): their bytes and
    instructions add up; throughput and stalls are the longest one's."""
    big = kernel(us=95, dram_pct=84, moved=NEED, long_sb=26)
    small = kernel(us=4, dram_pct=2, moved=0, inst=1000, long_sb=0.1, not_selected=9)
    p = ncu.summarise(ncu.parse_raw(raw_csv([big, small] * 3)), NEED, SIZE)
    assert p["kernels_per_call"] == 2
    assert p["us_per_call"] == pytest.approx(99.0)
    assert p["dram_pct_of_peak"] == 84 and p["top_stall"] == "long_scoreboard"


def _profile(**kw: float | str) -> dict[str, float | str]:
    return {**ncu.summarise(ncu.parse_raw(raw_csv([kernel()] * 3)), NEED, SIZE),
            "ncu_version": "2025.3.1", "commit": "abc1234", **kw}


@pytest.mark.parametrize("fields, says", [
    ({"bytes_ratio": 1.5}, "moves 1.50x the bytes it must"),
    ({"instructions_per_element": 124.0, "top_stall": "not_selected"}, "issue-bound: 124"),
    ({"top_stall": "math_pipe_throttle"}, "issue-bound"),
    ({}, "latency-bound: its warps wait on global memory (long_scoreboard)"),
])
def test_explain_names_what_holds_the_kernel(fields: dict, says: str) -> None:
    text = ncu.explain(_profile(**fields))
    assert says in text
    assert "Nsight Compute 2025.3.1, commit abc1234" in text
    assert ("occupancy" in ncu.explain(_profile(**fields, occupancy_pct=47.0))
            and "occupancy" not in text)


def _profiles(tmp_path: Path, **kw: str) -> pd.DataFrame:
    row = {**_profile(), "gpu_name": "NVIDIA H100 80GB HBM3", "framework": "numba",
           "implementation": "cuda_jit", "kernel": "vector_add", "variant": "default",
           "dtype": "float32", "fingerprint": ncu.fingerprint("numba", "cuda_jit",
                                                               "vector_add"), **kw}
    path = tmp_path / "profiles.csv"
    pd.DataFrame([row], columns=ncu.COLUMNS).to_csv(path, index=False)
    return ncu.read_profiles(path)  # this row alone, not the shipped ones


def test_why_needs_the_same_gpu_model_and_the_same_code(tmp_path: Path) -> None:
    cell = ("numba", "cuda_jit", "vector_add", "default", "float32")
    profiles = _profiles(tmp_path)
    assert "latency-bound" in ncu.why(profiles, "NVIDIA H100 80GB HBM3", *cell)
    assert "not profiled on this GPU" in ncu.why(profiles, "NVIDIA H200", *cell)
    assert "not profiled" in ncu.why(profiles, "NVIDIA H100 80GB HBM3", "numba", "cuda_jit",
                                     "vector_add", "default", "float64")
    assert "no GPU name" in ncu.why(profiles, None, *cell)
    stale = _profiles(tmp_path, fingerprint="0123456789abcdef")
    assert "predates a change" in ncu.why(stale, "NVIDIA H100 80GB HBM3", *cell)


def test_fingerprint_follows_the_implementations_code() -> None:
    a = ncu.fingerprint("numba", "cuda_jit", "vector_add")
    assert a and a == ncu.fingerprint("numba", "cuda_jit", "vector_add")
    assert a != ncu.fingerprint("numba", "cuda_jit", "elementwise")  # another module
    assert ncu.fingerprint("numba", "no_such_impl", "vector_add") == ""


def test_load_profiles_refuses_a_file_without_the_columns(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("gpu_name,framework\nx,y\n")
    with pytest.raises(ValueError, match="lack columns"):
        ncu.load_profiles([bad])


def test_the_shipped_profiles_load_and_name_real_implementations(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """The packaged file has every column and names registered implementations; without
    it the report has an empty table, not an error."""
    shipped = ncu.load_profiles()
    assert len(shipped) and ncu.SHIPPED.is_file()
    assert list(shipped.columns[:len(ncu.COLUMNS)]) == ncu.COLUMNS
    for p in shipped.itertuples():
        assert ncu.fingerprint(p.framework, p.implementation, p.kernel), p
        assert math.isfinite(float(p.dram_pct_of_peak)), p
    monkeypatch.setattr(ncu, "SHIPPED", tmp_path / "absent.csv")
    assert ncu.load_profiles().empty and list(ncu.load_profiles().columns) == ncu.COLUMNS


def test_targets_table_says_why_a_target_is_missed(tmp_path: Path) -> None:
    rows = pd.DataFrame([
        {"backend": b, "framework": b.split("-")[0], "implementation": i,
         "kernel": "vector_add", "variant": "default", "dtype": "float32",
         "size_key": SIZE, "pct_of_ceiling": pct, "status": "ok", "mode": "hot",
         "device": "gpu"}
        for b, i, pct in [("numba-gpu", "cuda_jit", 92.0), ("numba-gpu", "vectorize_cuda", 80.0),
                          ("cupy-gpu", "array_ops", 99.0)]])
    md = sections.targets_table(rows, "hot", _profiles(tmp_path),
                                "NVIDIA H100 80GB HBM3").report.markdown()
    numba = next(ln for ln in md.splitlines() if "numba-gpu" in ln)
    assert "MISSED" in numba and "| cuda_jit |" in numba and "latency-bound" in numba
    cupy = next(ln for ln in md.splitlines() if "cupy-gpu" in ln)
    assert "| met | array_ops |" in cupy and "latency" not in cupy
    assert "why (Nsight Compute)" in md
    assert "why" not in sections.targets_table(rows, "hot").report.markdown()


def fake_ncu(tmp_path: Path, fail: bool = False) -> Path:
    """A stand-in for ncu: prints its version, or the raw CSV of three kernels and the
    child's line; ``fail``: exits 1 as ncu does when the child fails."""
    csv_file = tmp_path / "raw.csv"
    csv_file.write_text(raw_csv([kernel()] * 3))
    script = tmp_path / "ncu"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "Version 2025.3.1.0 (build 1)"; exit 0; fi\n'
        + ("echo 'CUDA error' >&2; exit 1\n" if fail else
           f"cat {csv_file}\necho '{ncu.marker(NEED, 'NVIDIA H100 80GB HBM3')}' >&2\n"))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _cli(tmp_path: Path, script: Path, *cells: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "gpubench.ncu", "--ncu", str(script), "--out",
            str(tmp_path / "out.csv"), "--commit", "f00ba12"]
    for cell in cells:
        args += ["--cell", *cell.split()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GPUBENCH_GIT_COMMIT": ""})


def test_cli_writes_one_row_per_cell_and_a_rerun_replaces_it(tmp_path: Path) -> None:
    script = fake_ncu(tmp_path)
    cells = ["numba cuda_jit vector_add default float32",
             "cupy array_ops vector_add default float32"]
    done = _cli(tmp_path, script, *cells)
    assert done.returncode == 0, done.stderr
    assert "latency-bound" in done.stdout
    out = pd.read_csv(tmp_path / "out.csv", dtype={"commit": str})
    assert list(out.columns) == ncu.COLUMNS and len(out) == 2
    assert set(out["ncu_version"]) == {"2025.3.1.0"} and set(out["commit"]) == {"f00ba12"}
    assert out["fingerprint"].iloc[0] == ncu.fingerprint("numba", "cuda_jit", "vector_add")
    assert _cli(tmp_path, script, cells[0]).returncode == 0
    again = ncu.read_profiles(tmp_path / "out.csv")
    assert len(again) == 2  # replaced, not added
    assert set(again["fingerprint"]) == set(out["fingerprint"].astype(str))


def test_a_fingerprint_of_digits_only_survives_a_rewrite(tmp_path: Path) -> None:
    """A hex digest can be all digits, with a leading zero: read back as a number it
    would never match the code's fingerprint again."""
    path = tmp_path / "p.csv"
    row = {c: "x" for c in ncu.KEY}
    row.update(fingerprint="0123456789012345", commit="0071234", size=SIZE)
    ncu.write_rows(path, [row])
    ncu.write_rows(path, [{**row, "dtype": "y"}])
    got = ncu.read_profiles(path)
    assert list(got["fingerprint"]) == ["0123456789012345"] * 2
    assert list(got["commit"]) == ["0071234"] * 2


def test_cli_reports_a_failed_cell_with_ncus_reason(tmp_path: Path) -> None:
    done = _cli(tmp_path, fake_ncu(tmp_path, fail=True),
                "numba cuda_jit vector_add default float32")
    assert done.returncode == 1
    assert "failed: exit 1: CUDA error" in done.stderr
    assert pd.read_csv(tmp_path / "out.csv").empty


def test_cli_without_ncu_says_so(tmp_path: Path) -> None:
    done = _cli(tmp_path, tmp_path / "no-ncu", "numba cuda_jit vector_add default float32")
    assert done.returncode == 2 and "Nsight Compute is needed" in done.stderr


def test_targets_table_keeps_the_best_implementations_name_with_a_repeated_index() -> None:
    """Rows gathered from several frames can repeat index labels: the best
    implementation is still the one with the highest share, named beside it."""
    rows = pd.DataFrame([
        {"backend": "numba-gpu", "framework": "numba", "implementation": i,
         "kernel": "vector_add", "variant": "default", "dtype": "float32",
         "size_key": SIZE, "pct_of_ceiling": pct, "status": "ok", "mode": "hot",
         "device": "gpu"} for i, pct in [("vectorize_cuda", 80.0), ("cuda_jit", 92.0)]],
        index=[0, 0])
    md = sections.targets_table(rows, "hot").report.markdown()
    assert "| 92.0 % |" in md and "| cuda_jit |" in md and "vectorize_cuda" not in md


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["numba-gpu", "cupy-gpu"]),
                          st.sampled_from(["a", "b", "c"]),
                          st.sampled_from(["float32", "float64"]),
                          st.sampled_from([1 << 20, SIZE]),
                          st.floats(min_value=50.0, max_value=105.0)),
                min_size=1, max_size=12))
def test_targets_verdict_is_the_weakest_case_of_the_best_implementations(cells) -> None:
    """Property: per backend, the share shown is the minimum over (variant, dtype) at
    the largest size of the maximum over implementations, and MISSED exactly when it
    is under the kernel's target; smaller sizes never count."""
    rows = pd.DataFrame([
        {"backend": b, "framework": b.split("-")[0], "implementation": impl,
         "kernel": "vector_add", "variant": "default", "dtype": dtype, "size_key": size,
         "pct_of_ceiling": pct, "status": "ok", "mode": "hot", "device": "gpu"}
        for b, impl, dtype, size, pct in cells])
    md = sections.targets_table(rows, "hot").report.markdown()
    target = next(t for k, _, t in sections.ceilings.targets() if k == "vector_add")
    for backend, g in rows.groupby("backend"):
        # the largest size per dtype over every backend's rows, as the table reads it
        kernel_largest = rows.groupby("dtype")["size_key"].transform("max")[g.index]
        at = g[g["size_key"] == kernel_largest]
        line = next((ln for ln in md.splitlines() if f"| {backend} |" in ln), None)
        if at.empty:
            assert line is None
            continue
        want = at.groupby("dtype")["pct_of_ceiling"].max().min()
        assert f"| {want:.1f} % |" in line
        assert ("MISSED" in line) == (want < target)


@pytest.mark.parametrize("pct, verdict", [(95.0, "met"), (94.99, "MISSED")])
def test_a_share_equal_to_the_target_meets_it(pct: float, verdict: str) -> None:
    rows = pd.DataFrame([{"backend": "cupy-gpu", "framework": "cupy",
                          "implementation": "array_ops", "kernel": "vector_add",
                          "variant": "default", "dtype": "float32", "size_key": SIZE,
                          "pct_of_ceiling": pct, "status": "ok", "mode": "hot",
                          "device": "gpu"}])
    line = sections.targets_table(rows, "hot").report.markdown().splitlines()[-1]
    assert f"| {verdict} |" in line


@pytest.mark.parametrize("need", [NEED, float(NEED), 268435460.0, 1.5e12])
def test_the_childs_line_reads_back_whatever_number_type_bytes_moved_gives(need) -> None:
    """kernels' bytes_moved returns floats (an H100 run lost every cell to a
    parser that took only digits)."""
    text = "==PROF== noise\n" + ncu.marker(need, "NVIDIA H100 80GB HBM3") + "\nmore\n"
    assert ncu.read_marker(text) == (float(need), "NVIDIA H100 80GB HBM3")
    assert ncu.read_marker("gpubench-ncu bytes=x gpu=y") is None
    assert ncu.read_marker("nothing") is None


def test_the_child_keeps_the_cells_buffers_alive_while_it_calls(monkeypatch) -> None:
    """CUDA Python's builders keep raw pointers only: a child that let the build context
    go freed the inputs before the first call (on an H100: CUDA_ERROR_ILLEGAL_ADDRESS
    on every CUDA Python cell, with or without ncu)."""
    import weakref

    import cuda.bindings

    from gpubench import backends, spec
    from gpubench.backends.numpy.adapter import NumpyCPU

    class Buffer:
        def __init__(self, host):
            self.host = host

    class Backend(NumpyCPU):
        def to_device(self, host):
            return Buffer(host)

        def empty(self, shape, dtype):
            return Buffer(np.empty(shape, dtype))

        def device_name(self):
            return "stand-in"

    calls: list[bool] = []

    def builder(ctx):
        alive = [weakref.ref(buf) for buf in (*ctx.inputs.values(), *ctx.outputs.values())]

        def call():
            calls.append(all(ref() is not None for ref in alive))
        return call

    impl = type("Impl", (), {"name": "raw", "builder": staticmethod(builder)})()
    fake_rt = type("rt", (), {"cudaProfilerStart": staticmethod(lambda: None),
                              "cudaProfilerStop": staticmethod(lambda: None)})
    monkeypatch.setattr(cuda.bindings, "runtime", fake_rt, raising=False)
    monkeypatch.setattr(backends, "load_backend", lambda name: Backend())
    monkeypatch.setattr(spec, "implementations", lambda *a: [impl])
    assert ncu.child(ncu.Cell("numpy", "raw", "vector_add", "default", "float32"), 1024) == 0
    assert calls == [True] * (2 * ncu.CALLS)
