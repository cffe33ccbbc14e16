"""vector_add in plain Python: a ``for i in range(n)`` loop over lists, as a newcomer
writes it, line for line the loop of Numba's ``njit_loop``.

The NumPy inputs become Python lists once, in the build (``.tolist()``, outside the
timed call: the build's time is the row's ``setup_s``), because a newcomer's data are
lists; indexing a NumPy array element by element would time NumPy's scalar boxing
instead (slower still, and not what plain Python code does). Each call makes its own
result list and returns it; the check reads it as a float64 array. Python floats are
doubles: float64 only. Capped at 2**22 elements: a call's median in the harness was
0.52 s there on a 2-core cloud VM with Python 3.11 (the rule for every cap: the largest
CPU grid size whose call stays near half a second, so under 1 s on a slower laptop).
"""

from __future__ import annotations

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation

MAX_SIZE = 1 << 22


@implementation("vector_add", "python", "loop", dtypes=("float64",), max_size=MAX_SIZE)
def loop(ctx: BuildContext) -> Callable[[], list[float]]:
    a = ctx.inputs["a"].tolist()
    b = ctx.inputs["b"].tolist()

    def call() -> list[float]:
        n = len(a)
        c = [0.0] * n
        for i in range(n):
            c[i] = a[i] + b[i]
        return c

    return call
