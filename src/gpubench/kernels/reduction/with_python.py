"""reduction in plain Python: ``for i in range(n)`` loops over lists accumulating into
a float, as a newcomer writes them, line for line the loops of Numba's
``njit_loop``.

The inputs become Python lists once, in the build (``.tolist()``, outside the timed
call; see ``vector_add/with_python.py`` for why lists). The sum is a Python float (a
double), added in order, as Numba's serial loop does; float64 only. Capped at 2**22
elements (a call's median in the harness 0.27-0.44 s there on a 2-core cloud VM with
Python 3.11).
"""

from __future__ import annotations

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation

MAX_SIZE = 1 << 22


def sumsq(a: list[float]) -> float:
    total = 0.0
    for i in range(len(a)):
        total += a[i] * a[i]
    return total


def dot(a: list[float], b: list[float]) -> float:
    total = 0.0
    for i in range(len(a)):
        total += a[i] * b[i]
    return total


def weighted_mean(a: list[float], w: list[float]) -> float:
    num = 0.0
    den = 0.0
    for i in range(len(a)):
        num += w[i] * a[i]
        den += w[i]
    return num / den


@implementation("reduction", "python", "loop", dtypes=("float64",), max_size=MAX_SIZE)
def loop(ctx: BuildContext) -> Callable[[], float]:
    a = ctx.inputs["a"].tolist()
    variant = ctx.case.variant
    if variant == "sumsq":
        return lambda: sumsq(a)
    if variant == "dot":
        b = ctx.inputs["b"].tolist()
        return lambda: dot(a, b)
    w = ctx.inputs["w"].tolist()
    return lambda: weighted_mean(a, w)
