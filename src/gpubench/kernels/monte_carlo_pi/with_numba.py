"""monte_carlo_pi in Numba on the CPU: the workshop book's serial loop (§4.11.2)
and a prange loop.

Numba's ``np.random`` inside jitted code is its own Mersenne Twister with one state per
thread. ``np.random.seed`` called from jitted code seeds only the calling thread's state,
so ``njit_loop`` is seeded once per build with the case seed and reproducible. In
``njit_prange`` the worker threads' states are seeded by Numba from OS entropy on first
use: independent streams (no ``seed=idx`` correlation), but not bit-reproducible; the
statistical check does not need that. Numba draws doubles: the float32 variant rounds
them to float32 and does the arithmetic in float32.
"""

import functools
from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


@functools.cache
def _kernels() -> dict[str, Callable]:
    import numba
    import numpy as np
    from numba import prange

    @numba.njit
    def seed(s):
        np.random.seed(s)

    def make(cast):
        def count(n):
            hits = 0
            for _ in prange(n):  # the serial loop's ``range`` where not compiled parallel
                x = cast(np.random.random())
                y = cast(np.random.random())
                if x * x + y * y <= cast(1.0):
                    hits += 1
            return 4.0 * hits / n

        # one loop, compiled twice: Numba runs ``prange`` as ``range`` without parallel=True
        return numba.njit(count), numba.njit(parallel=True)(count)

    kernels: dict[str, Callable] = {"seed": seed}
    for name, cast in (("float32", np.float32), ("float64", np.float64)):
        kernels[f"loop_{name}"], kernels[f"prange_{name}"] = make(cast)
    return kernels


@implementation("monte_carlo_pi", "numba", "njit_loop")
def njit_loop(ctx: BuildContext) -> Callable[[], float]:
    k = _kernels()
    k["seed"](ctx.seed)
    fn, n = k[f"loop_{ctx.case.dtype}"], ctx.case.size
    return lambda: fn(n)


@implementation("monte_carlo_pi", "numba", "njit_prange", parallel=True)
def njit_prange(ctx: BuildContext) -> Callable[[], float]:
    k = _kernels()
    k["seed"](ctx.seed)  # the calling thread's share only; see the module docstring
    fn, n = k[f"prange_{ctx.case.dtype}"], ctx.case.size
    return lambda: fn(n)
