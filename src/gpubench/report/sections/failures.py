"""Failures and skips: non-ok rows grouped by status, backend and reason, and every such
row (the GPU steps that could not run are among them; the page's one notice at the top
names them by cause).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpubench.report.base import _row_list, failure_groups


@dataclass
class Failures:
    groups: pd.DataFrame | None
    rows: pd.DataFrame | None
    n_bad: int


def build(df: pd.DataFrame) -> Failures:
    groups = failure_groups(df)
    bad = df[df["status"] != "ok"]
    return Failures(groups, _row_list(bad) if groups is not None else None, len(bad))
