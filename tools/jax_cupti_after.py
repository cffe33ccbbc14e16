"""Does CUPTI, once attached and detached, leave JAX's calls slower?

``jax_sync_check.py`` finds the harness's sync clock 15-18 % above a plain
``block_until_ready`` loop at 2^24 elements when the device clock uses CUPTI, and within
1 % when it does not (``--no-cupti``). This times the plain loop alone, in one process:

1. before CUPTI was ever attached;
2. after 10 samples on CUPTI (:meth:`JaxGPU.cupti_time_call`) of another jitted
   function, and :meth:`JaxGPU.detach_cupti`, as a benchmark step does between its rows
   (``plain``: each round jits its own ``f``);
3. (``same f``) one jitted ``f`` on the same arrays: timed plain, then 10 samples of it
   on CUPTI and the detach, then timed plain again, as a harness row does;

three rounds of 200 calls each, and prints the medians and their ratio per size.

    python tools/jax_cupti_after.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_sync_check as check


def main() -> int:
    import jax

    backend, versions = check.start_backend("gpu", 16)
    if backend._cupti is None:
        print("no CUPTI hooks in this jaxlib: nothing to compare")
        return 2
    sizes = (1 << 16, 1 << 20, 1 << 24)
    before = {n: [check.plain_loop(backend, n, 200) for _ in range(3)] for n in sizes}
    f = jax.jit(lambda x, y: x + y)
    a = jax.device_put(np.ones(1 << 20, np.float32), backend._device)
    for _ in range(10):
        backend.cupti_time_call(lambda: f(a, a))
    backend.detach_cupti()
    after = {n: [check.plain_loop(backend, n, 200) for _ in range(3)] for n in sizes}
    same = {}
    for n in sizes:
        rng = np.random.default_rng(n)
        x = jax.device_put(rng.random(n, dtype=np.float32), backend._device)
        g = jax.jit(lambda u, v: u + v)
        one = [timed(g, x) for _ in range(3)]
        for _ in range(10):
            backend.cupti_time_call(lambda g=g, x=x: g(x, x))
        backend.detach_cupti()
        same[n] = (one, [timed(g, x) for _ in range(3)])
    print(f"jax {versions.get('jax')}: plain f(a, b).block_until_ready() loop, median of "
          "3 rounds of 200 calls (each round's median in brackets)")
    print(f"{'size':>10} {'before CUPTI':>14} {'after detach':>14} {'ratio':>7}")
    for n in sizes:
        b, a_ = float(np.median(before[n])), float(np.median(after[n]))
        print(f"{n:>10} {b * 1e6:>11.1f} us {a_ * 1e6:>11.1f} us {a_ / b:>7.3f}   "
              f"[{' '.join(f'{t * 1e6:.1f}' for t in before[n])}] -> "
              f"[{' '.join(f'{t * 1e6:.1f}' for t in after[n])}]")
    print(f"{'same f':>10} {'before CUPTI':>14} {'after detach':>14} {'ratio':>7}")
    for n in sizes:
        b, a_ = (float(np.median(v)) for v in same[n])
        print(f"{n:>10} {b * 1e6:>11.1f} us {a_ * 1e6:>11.1f} us {a_ / b:>7.3f}   "
              f"[{' '.join(f'{t * 1e6:.1f}' for t in same[n][0])}] -> "
              f"[{' '.join(f'{t * 1e6:.1f}' for t in same[n][1])}]")
    return 0


def timed(g: Any, x: Any, reps: int = 200) -> float:
    """Median seconds of ``g(x, x).block_until_ready()``
    (:func:`jax_sync_check.time_loop`)."""
    return float(np.median(check.time_loop(g, (x, x), reps)))


if __name__ == "__main__":
    raise SystemExit(main())
