"""Two MPI runs compared (tools/mpi_rows_compare.py): same keys, columns and statuses pass;
a missing row, a changed status or a changed column fails; the committed 4-GPU run
compared with itself passes with every ratio 1."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import mpi_rows_compare  # noqa: E402


def _run() -> pd.DataFrame:
    return pd.DataFrame({
        "job": ["p2p", "p2p", "halo"], "backend": ["cupy-gpu"] * 3, "ranks": [2, 2, 4],
        "size": [1, 1024, 64], "dtype": ["uint8", "uint8", "float64"],
        "path": ["direct", "staged", "direct"], "mode": [None, None, "weak"],
        "status": ["ok", "ok", "ok"], "median_s": [1e-5, 2e-5, 3e-2],
    })


def test_same_rows_pass_and_ratios_are_printed() -> None:
    old, new = _run(), _run()
    new["median_s"] = new["median_s"] * 2
    same, lines = mpi_rows_compare.compare(old, new)
    assert same
    assert any(line.split()[:2] == ["p2p", "2"] and line.split()[2] == "2.000" for line in lines)


@pytest.mark.parametrize("change", ["drop", "status", "column"])
def test_a_difference_in_what_was_measured_fails(change: str) -> None:
    old, new = _run(), _run()
    if change == "drop":
        new = new.iloc[:2]
    elif change == "status":
        new.loc[1, "status"] = "wrong_result"
    else:
        new["extra"] = 1
    same, lines = mpi_rows_compare.compare(old, new)
    assert not same
    assert lines[0].startswith({"drop": "keys", "status": "statuses", "column": "columns"}[change])


def test_duplicate_keys_are_unusable_input(tmp_path: Path) -> None:
    run = pd.concat([_run(), _run().iloc[:1]])
    path = tmp_path / "mpi.csv"
    run.to_csv(path, index=False)
    assert mpi_rows_compare.main([str(path), str(path)]) == 2


def test_the_committed_four_gpu_run_against_itself() -> None:
    path = ROOT / "evidence" / "mpi-across-gpus" / "h200x4" / "mpi.csv.xz"
    assert mpi_rows_compare.main([str(path), str(path)]) == 0
