"""Issue 29's check on the GPU machine: the smoke configuration before the change
(6493c13) and after it, row by row. Prints the statuses side by side, every row whose
status changed (with both reasons), and the after/before ratio of the device-clock
medians per backend. Usage: python compare_smoke.py smoke_before.timings.csv.gz
smoke_after.timings.csv.gz"""

from __future__ import annotations

import sys

import pandas as pd

KEYS = ["backend", "kernel", "implementation", "variant", "dtype", "size", "mode", "threads"]


def main(before: str, after: str) -> None:
    b, a = pd.read_csv(before), pd.read_csv(after)
    m = b.merge(a, on=KEYS, how="outer", suffixes=("_before", "_after"), indicator=True)
    both = m[m["_merge"] == "both"]
    print(f"rows: {len(b)} before, {len(a)} after; {len(both)} in both, "
          f"{(m['_merge'] == 'right_only').sum()} new, {(m['_merge'] == 'left_only').sum()} gone")
    new = m[m["_merge"] == "right_only"]
    print("new rows' statuses:", new["status_after"].value_counts().to_dict())
    print(pd.crosstab(both["status_before"], both["status_after"]), "\n")
    for _, r in both[both["status_before"] != both["status_after"]].iterrows():
        print(" ".join(str(r[k]) for k in KEYS))
        for side in ("before", "after"):
            reason = r[f"reason_{side}"]
            print(f"  {side + ':':<7} {r[f'status_{side}']} "
                  f"{reason if isinstance(reason, str) else ''}")
    ok = both[(both["status_before"] == "ok") & (both["status_after"] == "ok")].copy()
    ok["ratio"] = ok["median_s_after"] / ok["median_s_before"]
    ok["noisy"] = (ok["rel_spread_before"] > 0.3) | (ok["rel_spread_after"] > 0.3)
    print("\nafter/before, device-clock medians of rows ok in both:")
    rows = []
    for backend, d in ok.groupby("backend"):
        r = d["ratio"]
        rows.append({"backend": backend, "rows": len(d), "q1": r.quantile(0.25),
                     "median": r.median(), "q3": r.quantile(0.75),
                     "within 10 %": ((r - 1).abs() <= 0.1).mean(),
                     "rows noisy in either run (IQR/median > 0.3)": int(d["noisy"].sum())})
    print(pd.DataFrame(rows).round(3).to_string(index=False))
    for side in ("gpu", "cpu"):
        d = ok[ok["backend"].str.endswith(side)]
        calm = d[~d["noisy"]]["ratio"]
        print(f"{side}: {len(d)} rows, {((d['ratio'] - 1).abs() <= 0.1).mean():.1%} within ±10 %; "
              f"of the {len(calm)} rows calm in both runs, {((calm - 1).abs() <= 0.1).mean():.1%}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
