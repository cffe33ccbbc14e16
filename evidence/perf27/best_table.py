"""Issue 27: each implementation's rate as % of the copy ceiling at 2^26 elements, and the
best per kernel, variant and dtype. Usage: python best_table.py <backend>.csv[.gz] ...
--ceiling-gbps N (the probe's d2d copy ceiling of the same kind of machine)."""

from __future__ import annotations

import argparse

import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--ceiling-gbps", type=float, required=True)
    args = ap.parse_args()
    df = pd.concat(pd.read_csv(p) for p in args.csv)
    df = df[(df["status"] == "ok") & (df["kernel"] != "matmul") & (df["mode"] == "hot")]
    df = df.assign(pct=100 * df["gbps"] / args.ceiling_gbps)
    keys = ["backend", "kernel", "variant", "dtype"]
    wide = df.pivot_table(index=keys, columns="implementation", values="pct")
    wide["best"] = wide.max(axis=1)
    wide["best_by"] = wide.drop(columns="best").idxmax(axis=1)
    print(wide.round(1).to_string())


if __name__ == "__main__":
    main()
