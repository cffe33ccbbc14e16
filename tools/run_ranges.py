#!/usr/bin/env python3
"""Does one run's stated range hold the next run's figure? The four figures a user relies
on, over runs of one configuration:

1. crossovers: per GPU framework, each run's crossover (vector_add float32's, and each
   class's, on the caller's clock with the data on the device) against each other run's
   stated range; the bar: every one inside;
2. class verdicts: per class and band, the frameworks each run names (its leaders); the
   bar: every run names the same set;
3. ranked rows: each run's median over the median of the runs; the bar: none more than
   2x off;
4. rows whose device time is at least 50 µs (CPU rows: their wall time): the share whose
   every run lies within ±10 % of the median of the runs; the bar: at least 95 %.

Rows and cases that only some runs measured are left out of each figure (and counted);
frameworks that only some runs measured are left out of all four, so that each run's
verdicts and CPU reference choose among the same frameworks.
Each run is a folder holding ``timings.csv`` (or ``.gz``/``.xz``), ``env/host.json`` or
``host.json``, and optionally ``samples.csv(.xz)``:

    python tools/run_ranges.py evidence/run-to-run-ranges/h100/a1 .../a2 .../a3

Exit status: 0 when every figure meets its bar, 1 when one misses, 2 for unusable input.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import repeatability

from gpubench.report import load_inputs, verdicts
from gpubench.report.sections.crossover import crossings
from gpubench.workloads import class_title

#: the device time from which a row's repeatability is judged (figure 4)
LONG_ROW_S = 50e-6


@dataclass
class Run:
    """One run's inputs, read once."""

    name: str
    folder: Path
    df: pd.DataFrame
    samples: object
    host: dict


