#!/usr/bin/env python3
"""Where three runs' caller's-clock misses come from.

For the GPU rows ranked in every run (ok, hot), a run's pipelined median is *off* when it
lies more than 10 % from the median of the runs (as ``tools/repeatability.py``
counts "each run's median"). This splits the off medians by whether the row had spread
rounds in that run and whether it is host-bound (device time under 90 % of the caller's),
and prints, per backend and run, the median ratio of its host-bound rows to the runs'
median: a whole step that ran slower or faster as a block, which no sampling inside a step
can undo.

    python tools/spread_split.py \
        evidence/caller-clock-repeatability/spread-between-items/tick{1,2,3}.timings.csv.gz
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

KEY = ["backend", "implementation", "kernel", "variant", "size", "dtype", "threads", "mode"]


def main(paths: list[str]) -> int:
    runs = []
    for i, path in enumerate(paths):
        d = pd.read_csv(path)
        d = d[(d["status"] == "ok") & (d["mode"] == "hot") & d["backend"].str.endswith("-gpu")]
        runs.append(d.set_index(KEY)[["pipelined_median_s", "median_s",
                                      "caller_spread_rounds"]].add_suffix(f"_{i}"))
    both = pd.concat(runs, axis=1, join="inner")
    n = len(paths)
    caller = both[[f"pipelined_median_s_{i}" for i in range(n)]].to_numpy()
    device = both[[f"median_s_{i}" for i in range(n)]].to_numpy()
    spread = both[[f"caller_spread_rounds_{i}" for i in range(n)]].to_numpy() > 0
    ratio = caller / np.median(caller, axis=1, keepdims=True)
    off = np.abs(ratio - 1) > 0.10
    host = device / caller < 0.9
    print(f"{len(both)} GPU rows ranked in all {n} runs; {n * len(both)} medians, "
          f"{1 - off.mean():.1%} within ±10 % of their row's median of the runs")
    print("| medians | count | off by more than 10 % |")
    print("|---|---:|---:|")
    for name, mask in (("host-bound, spread", host & spread),
                       ("host-bound, not spread", host & ~spread),
                       ("device-bound", ~host)):
        print(f"| {name} | {mask.sum()} | {(off & mask).sum() / max(1, mask.sum()):.1%} |")
    print("\nper backend: its host-bound spread medians off, and per run its host-bound "
          "rows' median ratio to the runs' median:")
    backends = np.asarray(both.index.get_level_values("backend"))
    for b in sorted(set(backends)):
        mine = (backends == b)[:, None]
        hs = host & spread & mine
        rows = (backends == b) & host.all(axis=1)
        ratios = ", ".join(f"{np.median(ratio[rows, i]):.3f}" for i in range(n))
        print(f"  {b}: {(off & hs).sum() / max(1, hs.sum()):.1%} of {hs.sum()} off; "
              f"{rows.sum()} rows: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
