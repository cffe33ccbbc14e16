"""Do the verdicts survive a re-run? ("a verdict ... survives a re-run")

For each run of the same configuration (a timings CSV and its probe's ceilings, read
from the probe step's log), the report's own code computes every class's verdict per
size band (the winner, its median speedup over NumPy and the cases it stands on) and
every GPU backend's CPU/GPU crossover per class; this prints them side by side with
whether the winner is the same in every run and how far each figure moves (max/min).

Verdicts are computed on the quartiles (no samples: the cold and third runs' samples
were too large to bring back), the same way for every run.

    PYTHONPATH=src python tools/verdicts_rerun.py RUN_DIR [RUN_DIR ...]

RUN_DIR holds timings.csv(.gz) and logs/probe.log (``ceilings: {...}``).
"""

from __future__ import annotations

import ast
import math
import re
import sys
from pathlib import Path

import pandas as pd

from gpubench.report import verdicts
from gpubench.report.base import prepare
from gpubench.report.sections.crossover import crossings


def load(run: Path) -> tuple[pd.DataFrame, dict]:
    """The run's rows, prepared as the report prepares them, and its probe's ceilings."""
    path = next(p for p in (run / "timings.csv", run / "timings.csv.gz",
                                run / "timings.csv.xz") if p.exists())
    text = (run / "logs" / "probe.log").read_text()
    ceilings = ast.literal_eval(re.search(r"ceilings: (\{.*\})\s*$", text, re.M).group(1))
    return prepare(pd.read_csv(path)), {"ceilings": ceilings}


def spread(values: list[float]) -> str:
    """max/min of finite values ('never' counted apart)."""
    fin = [v for v in values if math.isfinite(v) and v > 0]
    if len(fin) < 2:
        return "—"
    return f"{max(fin) / min(fin):.2f}×"


def main(runs: list[Path]) -> int:
    found, cross = [], []
    for run in runs:
        df, env = load(run)
        found.append(verdicts.verdicts(df))
        cross.append(verdicts.class_crossovers(crossings(df, env)))
    names = [r.name for r in runs]
    print("## Verdicts per class and band (winner, median speedup over NumPy on the "
          "caller's clock, cases)\n")
    print("| class | band | " + " | ".join(names)
          + " | same winner | speedup max/min | leaders (all runs) | same leaders |")
    print("|---|---|" + "---|" * len(names) + "---|---|---|---|")
    same = total = same_leaders = contradictions = 0
    for cls in verdicts.classes():
        for band in verdicts.BAND_NAMES:
            vs = [f.get(cls, {}).get(band) for f in found]
            if all(v is None for v in vs):
                continue
            cells, winners, meds, leaders = [], [], [], []
            for v in vs:
                leaders.append(", ".join(s.backend for s in v.leaders) if v else "—")
                w = v.winner if v is not None else None
                winners.append(w.backend if w else None)
                meds.append(w.median if w else math.nan)
                cells.append(f"{w.backend} {w.median:.3g}× ({len(v.cases)})" if w else "—")
            one = len(set(winners)) == 1 and winners[0] is not None
            total += 1
            same += one
            keep = len(set(leaders)) == 1
            same_leaders += keep
            sets = [{s.backend for s in v.leaders} if v else set() for v in vs]
            # a contradiction: two runs whose leaders share no framework, or a run that
            # names one framework alone which another run's leaders leave out
            clash = any(not (a & b) or (len(a) == 1 and not a <= b)
                        for a in sets for b in sets if a is not b)
            contradictions += clash
            print(f"| {cls} | {band} | " + " | ".join(cells)
                  + f" | {'yes' if one else '**no**'} | {spread(meds) if one else '—'} | "
                  + (leaders[0] if keep else " / ".join(leaders))
                  + f" | {'yes' if keep else '**no**'} |")
    print(f"\nSame winner in every run: {same} of {total} class/band verdicts; the same "
          f"leaders (the winner and every framework it does not decisively beat: "
          f"gpubench.report.verdicts.ClassVerdict.leaders) in every run: {same_leaders} of "
          f"{total}; runs whose answers contradict (leaders disjoint, or one framework "
          f"named alone that another run's leaders leave out): {contradictions} of {total}."
          "\n")
    print("## CPU/GPU crossover per GPU backend and class (elements; median over the "
          "class's cases, data on the device)\n")
    print("| backend | class | " + " | ".join(names) + " | max/min |")
    print("|---|---|" + "---|" * len(names) + "---|")
    keys = sorted(set().union(*[c.keys() for c in cross]))
    moves = []
    for key in keys:
        meds = [c[key].median if key in c else math.nan for c in cross]
        cells = ["never" if key in c and not math.isfinite(c[key].median) else
                 f"{c[key].median:,.0f}" if key in c else "—" for c in cross]
        s = spread(meds)
        if s != "—":
            moves.append(float(s[:-1]))
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + f" | {s} |")
    if moves:
        moves.sort()
        print(f"\nCrossovers: {len(moves)} with a figure in two or more runs; max/min median "
              f"{moves[len(moves) // 2]:.2f}×, largest {moves[-1]:.2f}×; within 1.25×: "
              f"{sum(m <= 1.25 for m in moves)}, within 2×: {sum(m <= 2 for m in moves)}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main([Path(a) for a in sys.argv[1:]]))
