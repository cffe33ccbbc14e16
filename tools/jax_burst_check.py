"""Does a pipelined burst of large outputs leave JAX's next sync calls slower?

At 2^24 elements the harness's sync samples read 142 µs before the row's first pipelined
part and 160-270 µs after it (``jax_sync_check_8.txt``), while a plain loop reads
130-150 µs. This times the plain ``f(a, b).block_until_ready()`` loop alone, then right
after k calls queued back to back and one wait (the harness's pipelined sample), three
rounds each, and prints the medians and the first 20 calls after each burst.

    python tools/jax_burst_check.py
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
    print(f"jax {versions.get('jax')}: y = f(a, b); y.block_until_ready(), 200 calls, "
          "alone and right after a burst of k queued calls and one wait (3 rounds each)")
    for size, k in ((1 << 20, 64), (1 << 24, 27)):
        rng = np.random.default_rng(size)
        a = jax.device_put(rng.random(size, dtype=np.float32), backend._device)
        b = jax.device_put(rng.random(size, dtype=np.float32), backend._device)
        f = jax.jit(lambda x, y: x + y)
        alone, after, firsts = [], [], []
        for _ in range(3):
            alone.append(float(np.median(check.time_loop(f, (a, b), 200))))
            y = None
            for _ in range(k):
                y = f(a, b)
            y.block_until_ready()
            times = check.time_loop(f, (a, b), 200)
            after.append(float(np.median(times)))
            firsts.append(times[:20])
        ratio = np.median(after) / np.median(alone)
        print(f"{size:>10} k={k}: alone {np.median(alone) * 1e6:.1f} us "
              f"[{' '.join(f'{t * 1e6:.1f}' for t in alone)}], after a burst "
              f"{np.median(after) * 1e6:.1f} us [{' '.join(f'{t * 1e6:.1f}' for t in after)}]"
              f", ratio {ratio:.3f}")
        for r, first in enumerate(firsts):
            print(f"    round {r + 1}, first 20 after the burst (the loop's 5 untimed calls "
                  f"before): " + " ".join(f"{t * 1e6:.0f}" for t in first))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
