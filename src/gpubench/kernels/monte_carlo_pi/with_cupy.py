"""monte_carlo_pi in CuPy: a seeded ``cupy.random.Generator`` and array ops, in chunks.

The generator (``default_rng``: cuRAND XORWOW states kept on the device) is created
once per build with the case's seed; each draw advances its states, so every call
draws fresh points. Points come in chunks of at most :data:`CHUNK` so the scratch
stays bounded whatever n is. The count and the estimate stay on the device: no
host sync inside the call.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: points per chunk: x and y for 2**26 float64 points are 1 GiB, plus the temporaries
CHUNK = 1 << 26


@implementation("monte_carlo_pi", "cupy", "array_ops", devices=("gpu",))
def array_ops(ctx: BuildContext) -> Callable[[], Any]:
    import cupy
    import numpy as np

    n = ctx.case.size
    dtype = np.dtype(ctx.case.dtype)
    rng = cupy.random.default_rng(ctx.seed)

    def call() -> Any:
        hits = None
        for start in range(0, n, CHUNK):
            k = min(CHUNK, n - start)
            x = rng.random(k, dtype=dtype)
            y = rng.random(k, dtype=dtype)
            inside = cupy.count_nonzero(x * x + y * y <= 1)
            hits = inside if hits is None else hits + inside
        return hits * (4.0 / n)

    return call
