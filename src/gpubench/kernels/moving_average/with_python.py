"""moving_average in plain Python: nested ``for`` loops over a list of lists with a
running window sum, line for line the loop of Numba's ``guvectorize`` and
``njit_prange`` bodies, so the comparison is interpreter against compiler, not one
algorithm against another (the book's direct loop over the window would be ``window``
times the work).

The input becomes a list of row lists once, in the build (``.tolist()``, outside the
timed call; see ``vector_add/with_python.py``). Each call builds its own list of output
rows; the check reads it as a ``(rows, L)`` float64 array. float64 only. Capped at
2**20 elements (a call's median in the harness 0.43 s on a 2-core cloud VM with Python
3.11, so 2**22 would take about 1.7 s).
"""

from __future__ import annotations

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation

MAX_SIZE = 1 << 20


@implementation("moving_average", "python", "loop", dtypes=("float64",), max_size=MAX_SIZE)
def loop(ctx: BuildContext) -> Callable[[], list[list[float]]]:
    x = ctx.inputs["x"].tolist()
    w = int(ctx.case.params["window"])

    def call() -> list[list[float]]:
        out = []
        for r in range(len(x)):
            row = x[r]
            o = [0.0] * len(row)
            s = 0.0
            for i in range(len(row)):
                s += row[i]
                if i >= w:
                    s -= row[i - w]
                o[i] = s / min(i + 1, w)
            out.append(o)
        return out

    return call
