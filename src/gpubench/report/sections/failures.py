"""Failures and skips: why GPU steps did not run, non-ok rows grouped by status, backend
and reason, and every such row.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpubench.report.base import _row_list, failure_groups, gpu_skip_reasons


@dataclass
class Failures:
    skipped: list[tuple[str, int]]
    groups: pd.DataFrame | None
    rows: pd.DataFrame | None
    n_bad: int


def build(df: pd.DataFrame) -> Failures:
    groups = failure_groups(df)
    bad = df[df["status"] != "ok"]
    return Failures(gpu_skip_reasons(df), groups,
                    _row_list(bad) if groups is not None else None, len(bad))
