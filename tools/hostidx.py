#!/usr/bin/env python3
"""Does a host-speed index taken in the same process track the caller's-clock shifts?

procvar.py showed host-bound rows shifting 8-19 % as whole processes between fresh
workers 25 s apart (and, on one fresh machine, drifting 1.7x to 1.0x over minutes).
If a reference that does not touch the GPU (NumPy ``add`` on 1,024 elements, a pure
Python loop) shifts with them, each row could carry the host's speed and a shift could
be told apart from the framework; if not, the shift is in the launch path itself.

Fresh processes one after the other, alternately Numba and JAX. Each compiles
``a + b`` on 1,024 float32 elements, then for ``--seconds`` takes rounds of: the
framework's pipelined launch (64 calls, one wait; per call), NumPy ``add`` per call, and
a pure-Python loop; it prints its per-metric medians as JSON.

    python tools/hostidx.py --procs 8 --seconds 15 > hostidx.jsonl
    python tools/hostidx.py --analyse hostidx.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np


def _per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn(n)
    return (time.perf_counter() - t0) / n


def child(framework: str, seconds: float) -> None:
    a = np.random.default_rng(1).random(1024, dtype=np.float32)
    b = np.random.default_rng(2).random(1024, dtype=np.float32)
    if framework == "numba":
        global cuda  # a module global, as the simulator's kernels need
        from gpubench.backends.numba.gpu import import_cuda

        cuda = import_cuda()

        @cuda.jit
        def add(x, y, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = x[i] + y[i]

        da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array_like(a)

        def launches(n: int) -> None:
            for _ in range(n):
                add[8, 128](da, db, dc)
            cuda.synchronize()
        launches(1)
        ok = np.allclose(dc.copy_to_host(), a + b)
    else:
        import jax

        f = jax.jit(lambda x, y: x + y)
        ja, jb = jax.device_put(a), jax.device_put(b)
        out = [None]

        def launches(n: int) -> None:
            for _ in range(n):
                out[0] = f(ja, jb)
            out[0].block_until_ready()
        launches(1)
        ok = np.allclose(np.asarray(out[0]), a + b)
    x64 = np.random.default_rng(3).random(1024)
    y64, z64 = x64.copy(), np.empty_like(x64)

    def np_add(n: int) -> None:
        for _ in range(n):
            np.add(x64, y64, out=z64)

    def py(n: int) -> None:
        s = 0
        for i in range(n):
            s += i

    for _ in range(3):
        launches(64), np_add(2000), py(100000)
    got: dict[str, list[float]] = {"launch": [], "np_add": [], "py": []}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        got["launch"].append(statistics.median(_per_call(launches, 64) for _ in range(5)))
        got["np_add"].append(statistics.median(_per_call(np_add, 2000) for _ in range(5)))
        got["py"].append(statistics.median(_per_call(py, 100000) for _ in range(5)))
        time.sleep(0.2)
    print(json.dumps({"framework": framework, "ok": bool(ok), "t": time.time(),
                      "rounds": len(got["launch"]),
                      **{k: statistics.median(v) for k, v in got.items()},
                      **{f"{k}_series": v for k, v in got.items()}}), flush=True)


def analyse(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    for fw in ("numba", "jax"):
        mine = [r for r in rows if r["framework"] == fw]
        if not mine:
            continue
        m = {k: np.array([r[k] for r in mine]) for k in ("launch", "np_add", "py")}
        rel = {k: v / np.median(v) for k, v in m.items()}
        print(f"{fw}: {len(mine)} processes, all correct: {all(r['ok'] for r in mine)}")
        for k in ("launch", "np_add", "py"):
            print(f"  {k:7s} per process / median: " + " ".join(f"{x:.3f}" for x in rel[k])
                  + f"   (median {np.median(m[k]) * 1e6:.3f} us)")
        for k in ("np_add", "py"):
            r = np.corrcoef(rel["launch"], rel[k])[0, 1]
            resid = rel["launch"] / rel[k]
            print(f"  launch vs {k}: correlation {r:.2f}; launch/{k} per process within "
                  f"{np.max(np.abs(resid / np.median(resid) - 1)):.1%} of its median "
                  f"(launch alone: {np.max(np.abs(rel['launch'] - 1)):.1%})")
        within = [np.max(np.array(r["launch_series"])) / np.min(np.array(r["launch_series"]))
                  for r in mine]
        print("  within a process, launch max/min over its rounds: "
              + " ".join(f"{x:.2f}" for x in within))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--procs", type=int, default=8)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--child")
    p.add_argument("--analyse")
    a = p.parse_args()
    if a.analyse:
        analyse(a.analyse)
    elif a.child:
        child(a.child, a.seconds)
    else:
        for _ in range(a.procs):
            for fw in ("numba", "jax"):
                subprocess.run([sys.executable, __file__, "--child", fw,
                                "--seconds", str(a.seconds)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
