#!/usr/bin/env python3
"""Do two MPI runs measure the same things, and how far apart are their figures?

A code change that should not change what the MPI jobs measure (moving a framework's
multi-device or NCCL code, say) is checked on the GPUs by running the same sweep before
and after it: the two runs must have the same keys (job, backend, ranks, size, dtype,
path, mode), the same columns and the same statuses. Their medians then differ by no
more than two runs on that host differ anyway, which this prints per job as the ratio
new / old (median, least, most) for the rows both measured ``ok``:

    python tools/mpi_rows_compare.py OLD/mpi.csv.xz NEW/mpi.csv.xz

Exit status: 0 when keys, columns and statuses agree, 1 when they differ, 2 for unusable
input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd

KEY = ["job", "backend", "ranks", "size", "dtype", "path", "mode"]


def compare(old: pd.DataFrame, new: pd.DataFrame) -> tuple[bool, list[str]]:
    """Whether the two runs measured the same rows with the same outcome, and the lines
    that say so (differences first, then the per-job ratios of the medians)."""
    lines: list[str] = []
    same = True
    if list(old.columns) != list(new.columns):
        same = False
        lines.append(f"columns differ: only old {sorted(set(old.columns) - set(new.columns))},"
                     f" only new {sorted(set(new.columns) - set(old.columns))}")
    o, n = old.set_index(KEY), new.set_index(KEY)
    if o.index.has_duplicates or n.index.has_duplicates:
        raise ValueError("a run has two rows with the same key: " + ", ".join(KEY))
    only_old, only_new = o.index.difference(n.index), n.index.difference(o.index)
    if len(only_old) or len(only_new):
        same = False
        lines.append(f"keys differ: {len(only_old)} only in old, {len(only_new)} only in new")
        lines += [f"  only old: {k}" for k in list(only_old)[:10]]
        lines += [f"  only new: {k}" for k in list(only_new)[:10]]
    both = o.merge(n, left_index=True, right_index=True, suffixes=("_old", "_new"))
    changed = both[both["status_old"] != both["status_new"]]
    if len(changed):
        same = False
        lines.append(f"statuses differ in {len(changed)} rows")
        lines += [f"  {k}: {r.status_old} -> {r.status_new}"
                  for k, r in changed.head(10).iterrows()]
    counts = [r["status"].value_counts().to_dict() for r in (o, n)]
    lines.append(f"rows: old {len(o)}, new {len(n)}, both {len(both)}; statuses old "
                 f"{counts[0]}, new {counts[1]}")
    ok = both[(both["status_old"] == "ok") & (both["status_new"] == "ok")]
    ratio = (ok["median_s_new"] / ok["median_s_old"]).rename("ratio")
    lines.append("new / old median time, rows ok in both:")
    lines.append(f"  {'job':<18} {'rows':>5} {'median':>7} {'least':>7} {'most':>7}")
    for job, r in ratio.groupby(level="job"):
        lines.append(f"  {job:<18} {len(r):>5} {r.median():>7.3f} {r.min():>7.3f} {r.max():>7.3f}")
    lines.append(f"  {'all':<18} {len(ratio):>5} {ratio.median():>7.3f} {ratio.min():>7.3f} "
                 f"{ratio.max():>7.3f}")
    return same, lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    a = p.parse_args(argv)
    try:
        old, new = pd.read_csv(a.old), pd.read_csv(a.new)
        same, lines = compare(old, new)
    except (OSError, ValueError, KeyError) as exc:
        print(f"mpi_rows_compare: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    print("same rows, columns and statuses" if same else "the runs differ (above)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
