"""Correctness: the worst relative error per implementation against its tolerance, and
every wrong row.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpubench.report.base import _row_list, fmt_relerr
from gpubench.report.render import text_table
from gpubench.spec import kernel_names


@dataclass
class Correctness:
    """``table``: per implementation (None: nothing was checked); ``wrong``: every wrong
    row (None: none)."""

    table: pd.DataFrame | None
    wrong: pd.DataFrame | None
    n_wrong: int


def build(df: pd.DataFrame) -> Correctness:
    checked = df[df["status"].isin(["ok", "wrong_result"])]
    if checked.empty:
        return Correctness(None, None, 0)
    keys = ["kernel", "variant", "dtype", "framework", "implementation", "device"]
    rows, classes = [], []
    order = {k: i for i, k in enumerate(kernel_names())}
    groups = sorted(checked.groupby(keys, sort=True),
                    key=lambda kv: (order.get(kv[0][0], len(order)), kv[0]))
    for key, g in groups:
        n_wrong = int((g["status"] == "wrong_result").sum())
        nan_err = n_wrong and g.loc[g["status"] == "wrong_result", "rel_err"].isna().any()
        worst = "nan" if nan_err else fmt_relerr(g["rel_err"].max())
        rows.append([*key, worst, fmt_relerr(g["tolerance"].max()), str(len(g)),
                     f"FAIL ({n_wrong} wrong)" if n_wrong else "pass"])
        classes.append("bad" if n_wrong else "")
    table = text_table([*keys, "max rel_err", "tolerance", "checks", "verdict"], rows,
                       frozenset({"max rel_err", "tolerance", "checks"}), classes)
    wrong = checked[checked["status"] == "wrong_result"]
    return Correctness(table, None if wrong.empty else _row_list(wrong, ["rel_err",
                                                                         "tolerance"]),
                       len(wrong))
