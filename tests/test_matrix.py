"""'Which framework?': the measured matrix, its sentences, the claims of the workshop book and
guides, energy cells, and the side-by-side comparison of two machines, on synthetic CPU-made
result sets."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_data import scale_times, write_set

from gpubench.report import cells as report_cells
from gpubench.report import claims as guide
from gpubench.report import load_inputs, matrix, render_markdown, verdicts
from gpubench.report.compare import build_compare

TIME_COLS = [c for c in ("median_s", "min_s", "max_s", "q1_s", "q3_s", "mean_s",
                         "sync_median_s", "sync_q1_s", "sync_q3_s", "pipelined_median_s",
                         "pipelined_q1_s", "pipelined_q3_s")]


def _inputs(paths: dict[str, Path]):
    return load_inputs(paths["timings"], paths["env"], paths["samples"])


def _edit(paths: dict[str, Path], backend: str, factor: float, **extra) -> None:
    """Scale a backend's times by ``factor`` (its samples then no longer match: the
    quartiles decide) and set other columns on its rows."""
    t = pd.read_csv(paths["timings"], dtype={"energy_meter": object, "energy_reason": object})
    rows = t["backend"] == backend
    scale_times(t, rows, factor, TIME_COLS)
    for col, value in extra.items():
        t.loc[rows, col] = value
    t.to_csv(paths["timings"], index=False)


def test_cells_trace_to_rows_and_missing_data_says_not_measured(tmp_path: Path) -> None:
    inputs = _inputs(write_set(tmp_path))
    m = inputs.choice[0]
    assert m.backends[0] == "numpy-cpu" and "cupy-gpu" in m.backends
    cell = m.cells[("cupy-gpu", "speedup: elementwise")]
    assert cell.measured and cell.value > 1
    traced = inputs.df.loc[cell.rows]
    assert set(traced["backend"]) == {"cupy-gpu"} and set(traced["kernel"]) == {"vector_add"}
    # the synthetic set has no FFT rows, no MPI for cupy and no energy readings
    assert m.cells[("cupy-gpu", "speedup: FFT")].text.startswith("not measured: no ok fft")
    assert m.cells[("cupy-gpu", "work per joule")].text.startswith("not measured")
    assert m.cells[("cupy-gpu", "multi-GPU / ranks")].text.startswith("not measured")
    sources = m.sources(inputs.df)
    assert sources is not None and any("vector_add/default" in r[3]
                                       for r in sources.itertuples(index=False))


def test_a_sentence_follows_the_data(tmp_path: Path) -> None:
    paths = write_set(tmp_path)
    before = [s for s in _inputs(paths).choice[1] if s.startswith("Elementwise")]
    assert len(before) == 1 and "choose cupy-gpu" in before[0]
    _edit(paths, "torch-gpu", 1e-3)  # torch now far faster than CuPy
    after = [s for s in _inputs(paths).choice[1] if s.startswith("Elementwise")]
    assert "choose torch-gpu" in after[0] and "cupy-gpu" in after[0]
    assert after != before


def test_energy_cells_and_their_fallback(tmp_path: Path) -> None:
    paths = write_set(tmp_path)
    _edit(paths, "cupy-gpu", 1.0, energy_j=0.002, energy_power_w=400.0,
          energy_meter="nvml_total_energy")
    _edit(paths, "torch-gpu", 1.0, energy_reason="not measured: NVML energy counter "
          "unreadable: no driver")
    m = _inputs(paths).choice[0]
    cupy = m.cells[("cupy-gpu", "work per joule")]
    assert "GB/J memory-bound" in cupy.text and "GFLOP/J GEMM" in cupy.text
    assert "400–400 W" in cupy.text and cupy.rows
    torch = m.cells[("torch-gpu", "work per joule")]
    assert torch.text == "not measured: NVML energy counter unreadable: no driver"


def test_the_energy_fallback_says_why_the_read_rows_have_none(tmp_path: Path) -> None:
    """``energy: best``: most rows say a faster implementation was read; the cell gives
    the reason the read one has no energy."""
    paths = write_set(tmp_path)
    _edit(paths, "torch-gpu", 1.0, energy_reason="not measured: energy: best only (a "
          "faster implementation of this case was read: eager)")
    t = pd.read_csv(paths["timings"], dtype={"energy_reason": object})
    last = t.index[t["backend"] == "torch-gpu"][-1]
    t.loc[last, "energy_reason"] = "not measured: NVML energy counter unreadable: no driver"
    t.to_csv(paths["timings"], index=False)
    torch = _inputs(paths).choice[0].cells[("torch-gpu", "work per joule")]
    assert torch.text == "not measured: NVML energy counter unreadable: no driver"


def test_the_sources_claims_get_a_verdict(tmp_path: Path) -> None:
    m = _inputs(write_set(tmp_path)).choice[0]
    table = guide.claims(m)
    verdicts = {r[0]: r[2] for r in table.itertuples(index=False)}
    assert set(verdicts.values()) <= {"holds", "does not hold", "partly", "not measured"}
    # no CUDA Python rows in the synthetic set: its claim cannot be judged
    assert verdicts["CUDA Python: verbose"] == "not measured"
    speed = verdicts["typical speedup 10–100× over NumPy (comparison guide)"]
    assert speed in {"holds", "does not hold", "partly"}


def test_the_summary_opens_on_the_answer(tmp_path: Path) -> None:
    """summary.md in the page's order: the machine, the recommendations, the figure, the
    compact matrix; then the full sentences, the full matrix and the claims."""
    inputs = _inputs(write_set(tmp_path))
    md = render_markdown(inputs, "summary_figures/fig-001.png")
    lines = md.splitlines()
    assert lines[0].startswith("# ") and "Test GPU" in lines[0]
    assert lines[2].startswith("**GPU** 1 × Test GPU") and "**CPU**" in lines[2]
    assert "**frameworks**" in lines[2] and "**commit** abc123" in lines[2]
    first_rec = next(i for i, x in enumerate(lines) if x.startswith("- "))
    figure = next(i for i, x in enumerate(lines) if x.startswith("![")
                  and x.endswith("(summary_figures/fig-001.png)"))
    compact = next(i for i, x in enumerate(lines) if x.startswith("| framework | "))
    assert 2 < lines.index("## Which framework?") < first_rec < figure < compact
    assert md.index("| framework | ") < md.index("### The recommendations in full") < md.index(
        "### The full matrix") < md.index("### Claims from the workshop book and two guides, "
                                          "checked") < md.index("## Summary")
    # the compact matrix: at most eight columns, units in the headers
    header = lines[compact].strip("|").split(" | ")
    assert len(header) <= 8 and "elementwise, × NumPy" in header[1]
    assert "seed" not in md.lower()


def test_the_full_matrix_fits_in_tables_and_says_a_shared_reason_once(tmp_path: Path) -> None:
    m = _inputs(write_set(tmp_path)).choice[0]
    tables = m.tables()
    assert [t for t, _f, _n in tables] == ["Speedup over NumPy", "Costs", "Crossover, "
                                           "scaling, autodiff, correctness"]
    aspects = {h for _t, f, _n in tables if f is not None for h in f.columns}
    notes = [n for _t, _f, ns in tables for n in ns]
    # no MPI file: one note instead of a column that says so in every row
    assert not any(h.startswith("multi-GPU") for h in aspects)
    assert "multi-GPU / ranks: not measured: MPI was not run (every framework)" in notes
    for _t, f, _n in tables:
        if f is not None:
            assert len(f.columns) <= 9
            assert not any("MPI was not run" in c for c in f.to_numpy().ravel())
    # speedups: the unit in the header, the band named once below
    speed = tables[0][1]
    assert "speedup: elementwise (× NumPy)" in speed.columns
    assert not any("×" in c for c in speed.to_numpy().ravel())
    assert any(n.startswith("speedup: elementwise: medium sizes, compared at vector_add at ")
               for n in notes), notes
    # no GPU framework measured a reduction: no column, one note
    assert "speedup: reductions (× NumPy)" not in speed.columns
    assert ("speedup: reductions: not measured: no ok reduction rows with a NumPy baseline "
            "(every framework but the NumPy baseline)") in notes
    # a reason shared by some frameworks (not all) is one note naming them
    cells = {(b, a): report_cells.Cell("not measured: no rows") for b in ("x-gpu", "y-gpu")
             for a in matrix.ASPECTS}
    cells.update({("z-gpu", a): report_cells.Cell("3 s") for a in matrix.ASPECTS})
    costs = matrix.Matrix(["x-gpu", "y-gpu", "z-gpu"], cells).tables()[1]
    assert costs[1]["call overhead"].tolist() == ["not measured (see below)"] * 2 + ["3 s"]
    assert "call overhead: not measured: no rows (x-gpu, y-gpu)" in costs[2]


def test_numpy_is_not_charged_for_another_frameworks_first_call(tmp_path: Path) -> None:
    """An interop row's first call starts a second framework (PyTorch's import, 3.63 s on
    the H100): neither the matrix cell nor the compact matrix counts it as NumPy's."""
    paths = write_set(tmp_path)
    t = pd.read_csv(paths["timings"], dtype={"energy_meter": object, "energy_reason": object})
    numpy_row = t[t["backend"] == "numpy-cpu"].iloc[[0]].copy()
    numpy_row["kernel"], numpy_row["implementation"] = "interop", "from_torch"
    numpy_row["variant"], numpy_row["first_call_s"] = "dlpack", 3.63
    pd.concat([t, numpy_row]).to_csv(paths["timings"], index=False)
    inputs = load_inputs(paths["timings"], paths["env"])
    m = inputs.choice[0]
    assert (inputs.df["kernel"] == "interop").any()
    cell = m.cells[("numpy-cpu", "first call, JIT")]
    assert "interop" not in cell.text and "3.63 s" not in cell.text and cell.value < 0.1
    compact = render_markdown(inputs)
    row = next(x for x in compact.splitlines() if x.startswith("| NumPy | 1 (baseline)"))
    assert row.rstrip(" |").split(" | ")[-1] == f"{cell.value * 1e3:.3g}"


