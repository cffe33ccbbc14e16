"""Which JAX executables does CUPTI leave slower: those loaded before it was attached, or
only those it traced?

``jax_cupti_after.txt``: after 10 CUPTI samples and the detach, the traced executable ran
7.5 % slower at 2^24 elements, one compiled after the detach did not. Here, at 2^20 and
2^24, three jitted copies of ``x + y`` on the same arrays: A compiled and timed before
CUPTI and traced by it; B compiled before CUPTI, never traced; C compiled after the
detach. Each is timed (200 calls, median, 3 rounds) after the detach.

    python tools/jax_cupti_loaded.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_sync_check as check


def main() -> int:
    import jax

    backend, versions = check.start_backend("gpu", 16)
    if backend._cupti is None:
        print("no CUPTI hooks in this jaxlib: nothing to compare")
        return 2
    print(f"jax {versions.get('jax')}: median of 200 calls of y = f(x, y); "
          "y.block_until_ready(), 3 rounds each, after CUPTI's detach")
    for size in (1 << 20, 1 << 24):
        rng = np.random.default_rng(size)
        x = jax.device_put(rng.random(size, dtype=np.float32), backend._device)
        y = jax.device_put(rng.random(size, dtype=np.float32), backend._device)
        a, b = jax.jit(lambda u, v: u + v), jax.jit(lambda u, v: u + v)
        before = [float(np.median(check.time_loop(f, (x, y), 200))) for f in (a, b)]
        for _ in range(10):
            backend.cupti_time_call(lambda a=a, x=x, y=y: a(x, y))
        backend.detach_cupti()
        c = jax.jit(lambda u, v: u + v)
        after = {name: [float(np.median(check.time_loop(f, (x, y), 200))) for _ in range(3)]
                 for name, f in (("A traced", a), ("B loaded before", b),
                                 ("C compiled after", c))}
        print(f"{size:>10}: before CUPTI A {before[0] * 1e6:.1f} us, B {before[1] * 1e6:.1f}"
              " us; after the detach: " + "; ".join(
                  f"{n} {np.median(v) * 1e6:.1f} us [{' '.join(f'{t * 1e6:.1f}' for t in v)}]"
                  for n, v in after.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
