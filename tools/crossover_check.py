"""An independent check of the caller's-clock crossover for vector_add float32.

For each framework (NumPy on the host, every GPU framework), the same implementations the
workflow runs, timed by a plain ``perf_counter`` loop outside the harness: k calls back
to back, then the framework's wait for the device, divided by k (the pipelined caller
clock), repeated in rounds spread over the whole sweep (every size once per round), the
median of the rounds kept. The crossover is where the GPU framework's fastest
implementation beats NumPy's fastest at every larger size, interpolated log-log, as the
report does. Run on the GPU machine in the same call as the workflow's run:

    PYTHONPATH=src python3 tools/crossover_check.py --out $OUT/crossover_check.json

Each framework runs in a process of its own (JAX would take the GPU's memory).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

SIZES = [1 << p for p in range(10, 25, 2)]  # 1,024 .. 16,777,216, every 4x
BACKENDS = ["numpy-cpu", "cupy-gpu", "torch-gpu", "jax-gpu", "numba-gpu", "cuda_python-gpu"]
ROUNDS = 15
BATCH_S = 0.002


def time_backend(backend_id: str, threads: int) -> dict[str, dict[str, float]]:
    """{implementation: {size: median seconds per call}} on the plain loop."""
    from gpubench.backends import load_backend
    from gpubench.spec import BuildContext, Case, get_kernel, implementations

    backend = load_backend(backend_id)
    backend.start(threads)
    spec = get_kernel("vector_add")
    impls = [i for i in implementations("vector_add", backend.framework, backend.device)
             if not i.name.endswith("+transfers")]
    calls: dict[tuple[str, int], tuple[object, int]] = {}
    keep = []
    for size in SIZES:
        case = Case("vector_add", "default", size, "float32", {})
        host = spec.make_inputs(case, np.random.default_rng(size))
        inputs = {k: backend.to_device(v) for k, v in host.items()} if spec.place_inputs \
            else dict(host)
        for impl in impls:
            if not impl.supports(case)[0]:
                continue
            outputs = {n: backend.empty(s, d) for n, (s, d) in spec.outputs(case).items()}
            outputs = {k: v for k, v in outputs.items() if v is not None}
            call = impl.builder(BuildContext(case, backend, inputs, outputs, size, host))
            for _ in range(3):
                backend.device_sync(call())
            t0 = time.perf_counter()
            backend.device_sync(call())
            one = time.perf_counter() - t0
            k = int(min(256, max(1, math.ceil(BATCH_S / max(one, 1e-7)))))
            calls[(impl.name, size)] = (call, k)
            keep.append((inputs, outputs))
    samples: dict[tuple[str, int], list[float]] = {key: [] for key in calls}
    for _ in range(ROUNDS):  # rounds over the whole sweep: a transient hits one round
        for key, (call, k) in calls.items():
            t0 = time.perf_counter()
            result = None
            for _ in range(k):
                result = call()
            backend.device_sync(result)
            samples[key].append((time.perf_counter() - t0) / k)
    out: dict[str, dict[str, float]] = {}
    for (name, size), s in samples.items():
        out.setdefault(name, {})[str(size)] = float(np.median(s))
    return out


def crossover(sizes: list[int], gpu: list[float], cpu: list[float]) -> float:
    """Smallest size from which the GPU is faster at every larger size (log-log
    interpolated); NaN if it is slower at the largest."""
    sys.path.insert(0, str(SRC))
    from gpubench.report.sections.crossover import crossover as report_crossover

    return report_crossover(np.array(sizes, float), np.array(gpu), np.array(cpu))[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", help="time one backend (internal)")
    p.add_argument("--out", default="crossover_check.json")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    if args.backend:
        print(json.dumps(time_backend(args.backend, args.threads)))
        return 0
    env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    times: dict[str, dict[str, dict[str, float]]] = {}
    for b in BACKENDS:
        r = subprocess.run([sys.executable, __file__, "--backend", b, "--threads",
                            str(args.threads)], capture_output=True, text=True, env=env,
                           timeout=600, check=False)
        if r.returncode:
            print(f"{b}: failed: {r.stderr[-800:]}", file=sys.stderr)
            continue
        times[b] = json.loads(r.stdout.strip().splitlines()[-1])
    best = {b: [min(t[str(s)] for t in impls.values() if str(s) in t) for s in SIZES]
            for b, impls in times.items()}
    result = {"sizes": SIZES, "rounds": ROUNDS, "times": times, "best": best, "crossover": {}}
    if "numpy-cpu" in best:
        for b, t in best.items():
            if b.endswith("-gpu"):
                result["crossover"][b] = crossover(SIZES, t, best["numpy-cpu"])
    Path(args.out).write_text(json.dumps(result, indent=1))
    for b, x in result["crossover"].items():
        print(f"{b}: vector_add float32 crossover (independent plain loop) "
              f"{'never' if math.isnan(x) else f'{x:,.0f}'} elements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
