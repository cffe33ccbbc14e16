"""How long JAX's calls stay slow after the device clock lets CUPTI go, and which order of
the clocks makes the harness's sync clock agree with a plain loop.

Three whole-suite runs found the harness's sync samples at 2^24 elements reading 160-270 µs right
after the device clock (CUPTI attached, then detached) against 142 µs before it and
131-160 µs in a plain ``block_until_ready`` loop. In one process, on JAX ``vector_add``
float32:

1. **transient**: a plain loop before CUPTI was ever attached; then, three times, 30
   CUPTI samples, the detach, and every call's time for ``--seconds`` after it, as
   medians over bins of time since the detach; then the plain loop again;
2. **orders**: the harness's row (``gpubench.harness.measure``) against the plain loop in
   alternating rounds (``jax_sync_check``), with the device clock between the caller's
   rounds (before this change) or before them (``device_clock_apart``), and untimed
   calls for 0, 20 or 100 ms after the detach (``detach_settle_s``).

    python tools/jax_detach_transient.py
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from jax_sync_check import (  # noqa: E402
    HIGH,
    LOW,
    ROOT,
    harness_sync,
    plain_loop,
    settings_from_config,
    start_backend,
    time_loop,
)

BINS_S = (0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 1.0)
#: (name, device clock apart, untimed seconds after the detach)
ORDERS = (("between rounds (before)", False, 0.0), ("apart, settle 0", True, 0.0),
          ("apart, settle 20 ms", True, 0.02), ("apart, settle 100 ms", True, 0.1))


def after_detach(backend, f, args, seconds: float) -> list[tuple[float, float]]:
    """(seconds since the detach, seconds of the call) of every plain call for
    ``seconds`` after 30 CUPTI samples and the detach."""
    for _ in range(30):
        backend.cupti_time_call(lambda: f(*args))
    backend.detach_cupti()
    t_detach = time.perf_counter()
    out = []
    while time.perf_counter() - t_detach < seconds:
        t0 = time.perf_counter()
        y = f(*args)
        y.block_until_ready()
        t1 = time.perf_counter()
        out.append((t0 - t_detach, t1 - t0))
    return out


def binned(points: list[tuple[float, float]]) -> str:
    at = np.array([p[0] for p in points])
    dt = np.array([p[1] for p in points])
    parts = []
    for lo, hi in itertools.pairwise(BINS_S):
        sel = (at >= lo) & (at < hi)
        if sel.any():
            parts.append(f"{lo * 1e3:g}-{hi * 1e3:g} ms: {np.median(dt[sel]) * 1e6:.0f}"
                         f" ({int(sel.sum())})")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--platform", choices=("gpu", "cpu"), default="gpu")
    p.add_argument("--size", type=int, default=1 << 24)
    p.add_argument("--sizes", type=int, nargs="+", default=[1 << 20, 1 << 24])
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=200)
    args = p.parse_args(argv)
    if args.platform == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    settings = settings_from_config(ROOT / "config" / "config.yaml")
    backend, versions = start_backend(args.platform, os.cpu_count() or 1)
    print(f"jax {versions.get('jax')} on {versions.get('jax_device')}; CUPTI: "
          f"{backend._cupti is not None}")
    rng = np.random.default_rng(args.size)
    a = jax.device_put(rng.random(args.size, dtype=np.float32), backend._device)
    b = jax.device_put(rng.random(args.size, dtype=np.float32), backend._device)
    f = jax.jit(lambda x, y: x + y)
    print(f"\n1. transient at {args.size} elements (µs per call; calls in the bin)")
    print(f"  plain loop, CUPTI never attached: "
          f"{np.median(time_loop(f, (a, b), 1000)) * 1e6:.1f}")
    if backend._cupti is not None:
        for rep in range(3):
            points = after_detach(backend, f, (a, b), args.seconds)
            print(f"  after detach {rep + 1}: {binned(points)}")
    print(f"  plain loop, at the end: {np.median(time_loop(f, (a, b), 1000)) * 1e6:.1f}")

    print("\n2. harness sync / plain loop, median over alternating rounds")
    bad = 0
    for name, apart, settle in ORDERS:
        backend.facts = backend.facts.but(device_clock_apart=apart)  # this instance's
        backend.detach_settle_s = settle
        for size in args.sizes:
            syncs, plains = [], []
            for r in range(args.rounds):
                order = ("harness", "plain") if r % 2 == 0 else ("plain", "harness")
                for what in order:
                    if what == "harness":
                        syncs.append(harness_sync(backend, size, settings)[0])
                    else:
                        plains.append(plain_loop(backend, size, args.reps))
            ratio = float(np.nanmedian(syncs)) / float(np.median(plains))
            ok = LOW <= ratio <= HIGH
            bad += not ok and apart
            print(f"  {name:<24} {size:>9}: harness {np.nanmedian(syncs) * 1e6:7.1f} µs "
                  f"({min(syncs) * 1e6:.0f}-{max(syncs) * 1e6:.0f}), plain "
                  f"{np.median(plains) * 1e6:7.1f} µs ({min(plains) * 1e6:.0f}-"
                  f"{max(plains) * 1e6:.0f}), ratio {ratio:.3f} {'ok' if ok else 'OUTSIDE'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