def test_each_recommendation_in_one_line(tmp_path: Path) -> None:
    from gpubench.report import headline

    m, lines, _claims = _inputs(write_set(tmp_path)).choice
    short = headline.short_lines(m)
    assert len(short) == len(lines) >= 2
    for s, full in zip(short, lines, strict=True):
        assert s.split(" (")[0] == full.split(",")[0] and s.endswith(".")
        assert len(s) < len(full)
    elementwise = next(s for s in short if s.startswith("Elementwise"))
    # the fixture's CuPy wins the class; its crossover, with transfers never reached
    assert "cupy-gpu, 83.9× faster than NumPy (81.8–85.6×); torch-gpu, 3× slower than NumPy " \
        "(2.93–3.07×), lies below" in elementwise
    assert "the CPU below ≈ 6,100 elements" in elementwise
    assert "with host transfers the CPU stays ahead at every size in 2 of 2 cases" in elementwise


def test_two_machines_side_by_side_with_noise_aware_labels(tmp_path: Path) -> None:
    base = write_set(tmp_path / "base")
    new = write_set(tmp_path / "new")
    _edit(new, "cupy-gpu", 0.5)  # the new machine's CuPy calls take half the time
    out = tmp_path / "compare.html"
    build_compare(base["timings"], new["timings"], out, tmp_path / "compare.md")
    md = (tmp_path / "compare.md").read_text()
    assert "## Which framework? The two machines side by side" in md
    line = next(x for x in md.splitlines()
                if x.startswith("| cupy-gpu | speedup: elementwise"))
    assert "FASTER: new faster in" in line
    same = next(x for x in md.splitlines()
                if x.startswith("| torch-gpu | speedup: elementwise"))
    assert "SAME" in same


