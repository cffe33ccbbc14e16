"""The report's first-call and compilation figures use rows whose first
call met no warm compilation cache, and say what they left out, and when no cold-cache
row exists."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from report_data import write_set

from gpubench.report import load_inputs, render_markdown
from gpubench.report.sections import first_call


def _set(tmp_path: Path, states: dict[str, str]):
    paths = write_set(tmp_path)
    t = pd.read_csv(paths["timings"], dtype={"cache_state": object})
    for backend, state in states.items():
        t.loc[(t["backend"] == backend) | (backend == "*"), "cache_state"] = state
    t.to_csv(paths["timings"], index=False)
    return load_inputs(paths["timings"], paths["env"], paths["samples"])


def test_warm_rows_are_left_out_and_the_section_says_so(tmp_path):
    inputs = _set(tmp_path, {"cupy-gpu": "warm", "torch-gpu": "cold"})
    section = first_call.build(inputs.df)
    assert section.per_backend is not None
    assert "cupy-gpu" not in set(section.per_backend["backend"])
    assert "torch-gpu" in set(section.per_backend["backend"])
    assert "warm compilation cache" in section.note
    assert "No cold-cache rows for cupy-gpu." in section.note
    md = render_markdown(inputs, "summary_figures/fig-001.png")
    assert "No cold-cache rows for cupy-gpu." in md


def test_no_cold_rows_at_all_is_said(tmp_path):
    inputs = _set(tmp_path, {"*": "warm"})
    section = first_call.build(inputs.df)
    assert section.per_backend is None and section.figure is None
    assert "No cold-cache rows exist" in section.note


def test_without_warm_rows_nothing_changes(tmp_path):
    inputs = _set(tmp_path, {})
    section = first_call.build(inputs.df)
    assert section.note == "" and section.per_backend is not None


def test_the_page_says_it_too(tmp_path):
    from gpubench.report import figures, render_html

    inputs = _set(tmp_path, {"*": "warm"})
    page = render_html(inputs, figures.FigureQueue())
    assert "No cold-cache rows exist" in page
    assert "No first calls were recorded" not in page
