#!/usr/bin/env python3
"""The benchmark's own CPU step (``runner.run_backend``, no Snakemake) for one reduction
at 1 Mi float32 elements and 4, 8 and 16 threads, for Numba and PyTorch: the companion
of tools/thread_stall_check.py, which times the same reduction in a bare process. A
collapse here and not there is the benchmark's doing.

Each argument is one pass: ``normal`` (the worker's environment as it is), ``blas1``
(the BLAS libraries capped at one thread in the worker) or ``passive`` (OpenMP threads
wait asleep, ``OMP_WAIT_POLICY=PASSIVE``):

    PYTHONPATH=src python tools/thread_stall_worker.py normal blas1 passive

Prints one line per row: pass, backend, implementation, threads, status, median and
quartiles in µs, samples.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import gpubench.backends.base as base
from gpubench import runner, suites
from gpubench.config import validate_config

OTHERS = ("vector_add", "elementwise", "matmul", "fft", "monte_carlo_pi", "moving_average",
          "linalg", "autodiff", "transfer", "launch_overhead", "interop", "allocation")


def config() -> dict:
    """The full suite cut to reduction's sumsq at 1 Mi float32 elements, threads 4, 8, 16."""
    over = {"suite": "full", "backends": ["numba-cpu", "torch-cpu"],
            "environments": {"mode": "system"}, "mpi": {"enabled": False},
            "threads": [4, 8, 16], "energy": "off",
            "kernels": {k: {"enabled": False} for k in OTHERS}}
    over["kernels"]["reduction"] = {"sizes": [1 << 20], "dtypes": ["float32"],
                                    "variants": ["sumsq"], "baseline_sizes": []}
    return validate_config(suites.merge_over(suites.suite_config("full"), over))


def main(passes: list[str]) -> int:
    cfg = config()
    plain = base.pin_threads_env
    extra = {"normal": {}, "blas1": {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
             "passive": {"OMP_WAIT_POLICY": "PASSIVE"}}
    for label in passes or ["normal"]:
        add = extra[label]
        runner.pin_threads_env = lambda t, add=add: {**plain(t), **add}
        for backend in cfg["backends"]:
            out = tempfile.mkdtemp()
            t0 = time.time()
            runner.run_backend(backend, cfg, 16, f"{out}/r.csv", f"{out}/s.csv")
            for _, r in pd.read_csv(f"{out}/r.csv").iterrows():
                print(f"{label:8} {backend:10} {r.implementation:12} t={r.threads:<3} "
                      f"{r.status:5} median {r.median_s * 1e6:9.1f} us  q1 {r.q1_s * 1e6:9.1f} "
                      f"q3 {r.q3_s * 1e6:9.1f} n={r.samples}", flush=True)
            print(f"  ({time.time() - t0:.0f} s)", flush=True)
    runner.pin_threads_env = plain
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
