"""The run-to-run figures (tools/run_ranges.py): the committed output reproduces from the
committed runs, and a point is judged inside a range by the rule its docstring states."""

from __future__ import annotations

import contextlib
import io
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "evidence" / "run-to-run-ranges" / "h100"
sys.path.insert(0, str(ROOT / "tools"))
import run_ranges  # noqa: E402


@pytest.mark.parametrize(("point", "lo", "hi", "inside"), [
    (10.0, 5.0, 20.0, True), (5.0, 5.0, 20.0, True), (20.0, 5.0, 20.0, True),
    (4.9, 5.0, 20.0, False), (20.1, 5.0, 20.0, False),
    (10.0, math.nan, math.nan, None),
    (math.nan, math.inf, math.inf, True),  # never inside "never"
    (math.nan, 5.0, 20.0, False),  # never outside a measured range
])
def test_a_point_inside_a_range(point: float, lo: float, hi: float,
                                inside: bool | None) -> None:
    assert run_ranges._inside(point, lo, hi) == inside


@pytest.mark.parametrize(("runs", "committed"), [
    (("h100/a1", "h100/a2", "h100/a3", "h100-second-machine/b1"), "ranges-a1-a2-a3-b1.txt"),
    (("h100/a1", "h100/a2", "h100/a3"), "h100/ranges.txt"),
])
def test_committed_figures_reproduce(monkeypatch: pytest.MonkeyPatch,
                                     runs: tuple[str, ...], committed: str) -> None:
    """The runs' figures, as committed (a stale file fails)."""
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = run_ranges.main([str(RUNS.parent.relative_to(ROOT) / r) for r in runs])
    assert rc == 1  # the bars are missed on these hosts (evidence/run-to-run-ranges)
    assert out.getvalue() == (RUNS.parent / committed).read_text()
