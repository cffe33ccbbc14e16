"""Does Python's garbage collector run inside the caller's-clock samples?

The harness leaves the collector on (a user's loop has it on too). A collection of the
worker's whole heap (every framework module imported, the rows kept so far) in the
middle of a sample would add time no framework caused. This runs the harness as a step
does (``gpubench.harness.measure``, the GPU steps' settings) on one backend's rows of
``vector_add`` and ``elementwise`` at every default GPU size up to 2^24, with
``gc.callbacks`` noting each collection's generation and length, and prints per
generation: the count, the total and longest pause, and the rows' measuring time
beside it.

    python tools/gc_check.py --backend jax-gpu
    python tools/gc_check.py --backend numpy-cpu     # runs anywhere
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))
from jax_sync_check import ROOT, settings_from_config  # noqa: E402

SIZES = (1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="jax-gpu")
    p.add_argument("--kernels", nargs="+", default=["vector_add", "elementwise"])
    args = p.parse_args(argv)
    from gpubench.backends import load_backend
    from gpubench.harness import measure
    from gpubench.spec import get_kernel, implementations

    settings = settings_from_config(ROOT / "config" / "config.yaml")
    backend = load_backend(args.backend)
    backend.start(os.cpu_count() or 1)
    framework = backend.framework
    pauses: dict[int, list[float]] = defaultdict(list)
    started: list[float] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            pauses[int(info["generation"])].append(time.perf_counter() - started.pop())

    print(f"{args.backend}: gc thresholds {gc.get_threshold()}, python {sys.version.split()[0]}")
    gc.callbacks.append(note)
    rows, t0 = 0, time.perf_counter()
    try:
        for kernel in args.kernels:
            spec = get_kernel(kernel)
            for impl in implementations(kernel, framework, backend.device):
                for case in spec.cases([s for s in SIZES], ["float32"]):
                    inputs = spec.make_inputs(case, np.random.default_rng(case.seed(1)))
                    m = measure(spec, impl, case, backend, settings, inputs,
                                spec.reference(case, inputs))
                    rows += m.fields.get("status") == "ok"
    finally:
        gc.callbacks.remove(note)
    took = time.perf_counter() - t0
    print(f"{rows} ok rows in {took:.1f} s")
    for gen in sorted(pauses):
        got = pauses[gen]
        print(f"  generation {gen}: {len(got)} collections, {sum(got) * 1e3:.1f} ms in all, "
              f"longest {max(got) * 1e3:.2f} ms, median {np.median(got) * 1e6:.0f} µs")
    if not pauses:
        print("  no collection ran")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
