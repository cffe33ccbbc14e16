#!/usr/bin/env python3
"""Is a step's whole-block shift on the caller's clock a matter of the process or of time?

In one of three runs (evidence/caller-clock-repeatability/spread-between-items), every
host-bound Numba row read 1.217x the runs' median for the whole 100 s step, while the
JAX step just before it read 1.000x. Spread rounds inside one process cannot undo that.
If the shift comes with the process (where it lands, its memory layout), rounds in
further processes can, as pyperf spreads a benchmark over 20 processes; if it comes with
minutes of the host's time, only rounds at other times can.

This runs a small GPU configuration (``vector_add`` and ``elementwise`` at host-bound
sizes, spread rounds as in the default suite) of each backend many times, one fresh
process after the other, with the real runner and worker, and writes each run's
timings. ``--analyse`` then prints, per backend and run, the median ratio of its
host-bound rows to the runs' median, and how often a row's single-run median and a
pooled median of three consecutive runs lie more than 10 % from the median of all.

    python tools/procvar.py --runs 12 --backends numba-gpu --out /tmp/pv
    python tools/procvar.py --analyse /tmp/pv
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

KEY = ["backend", "implementation", "kernel", "variant", "size", "dtype", "threads", "mode"]


def config() -> dict:
    """The default configuration with the device overrides, cut to host-bound rows."""
    cfg = yaml.safe_load(Path("config/config.yaml").read_text())
    cfg.update(yaml.safe_load(Path("tools/device/gpu-suite.yaml").read_text()))
    cfg["energy"] = "off"
    cfg["gpu_modes"] = ["hot"]
    cfg["threads"] = ["max"]
    keep = {"vector_add": [1024, 65536, 1048576], "elementwise": [1024, 1048576]}
    cfg["kernels"] = {k: dict(cfg["kernels"][k], gpu_sizes=s) for k, s in keep.items()}
    cfg["kernels"]["elementwise"]["variants"] = ["hypot", "sigmoid"]
    return cfg


def run(out: Path, runs: int, backends: list[str]) -> None:
    from gpubench.config import validate_config
    from gpubench.runner import run_backend

    cfg = validate_config(config())
    out.mkdir(parents=True, exist_ok=True)
    for r in range(runs):
        for b in backends:
            t0 = time.time()
            run_backend(b, cfg, 16, str(out / f"{b}_{r:02d}.csv"),
                        str(out / f"{b}_{r:02d}.samples.csv.gz"),
                        compile_cache=out / "cache" / b)
            print(json.dumps({"run": r, "backend": b, "start": t0,
                              "wall_s": time.time() - t0}), flush=True)


def analyse(out: Path) -> None:
    for b in sorted({p.name.rsplit("_", 1)[0] for p in out.glob("*_[0-9][0-9].csv*")}):
        paths = sorted(out.glob(f"{b}_[0-9][0-9].csv*"))
        frames = []
        for i, p in enumerate(paths):
            d = pd.read_csv(p)
            d = d[(d["status"] == "ok") & (d["mode"] == "hot")]
            frames.append(d.set_index(KEY)[["pipelined_median_s", "median_s"]]
                          .add_suffix(f"_{i}"))
        both = pd.concat(frames, axis=1, join="inner")
        n = len(paths)
        caller = both[[f"pipelined_median_s_{i}" for i in range(n)]].to_numpy()
        device = both[[f"median_s_{i}" for i in range(n)]].to_numpy()
        host = (device / caller < 0.9).all(axis=1)
        ratio = caller / np.median(caller, axis=1, keepdims=True)
        per_run = np.median(ratio[host], axis=0)
        print(f"{b}: {len(both)} rows in all {n} runs, {host.sum()} host-bound")
        print("  per run, the host-bound rows' median ratio to the runs' median: "
              + ", ".join(f"{x:.3f}" for x in per_run))
        off = np.abs(ratio[host] - 1) > 0.10
        print(f"  single-run medians off by more than 10 %: {off.mean():.1%}")
        trip = n // 3
        if trip >= 2:
            pooled = np.stack([np.median(caller[:, 3 * t:3 * t + 3], axis=1)
                               for t in range(trip)], axis=1)
            pr = pooled / np.median(pooled, axis=1, keepdims=True)
            print(f"  median of three consecutive runs' medians, {trip} groups: "
                  f"{(np.abs(pr[host] - 1) > 0.10).mean():.1%} off by more than 10 %; "
                  "per group " + ", ".join(f"{x:.3f}" for x in np.median(pr[host], axis=0)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=12)
    p.add_argument("--backends", default="numba-gpu")
    p.add_argument("--out", type=Path, default=Path("/tmp/pv"))
    p.add_argument("--analyse", type=Path)
    a = p.parse_args()
    if a.analyse:
        analyse(a.analyse)
    else:
        run(a.out, a.runs, a.backends.split(","))
    return 0


if __name__ == "__main__":
    sys.exit(main())
