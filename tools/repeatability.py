#!/usr/bin/env python3
"""How far the same configuration's rows move from run to run.

Give it the timings of three or more runs of one configuration on one machine: each a
timings CSV (``results/<run>/timings.csv``, or one step's ``raw/<backend>.csv``), or a
folder holding ``timings.csv`` or the steps' CSVs (read together as one run). It takes
the ranked rows (status ``ok``, mode ``hot``, a positive finite median on the clock
judged, by default ``pipelined_median_s``: the caller's clock the verdicts rank; a CPU
row's is its wall time) that every run has, and for each the median over the runs. A
row is *within* when every run's median lies within ±10 % of that median. GPU and CPU
rows are judged apart. The bar: at least 95 % of the rows within, and no run's median
more than 2x off (either way). It prints, per device, the share within, the largest
ratio off, the share per backend and the worst rows, and exits 1 if a judged device
misses the bar (0 if all meet it, 2 for unusable input).

    python tools/repeatability.py results/r1 results/r2 results/r3
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from gpubench.results import KEY_NAMES
except ImportError:  # run from a checkout without installing: the repository's src/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from gpubench.results import KEY_NAMES

#: a row: its key, and the mode (hot and cold rows share the key)
KEY = [*KEY_NAMES, "mode"]
#: the clocks this can judge, by the column holding their median
CLOCKS = {"pipelined": "pipelined_median_s", "sync": "sync_median_s", "device": "median_s"}


class Unusable(Exception):
    """The input cannot be judged; the message says which file and why."""


def run_files(path: Path) -> list[Path]:
    """The timings CSVs one argument stands for."""
    if path.is_dir():
        for name in ("timings.csv", "timings.csv.gz", "timings.csv.xz"):
            if (path / name).is_file():
                return [path / name]
        files = sorted(p for p in path.glob("*.csv")
                       if "samples" not in p.name and p.name != "mpi.csv")
        if not files:
            raise Unusable(f"{path}: no timings CSV in this folder")
        return files
    if not path.is_file():
        raise Unusable(f"{path}: no such file or folder")
    return [path]


def load_run(path: Path, column: str) -> pd.Series:
    """The ranked rows of one run: the judged median by row key (plus ``device`` and
    ``backend`` levels), duplicates refused."""
    frames = []
    for f in run_files(path):
        try:
            frame = pd.read_csv(f, keep_default_na=False, na_values=[""], low_memory=False)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise Unusable(f"{f}: not a readable CSV: {exc}") from exc
        missing = [c for c in [*KEY, "status", column] if c not in frame.columns]
        if missing:
            raise Unusable(f"{f}: missing columns {missing}")
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    value = pd.to_numeric(frame[column], errors="coerce")
    ranked = frame[(frame["status"] == "ok") & (frame["mode"] == "hot")
                   & np.isfinite(value) & (value > 0)].copy()
    ranked[column] = value[ranked.index]
    dup = ranked.duplicated(KEY, keep=False)
    if dup.any():
        first = ranked[dup].iloc[0]
        raise Unusable(f"{path}: {int(dup.sum())} ranked rows share a key, e.g. "
                       + ", ".join(f"{k}={first[k]}" for k in KEY))
    return ranked.set_index(KEY)[column]


def spread(runs: Sequence[pd.Series]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ratios, partial): each run's median over the median of the runs, for the rows
    every run has; and the rows only some runs have (their values)."""
    wide = pd.concat(list(runs), axis=1, keys=range(1, len(runs) + 1))
    complete = wide.dropna()
    ratios = complete.div(complete.median(axis=1), axis=0)
    return ratios, wide[wide.isna().any(axis=1)]


def judge(ratios: pd.DataFrame, within: float, share: float,
          max_ratio: float) -> dict[str, float | bool | int]:
    """The bar's two numbers and whether they meet it."""
    off = np.maximum(ratios, 1 / ratios)
    row_ok = ((ratios - 1).abs() <= within + 1e-12).all(axis=1)
    got = float(row_ok.mean()) if len(ratios) else math.nan
    worst = float(off.to_numpy().max()) if len(ratios) else math.nan
    return {"rows": len(ratios), "within": got,
            "medians_within": float(((ratios - 1).abs() <= within + 1e-12)
                                    .to_numpy().mean()) if len(ratios) else math.nan,
            "largest": worst, "met": bool(len(ratios)) and got >= share
            and worst <= max_ratio}


def _fmt_s(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds * 1e9:.4g} ns"


#: a GPU row whose device time is at least this share of its caller's time in every run
#: is device-bound: its time is the GPU's; below it, the host's dispatch dominates
DEVICE_BOUND = 0.9


