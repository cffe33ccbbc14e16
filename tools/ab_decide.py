#!/usr/bin/env python3
"""The spread window's A/B (a cut's medians within run-to-run noise): runs A1..An
with the default window and B1..Bn with the shorter one, on one machine, alternately.

For every pair of runs it takes the share of their shared ranked rows whose caller's-clock
medians lie within ±10 % of each other (``tools/run_agreement.py``), for the
GPU's device-bound and host-bound rows apart, and groups the pairs: A-A and B-B (same
window) against A-B (different windows). The rule, written before the runs came back:
the shorter window is kept only if, in both row classes, the A-B pairs' mean share is at
most 5 points below the A-A pairs' and the B-B pairs' mean share is at most 5 points
below the A-A pairs' (the shorter window leaves no more noise between runs), and the
A-B pairs' median ratio (B over A) lies within 0.97-1.03 (no shift of the medians).

    python tools/ab_decide.py A1=results/ab_A1/raw B1=results/ab_B1/raw ...
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_agreement import load


def shares(fa, fb) -> dict[str, tuple[float, float, int]]:
    """(share within ±10 % in %, median ratio b/a, rows) for device- and host-bound rows."""
    both = fa.join(fb, how="inner", suffixes=("_a", "_b"))
    ratio = both["pipelined_median_s_b"] / both["pipelined_median_s_a"]
    bound = ((both["median_s_a"] >= 0.9 * both["pipelined_median_s_a"])
             & (both["median_s_b"] >= 0.9 * both["pipelined_median_s_b"]))
    out = {}
    for label, sel in (("device-bound", bound), ("host-bound", ~bound)):
        r = ratio[sel]
        out[label] = (float(((r >= 1 / 1.1) & (r <= 1.1)).mean() * 100), float(r.median()),
                      len(r))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=PATH, NAME starting with A or B")
    runs = [load(s) for s in parser.parse_args(argv).runs]
    groups: dict[str, list[dict]] = {"A-A": [], "B-B": [], "A-B": []}
    for (na, fa), (nb, fb) in itertools.combinations(runs, 2):
        if na[0] == "B" and nb[0] == "A":
            (na, fa), (nb, fb) = (nb, fb), (na, fa)
        kind = f"{na[0]}-{nb[0]}"
        got = shares(fa, fb)
        groups[kind].append(got)
        print(f"{nb}/{na} ({kind}): " + "; ".join(
            f"{k} {s:.1f} % within ±10 % of {n} rows, median ratio {m:.3f}"
            for k, (s, m, n) in got.items()))
    keep = True
    for label in ("device-bound", "host-bound"):
        mean = {k: float(np.mean([g[label][0] for g in v])) for k, v in groups.items()}
        ratio = float(np.median([g[label][1] for g in groups["A-B"]]))
        ok = (mean["A-B"] >= mean["A-A"] - 5 and mean["B-B"] >= mean["A-A"] - 5
              and 0.97 <= ratio <= 1.03)
        keep &= ok
        print(f"{label}: mean share A-A {mean['A-A']:.1f} %, B-B {mean['B-B']:.1f} %, "
              f"A-B {mean['A-B']:.1f} %; A-B median ratio {ratio:.3f}: "
              f"{'within' if ok else 'NOT within'} the rule")
    print("decision: " + ("keep the shorter window" if keep else "keep the default window"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
