#!/usr/bin/env python3
"""Is a reduction's collapse at the most threads the host's, or the benchmark's own?

On the 16-core host of an H200 machine, Numba ``prange`` reductions took ~8 ms at 16
threads whatever the size (16-782 µs at 8), and PyTorch's at 8 and 16 threads
(evidence/cpu-thread-counts). A reduction ends at a barrier: if any thread of the pool is
off its core for a scheduler time slice, the call waits for it. This times the same
reductions in a bare process (no Snakemake, no step driver, no progress thread beside
it), one fresh process per (framework, threads, cores) so each pool is sized once, with
the process pinned to the first or the last cores, or not pinned; ``--calls`` timed calls
each (300 by default), so a longer run can show a CPU quota that a short one leaves
unspent:

    python tools/thread_stall_check.py --threads 4 8 15 16 --size 1048576

Each line: framework, threads, cores pinned, the median and 90th percentile of the timed
calls (after 50 untimed), and the share of calls over 2 ms (a stall: the work itself takes
well under that at these sizes). Exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, os, sys, time
import numpy as np
fw, pin = sys.argv[1], sys.argv[4]
n, size, calls = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[5])
cores = sorted(os.sched_getaffinity(0))
if pin == "first":
    os.sched_setaffinity(0, cores[:n])
elif pin == "last":
    os.sched_setaffinity(0, cores[-n:])
x = np.random.default_rng(0).random(size, dtype=np.float32)
if fw == "torch":
    import torch
    torch.set_num_threads(n)
    t = torch.from_numpy(x)
    def call():
        return float((t * t).sum())
else:
    os.environ["NUMBA_NUM_THREADS"] = str(n)
    import numba
    numba.set_num_threads(n)
    @numba.njit(parallel=True)
    def sumsq(a):
        s = 0.0
        for i in numba.prange(a.shape[0]):
            s += a[i] * a[i]
        return s
    def call():
        return sumsq(x)
ref = float(np.sum(x.astype(np.float64) ** 2))
got = call()
assert abs(got - ref) <= 1e-3 * abs(ref), (got, ref)
for _ in range(50):
    call()
ts = []
for _ in range(calls):
    t0 = time.perf_counter(); call(); ts.append(time.perf_counter() - t0)
ts = np.array(ts)
print(json.dumps({"median_us": float(np.median(ts) * 1e6),
                  "p90_us": float(np.percentile(ts, 90) * 1e6),
                  "over_2ms": float((ts > 2e-3).mean()),
                  "cores": sorted(os.sched_getaffinity(0))}))
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[4, 8, 16])
    p.add_argument("--size", type=int, default=1 << 20)
    p.add_argument("--frameworks", nargs="+", default=["numba", "torch"])
    p.add_argument("--pins", nargs="+", default=["first", "last", "none"])
    p.add_argument("--calls", type=int, default=300)
    a = p.parse_args()
    ncores = len(os.sched_getaffinity(0))
    print(f"host cores {ncores}, size {a.size:,} float32, load {os.getloadavg()[0]:.2f}")
    for fw in a.frameworks:
        for n in a.threads:
            if n > ncores:
                continue
            for pin in a.pins:
                if pin == "last" and n == ncores:
                    continue  # the same cores as "first"
                t0 = time.perf_counter()
                env = {**os.environ, "NUMBA_NUM_THREADS": str(n), "OMP_NUM_THREADS": str(n)}
                out = subprocess.run([sys.executable, "-c", CHILD, fw, str(n), str(a.size), pin,
                                      str(a.calls)],
                                     capture_output=True, text=True, env=env, timeout=300)
                if out.returncode:
                    print(f"{fw:6} threads {n:3} pin {pin:5}: failed: "
                          f"{out.stderr.strip().splitlines()[-1:]}")
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                c = r["cores"]
                print(f"{fw:6} threads {n:3} pin {pin:5} cores {c[0]}-{c[-1]}: "
                      f"median {r['median_us']:9.1f} µs  p90 {r['p90_us']:9.1f} µs  "
                      f"over 2 ms {r['over_2ms']:6.1%}  ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
