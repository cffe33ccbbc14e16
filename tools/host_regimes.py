"""Where the caller's clock's run-to-run spread comes from.

Three repeats of the same configuration moved host-bound rows as a block (Numba's
``vector_add`` at 28-30 µs in two runs, 41-44 µs in the third; NumPy on one core 1.9x
apart at 1,024 elements). Two explanations predict different fixes:

* **per process**: where the process lands (core, NUMA node, its caches) sets its speed
  for its life. Then pinning helps, and spreading samples inside one process does not;
* **in time**: the host (frequency, a hypervisor's other tenants) has regimes lasting
  seconds. Then samples spread over time help, and pinning does not.

This script measures both, with nothing else running:

* ``children``: fresh processes one after the other, alternately unpinned and pinned to
  one core of the GPU's NUMA node (NVML's CPU affinity). Each times NumPy ``add`` on
  1,024 and 4 Mi float64 elements and CuPy ``add`` on 1,024 float32 elements (the
  launch floor: pipelined, and sync), seven repeats each, and reads the host's steal
  time (``/proc/stat``) around its work;
* ``series``: one process, the same three timings every ~0.2 s for ``--seconds``.

Prints JSON lines, then a summary: the spread between processes (max/min of their
medians), pinned and unpinned apart, and the spread within the one process over time.

    python tools/host_regimes.py --children 16 --seconds 30
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np


def _cpu() -> int:
    """The core this process runs on now (/proc/self/stat, field 39)."""
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def _steal() -> tuple[int, int]:
    """(steal, total) jiffies of all cores: time the hypervisor gave to someone else."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[7], sum(v)


def _gpu_cores() -> list[int]:
    """Cores of the GPU's NUMA node (NVML), or this process's allowed cores."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        words = pynvml.nvmlDeviceGetCpuAffinity(h, 4)
        cores = [64 * i + b for i, w in enumerate(words) for b in range(64) if w >> b & 1]
        allowed = os.sched_getaffinity(0)
        return [c for c in cores if c in allowed] or sorted(allowed)
    except Exception:  # noqa: BLE001 - a missing NVML only loses the pinning's choice
        return sorted(os.sched_getaffinity(0))


class Timings:
    """The three timings, on arrays built once."""

    def __init__(self) -> None:
        rng = np.random.default_rng(1)
        self.a, self.b = rng.random(1024), rng.random(1024)
        self.c = np.empty_like(self.a)
        self.A, self.B = rng.random(1 << 22), rng.random(1 << 22)
        self.C = np.empty_like(self.A)
        import cupy as cp

        self.cp = cp
        self.x = cp.asarray(rng.random(1024, dtype=np.float32))
        self.y = cp.asarray(rng.random(1024, dtype=np.float32))
        self.z = cp.empty_like(self.x)
        for _ in range(100):
            cp.add(self.x, self.y, out=self.z)
        cp.cuda.Device().synchronize()

    def np_small(self) -> float:
        t = time.perf_counter()
        for _ in range(2000):
            np.add(self.a, self.b, out=self.c)
        return (time.perf_counter() - t) / 2000

    def np_big(self) -> float:
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            np.add(self.A, self.B, out=self.C)
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    def cupy_pipe(self) -> float:
        cp = self.cp
        t = time.perf_counter()
        for _ in range(500):
            cp.add(self.x, self.y, out=self.z)
        cp.cuda.Device().synchronize()
        return (time.perf_counter() - t) / 500

    def cupy_sync(self) -> float:
        cp, ts = self.cp, []
        for _ in range(200):
            t = time.perf_counter()
            cp.add(self.x, self.y, out=self.z)
            cp.cuda.Device().synchronize()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    def all(self) -> dict[str, float]:
        return {k: getattr(self, k)() for k in ("np_small", "np_big", "cupy_pipe", "cupy_sync")}


def child(pin: int | None) -> dict[str, Any]:
    """One fresh process's medians of seven repeats."""
    if pin is not None:
        os.sched_setaffinity(0, {pin})
    t = Timings()
    s0, cpu0 = _steal(), _cpu()
    reps = [t.all() for _ in range(7)]
    s1 = _steal()
    out: dict[str, Any] = {k: statistics.median(r[k] for r in reps) for k in reps[0]}
    out.update(pin=pin, cpu_start=cpu0, cpu_end=_cpu(),
               steal_pct=100 * (s1[0] - s0[0]) / max(1, s1[1] - s0[1]))
    return out


def series(seconds: float) -> list[dict[str, float]]:
    """One process's timings every ~0.2 s."""
    t, rows, t0 = Timings(), [], time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s0 = _steal()
        r = {"t": time.perf_counter() - t0, **t.all(), "cpu": _cpu()}
        s1 = _steal()
        r["steal_pct"] = 100 * (s1[0] - s0[0]) / max(1, s1[1] - s0[1])
        rows.append(r)
        time.sleep(0.1)
    return rows


def _spread(vals: list[float]) -> str:
    return f"max/min {max(vals) / min(vals):.2f}, median {statistics.median(vals) * 1e6:.2f} µs"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--children", type=int, default=16)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child is not None:
        print(json.dumps(child(None if a.child == "none" else int(a.child))))
        return 0
    cores = _gpu_cores()
    print(f"# GPU-local cores {cores}; allowed {sorted(os.sched_getaffinity(0))}", flush=True)
    kids: list[dict[str, Any]] = []
    for i in range(a.children):
        pin = "none" if i % 2 == 0 else str(cores[len(cores) // 2])
        r = subprocess.run([sys.executable, __file__, "--child", pin],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            print(r.stderr[-2000:], file=sys.stderr)
            return 2
        kids.append(json.loads(r.stdout))
        print(json.dumps({"child": i, **kids[-1]}), flush=True)
    rows = series(a.seconds)
    for r in rows:
        print(json.dumps({"series": 1, **r}))
    print("\n# summary")
    for k in ("np_small", "np_big", "cupy_pipe", "cupy_sync"):
        un = [c[k] for c in kids if c["pin"] is None]
        pi = [c[k] for c in kids if c["pin"] is not None]
        se = [r[k] for r in rows]
        print(f"{k:10s} processes unpinned: {_spread(un)}; pinned: {_spread(pi)}; "
              f"one process over {a.seconds:.0f} s: {_spread(se)}")
    st = [c["steal_pct"] for c in kids] + [r["steal_pct"] for r in rows]
    print(f"steal time: median {statistics.median(st):.2f} %, max {max(st):.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