@pytest.mark.parametrize("cls", list(verdicts.classes()))
def test_every_class_has_kernels_the_suite_knows(cls: str) -> None:
    from gpubench.spec import kernel_names

    assert set(verdicts.classes()[cls]) <= set(kernel_names())


def test_multi_gpu_scaling_comes_from_the_mpi_rows() -> None:
    mpi = pd.DataFrame({"job": ["halo", "halo", "halo", "reduction"],
                        "framework": ["cupy"] * 4, "device": ["gpu"] * 4,
                        "ranks": [1, 2, 4, 4], "efficiency": [1.0, 0.95, 0.9, 0.8],
                        "status": ["ok", "ok", "ok", "error"]})
    cell = report_cells.mpi_cell(mpi, "cupy", "gpu")
    assert cell.text.startswith("4 GPUs: efficiency 0.90 (median of 1 MPI rows: halo)")
    assert report_cells.mpi_cell(mpi, "jax", "gpu").text.startswith("not measured")
    assert report_cells.mpi_cell(mpi.iloc[0:0], "cupy", "gpu").text.startswith("not measured")


def test_ranks_that_shared_one_gpu_are_not_called_gpus() -> None:
    """Two ranks on one card (mpi.oversubscribe, the one-GPU machines) are "ranks
    sharing 1 GPU", not "2 GPUs"; two cards are GPUs."""
    mpi = pd.DataFrame({"job": ["halo"] * 2, "framework": ["cupy"] * 2, "device": ["gpu"] * 2,
                        "ranks": [1, 2], "efficiency": [1.0, 0.4], "status": ["ok", "ok"],
                        "gpu_uuids": ["GPU-a", "GPU-a;GPU-a"]})
    assert report_cells.mpi_cell(mpi, "cupy", "gpu").text.startswith(
        "2 ranks sharing 1 GPU: efficiency 0.40")
    mpi.loc[1, "gpu_uuids"] = "GPU-a;GPU-b"
    assert report_cells.mpi_cell(mpi, "cupy", "gpu").text.startswith("2 GPUs: efficiency 0.40")