def _first(folder: Path, names: Sequence[str]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def read_run(folder: Path) -> Run:
    timings = _first(folder, ("timings.csv", "timings.csv.gz", "timings.csv.xz"))
    host = _first(folder, ("env/host.json", "host.json"))
    if timings is None or host is None:
        raise repeatability.Unusable(f"{folder}: needs timings.csv and env/host.json")
    samples = _first(folder, ("samples.csv", "samples.csv.xz", "samples.csv.gz"))
    inp = load_inputs(timings, host, samples)
    return Run(folder.name, folder, inp.df, inp.samples, inp.env.data)


# -- 1. crossovers --------------------------------------------------------------------------


def crossover_points(run: Run) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(backend, what) -> (point, range low, range high): vector_add float32's crossover
    and each class's median crossover (NaN: never, or not measured)."""
    found = crossings(run.df, run.host)
    out: dict[tuple[str, str], tuple[float, float, float]] = {}
    for c in found:
        if c.kernel == "vector_add" and c.dtype == "float32" and c.elements:
            out[(c.backend, "vector_add float32")] = (
                float(c.device_resident[1]), *map(float, c.device_range))
    for (backend, cls), s in verdicts.class_crossovers(found).items():
        out[(backend, f"class {class_title(cls)}")] = (s.median, s.r_lo, s.r_hi)
    return out


def _inside(point: float, lo: float, hi: float) -> bool | None:
    """Whether ``point`` lies in [lo, hi] (both "never" counts as inside); None when the
    range is not stated."""
    if not math.isfinite(point):
        return not math.isfinite(hi) and hi > 0 if not math.isnan(hi) else None
    if math.isnan(lo) or math.isnan(hi):
        return None
    return lo <= point <= hi


def figure_crossovers(runs: Sequence[Run]) -> tuple[int, int, list[str]]:
    """(pairs inside, pairs judged, lines): each run's point in each other run's range."""
    per = [crossover_points(r) for r in runs]
    keys = sorted(set().union(*per))
    inside = judged = 0
    lines = []
    for key in keys:
        have = [p.get(key) for p in per]
        if any(h is None for h in have):
            continue
        cells, misses = [], []
        for i, (pt, lo, hi) in enumerate(have):
            cells.append(f"{pt:,.0f} ({lo:,.0f}–{hi:,.0f})" if math.isfinite(pt)
                         else "never")
            for j, (_pt2, lo2, hi2) in enumerate(have):
                if i == j:
                    continue
                ok = _inside(pt, lo2, hi2)
                if ok is None:
                    continue
                judged += 1
                inside += ok
                if not ok:
                    misses.append(f"{runs[i].name} outside {runs[j].name}'s")
        lines.append(f"  {key[0]:16s} {key[1]:26s} " + " | ".join(cells)
                     + (f"   MISS: {'; '.join(misses)}" if misses else ""))
    return inside, judged, lines


# -- 2. class verdicts -----------------------------------------------------------------------


def leader_sets(run: Run) -> dict[tuple[str, str], tuple[str, ...]]:
    """(class, band) -> the frameworks the verdict names (its leaders, by median)."""
    out = {}
    for cls, per in verdicts.verdicts(run.df, run.samples).items():
        for band, v in per.items():
            out[(class_title(cls), band)] = tuple(s.backend for s in v.leaders)
    return out


def figure_verdicts(runs: Sequence[Run]) -> tuple[int, int, list[str]]:
    """(verdicts naming the same set in every run, verdicts judged, lines)."""
    per = [leader_sets(r) for r in runs]
    same = judged = 0
    lines = []
    for key in sorted(set().union(*per)):
        have = [p.get(key) for p in per]
        if any(h is None for h in have):
            continue
        judged += 1
        agree = len({frozenset(h) for h in have}) == 1
        same += agree
        lines.append(f"  {'same' if agree else 'DIFFER'}  {key[0]} ({key[1]}): "
                     + " | ".join(", ".join(h) for h in have))
    return same, judged, lines


# -- 3 and 4. rows ---------------------------------------------------------------------------


def figure_rows(runs: Sequence[Run]) -> dict[str, object]:
    """Figure 3 over the ranked rows every run has; figure 4 over those whose device time
    (a CPU row's: its wall time) is at least :data:`LONG_ROW_S` in every run."""
    clock = repeatability.CLOCKS["pipelined"]
    def rows(r: Run, column: str) -> pd.Series:
        got = repeatability.load_run(_timings(r), column)
        return got[got.index.get_level_values("backend").isin(set(r.df["backend"]))]

    ranked = [rows(r, clock) for r in runs]
    device = [rows(r, repeatability.CLOCKS["device"]) for r in runs]
    ratios, partial = repeatability.spread(ranked)
    off = np.maximum(ratios, 1 / ratios).max(axis=1)
    least = pd.concat(device, axis=1).min(axis=1).reindex(ratios.index)
    long_rows = ratios[least >= LONG_ROW_S]
    within = ((long_rows - 1).abs() <= 0.10 + 1e-12).all(axis=1)
    worst = off.sort_values(ascending=False).head(5)
    on = within.index.get_level_values("device")
    split = {d: (int((on == d).sum()), float(within[on == d].mean()))
             for d in ("gpu", "cpu") if (on == d).any()}
    return {"split": split, "rows": len(ratios), "partial": len(partial),
            "largest": float(off.max()),
            "worst": worst, "long": len(long_rows),
            "long_within": float(within.mean()) if len(long_rows) else math.nan,
            "long_misses": within[~within].index.tolist()}


def _timings(run: Run) -> Path:
    return repeatability.run_files(run.folder)[0]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="run folders (two or more)")
    args = p.parse_args(argv)
    if len(args.runs) < 2:
        print("error: give two or more runs", file=sys.stderr)
        return 2
    try:
        runs = [read_run(f) for f in args.runs]
    except repeatability.Unusable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    common = set.intersection(*(set(r.df["backend"]) for r in runs))
    dropped = sorted(set().union(*(set(r.df["backend"]) for r in runs)) - common)
    for r in runs:
        r.df = r.df[r.df["backend"].isin(common)]
    print("runs: " + ", ".join(f"{r.name} ({r.folder})" for r in runs))
    print("frameworks in every run: " + ", ".join(sorted(common))
          + (f"; left out (not in every run): {', '.join(dropped)}" if dropped else ""))
    met = True

    inside, judged, lines = figure_crossovers(runs)
    ok = judged > 0 and inside == judged
    met &= ok
    print(f"\n1. crossovers (caller's clock, data on the device; point (range) per run): "
          f"{inside} of {judged} run pairs inside the other run's range — "
          f"{'meets' if ok else 'MISSES'} the bar (all)")
    print("\n".join(lines))

    same, judged, lines = figure_verdicts(runs)
    ok = judged > 0 and same == judged
    met &= ok
    print(f"\n2. class verdicts: {same} of {judged} name the same frameworks in every run "
          f"— {'meets' if ok else 'MISSES'} the bar (all)")
    print("\n".join(lines))

    rows = figure_rows(runs)
    ok3 = rows["rows"] > 0 and rows["largest"] <= 2.0
    print(f"\n3. ranked rows (caller's clock): {rows['rows']:,} in every run "
          f"({rows['partial']:,} in only some, not judged); largest ratio off the median "
          f"of the runs {rows['largest']:.3g}x — {'meets' if ok3 else 'MISSES'} the bar "
          "(≤ 2x)")
    for key, v in rows["worst"].items():
        k = dict(zip(repeatability.KEY, key, strict=True))
        print(f"    {v:.3g}x  {k['backend']} {k['implementation']} {k['kernel']}/"
              f"{k['variant']} {k['dtype']} size={k['size']} threads={k['threads']}")
    ok4 = rows["long"] > 0 and rows["long_within"] >= 0.95
    print(f"\n4. rows with device time ≥ {LONG_ROW_S * 1e6:.0f} µs: {rows['long']:,}; "
          f"{rows['long_within']:.1%} within ±10 % in every run — "
          f"{'meets' if ok4 else 'MISSES'} the bar (≥ 95 %)")
    for device, (n, share) in rows["split"].items():
        print(f"    {device.upper()} rows: {n:,}, {share:.1%} within")
    for key in rows["long_misses"][:10]:
        k = dict(zip(repeatability.KEY, key, strict=True))
        print(f"    outside: {k['backend']} {k['implementation']} {k['kernel']}/"
              f"{k['variant']} {k['dtype']} size={k['size']} threads={k['threads']}")
    met &= ok3 and ok4
    print("\nevery bar met" if met else "\nnot every bar met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
