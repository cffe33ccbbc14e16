"""The first screen's figure reads its crossovers against the same CPU reference as the
crossover table and the sentences: its axis names that reference, each ✕ sits where its
curve crosses 1, and its alt text gives the table's figures. On synthetic result sets:
NumPy as the reference, and a multithreaded CPU framework measured at more sizes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_data import ENV, SIZES, _sample_frame, row, write_set

from gpubench import results
from gpubench.backends import reader_name
from gpubench.report import headline, load_inputs, plots
from gpubench.report.sections.crossover import crossover

CASE = ("vector_add", "default", "float32")
#: a host link fast enough that the GPU wins with transfers too: a ✕ on the dashed curves
FAST_LINK = {**ENV, "ceilings": {**ENV["ceilings"], "h2d_pageable_gbps": 800.0}}


def _with_numba(paths: dict[str, Path]) -> None:
    """numba-cpu at 4 threads, 3× faster than NumPy, at one size more than NumPy: the
    CPU pair measured at the most sizes, so the case's reference."""
    extra, samples = [], []
    for i, size in enumerate((*SIZES, 1 << 12)):
        r, s = row("numba", "cpu", "njit_prange", "vector_add", size, "float32",
                   (size * 1e-9 + 1e-6) / 3, threads=4, seed=900 + i)
        extra.append(r)
        samples.append(_sample_frame(r, s))
    t = pd.read_csv(paths["timings"], dtype={"energy_meter": object, "energy_reason": object})
    more = results.rows_frame(extra)
    pd.concat([t, more[[c for c in t.columns]]], ignore_index=True).to_csv(
        paths["timings"], index=False)
    old = pd.read_csv(paths["samples"])
    pd.concat([old, *samples], ignore_index=True).to_csv(paths["samples"], index=False)


def _overview(paths: dict[str, Path]):
    inputs = load_inputs(paths["timings"], paths["env"], paths["samples"])
    ov = inputs.overview
    assert ov is not None and ov.case == CASE
    return inputs, ov


def _crossing_of_one(curve: pd.DataFrame) -> float:
    """Where the plotted curve (straight in log-log) crosses 1 for good, rounded as the
    crossover table rounds: found here from the curve alone."""
    s = curve.sort_values("size_key")
    x, y = s["size_key"].to_numpy(float), s["speedup"].to_numpy(float)
    # the same rule as the table's: a "GPU time" of 1/speedup against a CPU time of 1
    return crossover(x, 1 / y, np.ones_like(y))[1]


def _check_marks(inputs, ov) -> int:
    """Every ✕ of the figure: at the table's crossover, on its curve, where it crosses
    1; the alt text and caption say the table's figure. Returns how many were checked."""
    table = {c.backend: c for c in inputs.crossings if (c.kernel, c.variant, c.dtype) == CASE}
    checked = 0
    for m in ov.crossovers.itertuples():
        if not math.isfinite(m.size):
            continue
        c = table[m.backend]
        want = (c.measured_transfers or c.estimated_transfers) if m.transfers else (
            c.device_resident)
        assert m.size == want[1] and m.text == want[0]
        curve = ov.lines[(ov.lines["backend"] == m.backend)
                         & (ov.lines["transfers"] == m.transfers)]
        assert _crossing_of_one(curve) == m.size
        s = curve.sort_values("size_key")
        on_curve = np.exp(np.interp(np.log(m.size), np.log(s["size_key"].to_numpy(float)),
                                    np.log(s["speedup"].to_numpy(float))))
        assert m.speedup == on_curve
        if "between" in m.text:  # a crossing, not "faster at every size": the ✕ is at 1×
            assert abs(math.log(m.speedup)) < 0.05
        said = f"{m.backend} ≈ {m.size:,.0f}"
        # the caption keeps the rows' ids; the text a screen reader reads, the names
        assert said in ov.caption and f"{reader_name(m.backend)} ≈ {m.size:,.0f}" in ov.alt
        checked += 1
    return checked


