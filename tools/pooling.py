#!/usr/bin/env python3
"""What pooling k fresh processes per run would do to the three-run bar.

From procvar.py's runs of one machine (one fresh process per run and backend): draw
three disjoint groups of k runs, pool each group (the median of its runs' pipelined
medians, as a run that spread a row over k processes would read it), and count the
host-bound rows whose three pooled medians all lie within ±10 % of their median, as
``tools/repeatability.py`` does. Averaged over random draws.

    python tools/pooling.py evidence/host-speed-shifts/processes-machine1
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

KEY = ["implementation", "kernel", "variant", "size", "dtype"]


def main(folder: str, draws: int = 2000) -> int:
    rng = np.random.default_rng(0)
    for b in ("numba-gpu", "jax-gpu"):
        paths = sorted(Path(folder).glob(f"{b}_[0-9][0-9].csv*"))
        frames = [pd.read_csv(p).query("status == 'ok'").set_index(KEY) for p in paths]
        caller = pd.concat([f["pipelined_median_s"] for f in frames], axis=1,
                           join="inner").to_numpy()
        device = pd.concat([f["median_s"] for f in frames], axis=1, join="inner").to_numpy()
        caller = caller[(device / caller < 0.9).all(axis=1)]
        n = caller.shape[1]
        print(f"{b}: {caller.shape[0]} host-bound rows, {n} runs")
        for k in range(1, n // 3 + 1):
            within = []
            for _ in range(draws):
                pick = rng.permutation(n)[:3 * k].reshape(3, k)
                runs = np.stack([np.median(caller[:, g], axis=1) for g in pick], axis=1)
                ratio = runs / np.median(runs, axis=1, keepdims=True)
                within.append((np.abs(ratio - 1) <= 0.10).all(axis=1).mean())
            print(f"  {k} process(es) per run: {np.mean(within):.1%} of rows within ±10 % "
                  f"in all three runs (5th-95th percentile of draws "
                  f"{np.percentile(within, 5):.1%}-{np.percentile(within, 95):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
