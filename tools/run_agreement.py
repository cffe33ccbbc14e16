#!/usr/bin/env python3
"""Do two runs' medians agree as well as two runs with the same settings do? (a change
is kept only where the rows' medians stay within run-to-run noise of a run with today's
settings).

Each argument is NAME=PATH or NAME=PATH#RUN: a timings CSV (plain, .gz or .xz) or a
folder of step CSVs (``raw/``), and with ``#RUN`` only the rows whose ``run`` column is
RUN (an evidence folder's ``runs.csv.xz`` holds several runs). For every pair of runs it takes the
ranked rows both have (status ``ok``, mode ``hot``, a positive ``pipelined_median_s``:
the caller's clock the verdicts rank; a CPU row's is its wall time) and prints, for GPU
and CPU rows apart and for the GPU's device-bound rows (device time at least 90 % of the
caller's in both runs) and host-bound ones: how many, the share within ±10 % of each
other, and the median ratio (second over first).

    python tools/run_agreement.py a_cold=evidence/suite-wall-time/runs.csv.xz#a_cold \\
        spread=evidence/caller-clock-repeatability/suite-spread-between-items/timings.csv.gz
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

KEY = ["backend", "implementation", "kernel", "variant", "size", "dtype", "threads", "mode"]


def load(spec: str) -> tuple[str, pd.DataFrame]:
    """(name, ranked rows indexed by KEY with the two medians)."""
    name, _, where = spec.partition("=")
    path, _, run = where.partition("#")
    p = Path(path)
    files = sorted(q for q in p.glob("*.csv") if "samples" not in q.name) if p.is_dir() else [p]
    frame = pd.concat([pd.read_csv(f, low_memory=False) for f in files], ignore_index=True)
    if run:
        frame = frame[frame["run"] == run]
    pipe = pd.to_numeric(frame["pipelined_median_s"], errors="coerce")
    ranked = frame[(frame["status"] == "ok") & (frame["mode"] == "hot")
                   & np.isfinite(pipe) & (pipe > 0)]
    return name, ranked.set_index(KEY)[["median_s", "pipelined_median_s"]].astype(float)


def line(label: str, ratio: pd.Series) -> str:
    if ratio.empty:
        return f"    {label}: no rows"
    within = float(((ratio >= 1 / 1.1) & (ratio <= 1.1)).mean()) * 100
    return (f"    {label}: {len(ratio)} rows, {within:.1f} % within ±10 %, "
            f"median ratio {float(ratio.median()):.3f}")


def compare(a: tuple[str, pd.DataFrame], b: tuple[str, pd.DataFrame]) -> str:
    (na, fa), (nb, fb) = a, b
    both = fa.join(fb, how="inner", suffixes=("_a", "_b"))
    ratio = both["pipelined_median_s_b"] / both["pipelined_median_s_a"]
    gpu = both.index.get_level_values("backend").str.endswith("-gpu")
    bound = ((both["median_s_a"] >= 0.9 * both["pipelined_median_s_a"])
             & (both["median_s_b"] >= 0.9 * both["pipelined_median_s_b"]))
    return "\n".join([f"{nb} / {na}:",
                      line("GPU", ratio[gpu]),
                      line("GPU device-bound", ratio[gpu & bound]),
                      line("GPU host-bound", ratio[gpu & ~bound]),
                      line("CPU", ratio[~gpu])])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=PATH or NAME=PATH#RUN")
    args = parser.parse_args(argv)
    runs = [load(s) for s in args.runs]
    print("\n\n".join(compare(a, b) for a, b in itertools.combinations(runs, 2)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