def test_the_figure_marks_the_tables_crossovers_against_numpy(tmp_path: Path) -> None:
    inputs, ov = _overview(write_set(tmp_path, env=FAST_LINK))
    assert ov.reference == "numpy-cpu (4 threads)"
    assert _check_marks(inputs, ov) >= 2  # cupy-gpu on the device and with transfers
    assert ov.crossovers["transfers"][np.isfinite(ov.crossovers["size"])].any()
    # the axis names the reference, in the PNG's arguments and the interactive twin, in
    # the answer's words (the framework by name), as does the legend
    lines, cross, title, label = ov.figure.args
    assert label == "NumPy (4 threads)" and label in title
    spec = plots.overview_figure(lines, cross, title, label)
    assert spec["layout"]["yaxis"]["title"]["text"] == "× NumPy (4 threads), log scale"
    assert "CuPy, on the device" in [t.get("name") for t in spec["data"]]
    assert not any("cupy-gpu" in str(t.get("name")) for t in spec["data"])
    assert "over NumPy (4 threads)" in ov.alt


def test_a_multithreaded_reference_is_named_and_moves_the_marks(tmp_path: Path) -> None:
    numpy_only = _overview(write_set(tmp_path / "numpy", env=FAST_LINK))[1]
    paths = write_set(tmp_path / "numba", env=FAST_LINK)
    _with_numba(paths)
    inputs, ov = _overview(paths)
    assert {c.reference for c in inputs.crossings if (c.kernel, c.variant, c.dtype) == CASE
            } == {"numba-cpu, 4 threads"}
    assert ov.reference == "numba-cpu (4 threads)"
    assert f"speedup over {reader_name('numba-cpu')} (4 threads)" in ov.alt
    assert "numba-cpu, 4 threads" in ov.caption and "NumPy" not in ov.alt
    spec = plots.overview_figure(*ov.figure.args)
    assert "× Numba on CPU (4 threads)" in spec["layout"]["yaxis"]["title"]["text"]
    assert _check_marks(inputs, ov) >= 2
    # the curves are against numba-cpu: 3× slower than against NumPy at the shared sizes
    a = numpy_only.lines.set_index(["backend", "transfers", "size_key"])["speedup"]
    b = ov.lines.set_index(["backend", "transfers", "size_key"])["speedup"]
    shared = a.index.intersection(b.index)
    assert len(shared) >= 4 and np.allclose(a[shared] / b[shared], 3.0, rtol=0.05)
    # and the crossover moves later: the CPU reference is faster
    x0 = numpy_only.crossovers.set_index(["backend", "transfers"])["size"]
    x1 = ov.crossovers.set_index(["backend", "transfers"])["size"]
    assert x1[("cupy-gpu", False)] > x0[("cupy-gpu", False)]



def test_the_sentence_gives_the_speedup_over_a_reference_that_is_not_numpy(
        tmp_path: Path) -> None:
    plain = _overview(write_set(tmp_path / "numpy"))[0].choice[0]
    assert plain.against_reference == {}  # NumPy is every reference: "× NumPy" says it
    line = next(s for s in headline.short_lines(plain) if s.startswith("Elementwise"))
    assert "CPU reference" not in line and "the CPU below ≈ " in line
    paths = write_set(tmp_path / "numba")
    _with_numba(paths)
    m = _overview(paths)[0].choice[0]
    winner = next(v for v in headline.headline_verdicts(m) if v.cls == "elementwise work").winner
    assert winner.backend == "cupy-gpu"
    # vector_add float32 against numba-cpu (3× NumPy's speed), float64 against NumPy
    by_case = dict(zip(winner.cases, winner.speedups, strict=True))
    want = [x / 3 if c[2] == "float32" else x for c, x in by_case.items()]
    median, names = m.against_reference[("elementwise work", "cupy-gpu")]
    assert names == ["numba-cpu, 4 threads", "numpy-cpu, 4 threads"]
    assert median == pytest.approx(float(np.median(want)), rel=0.05)
    assert median < 0.8 * winner.median
    line = next(s for s in headline.short_lines(m) if s.startswith("Elementwise"))
    assert (f"cupy-gpu, {headline.said_against_numpy(winner)} ({headline._x(median)} faster "
            "than the CPU reference, numba-cpu, 4 threads / numpy-cpu, 4 threads)") in line
