"""monte_carlo_pi in plain Python: the workshop book's serial loop (§4.11.2) with the
standard library's ``random``, line for line Numba's ``njit_loop``.

One ``random.Random`` per build, seeded with the case seed (reproducible, and no other
code's draws interleave with it); each call continues its stream, so it draws fresh
points. ``random()`` returns doubles: float64 only. Capped at 2**20 samples (a call's
median in the harness 0.28 s on a 2-core cloud VM with Python 3.11, so 2**22 would take
about 1.1 s).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from gpubench.spec import BuildContext, implementation

MAX_SIZE = 1 << 20


@implementation("monte_carlo_pi", "python", "loop", dtypes=("float64",), max_size=MAX_SIZE)
def loop(ctx: BuildContext) -> Callable[[], float]:
    rng = random.Random(ctx.seed)
    n = ctx.case.size

    def call() -> float:
        hits = 0
        for _ in range(n):
            x = rng.random()
            y = rng.random()
            if x * x + y * y <= 1.0:
                hits += 1
        return 4.0 * hits / n

    return call