def bound_split(ratios: pd.DataFrame, device_share: pd.Series, within: float) -> str:
    """The GPU rows' spread apart by what bounds them (device time over caller time):
    a diagnostic beside the bar, never part of it."""
    share = device_share.reindex(ratios.index)
    row_ok = ((ratios - 1).abs() <= within + 1e-12).all(axis=1)
    parts = []
    for name, sel in ((f"device-bound (device time >= {DEVICE_BOUND:.0%} of the caller's "
                       "in every run)", share >= DEVICE_BOUND),
                      ("host-bound (the rest)", ~(share >= DEVICE_BOUND))):
        if sel.any():
            off = np.maximum(ratios[sel], 1 / ratios[sel]).to_numpy().max()
            parts.append(f"  {name}: {int(sel.sum()):,} rows, {row_ok[sel].mean():.1%} "
                         f"within ±{within:.0%}, largest {off:.3g}x off")
    return "\n".join(parts)


def report(runs: Sequence[pd.Series], names: Sequence[str], clock: str, within: float,
           share: float, max_ratio: float, worst_n: int, devices: Sequence[str],
           device_share: pd.Series | None = None) -> bool:
    """Print the spread per device; True when every judged device meets the bar.
    ``device_share``: per GPU row, its least device time over caller time across the
    runs (:func:`bound_split`)."""
    ok = True
    print(f"repeatability of {CLOCKS[clock]} over {len(runs)} runs:")
    for i, name in enumerate(names, 1):
        print(f"  run {i}: {name}")
    ratios, partial = spread(runs)
    values = pd.concat(list(runs), axis=1, keys=range(1, len(runs) + 1))
    print(f"bar: at least {share:.0%} of the rows with every run within ±{within:.0%} of "
          f"the median of the runs, and none more than {max_ratio:g}x off")
    for device in ("gpu", "cpu"):
        part = ratios[ratios.index.get_level_values("device") == device]
        gaps = partial[partial.index.get_level_values("device") == device]
        if part.empty and gaps.empty:
            continue
        res = judge(part, within, share, max_ratio)
        judged = device in devices
        verdict = ("meets the bar" if res["met"] else "MISSES the bar") if judged else \
            "(not judged)"
        print(f"\n{device.upper()}: {res['rows']:,} ranked rows in every run; {verdict}")
        print(f"  rows with every run within ±{within:.0%}: {res['within']:.1%} "
              f"(each run's median: {res['medians_within']:.1%})")
        print(f"  largest ratio off: {res['largest']:.3g}x")
        if len(gaps):
            print(f"  {len(gaps):,} rows ranked in only some runs (not judged)")
        if device == "gpu" and device_share is not None and not part.empty:
            print(bound_split(part, device_share, within))
        if not part.empty:
            row_ok = ((part - 1).abs() <= within + 1e-12).all(axis=1)
            by_backend = row_ok.groupby(level="backend")
            print("  per backend: " + ", ".join(
                f"{b} {g.mean():.1%} of {len(g):,}" for b, g in by_backend))
            off = np.maximum(part, 1 / part).max(axis=1).sort_values(ascending=False)
            print("  worst rows (ratio off; each run's median; the median of the runs):")
            for key in off.index[:worst_n]:
                k = dict(zip(ratios.index.names, key, strict=True))
                vals = values.loc[key]
                print(f"    {off[key]:6.3g}x  {k['backend']} {k['implementation']} "
                      f"{k['kernel']}/{k['variant']} {k['dtype']} size={k['size']} "
                      f"threads={k['threads']}: "
                      + ", ".join(_fmt_s(float(v)) for v in vals)
                      + f"; median {_fmt_s(float(vals.median()))}")
        if judged:
            ok = ok and bool(res["met"])
    print("\nbar met" if ok else "\nbar NOT met")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path,
                   help="timings CSVs or folders, one per run of the same configuration")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="pipelined")
    p.add_argument("--within", type=float, default=0.10, help="relative band (0.10)")
    p.add_argument("--share", type=float, default=0.95,
                   help="least share of rows within the band (0.95)")
    p.add_argument("--max-ratio", type=float, default=2.0,
                   help="largest ratio off the median allowed (2)")
    p.add_argument("--worst", type=int, default=10, help="worst rows listed per device")
    p.add_argument("--device", choices=("all", "gpu", "cpu"), default="all",
                   help="whose rows decide the exit status (both are printed)")
    args = p.parse_args(argv)
    if len(args.runs) < 3:
        print("error: give three or more runs (a median of two is their mean)",
              file=sys.stderr)
        return 2
    try:
        runs = [load_run(path, CLOCKS[args.clock]) for path in args.runs]
    except Unusable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if all(r.empty for r in runs):
        print("error: no ranked rows (status ok, mode hot, a positive median) in any run",
              file=sys.stderr)
        return 2
    devices = ("gpu", "cpu") if args.device == "all" else (args.device,)
    names = [str(p) for p in args.runs]
    share = None
    if args.clock != "device":
        try:
            device = [load_run(path, CLOCKS["device"]) for path in args.runs]
            share = pd.concat([d / r for d, r in zip(device, runs, strict=True)],
                              axis=1).min(axis=1)
        except Unusable:
            share = None
    ok = report(runs, names, args.clock, args.within, args.share, args.max_ratio,
                args.worst, devices, share)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
