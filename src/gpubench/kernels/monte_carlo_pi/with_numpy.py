"""monte_carlo_pi in NumPy: a ``Generator`` drawing x and y in chunks, counting vectorised."""

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation

#: points per chunk: bounds the scratch memory (2 arrays) whatever n is
CHUNK = 1 << 22


@implementation("monte_carlo_pi", "numpy", "generator")
def generator(ctx: BuildContext) -> Callable[[], float]:
    import numpy as np

    n = ctx.case.size
    dtype = np.dtype(ctx.case.dtype)
    # One generator per build; each call continues its stream, so draws fresh points.
    rng = np.random.default_rng(ctx.seed)
    m = min(n, CHUNK)
    xs, ys = np.empty(m, dtype), np.empty(m, dtype)
    one = dtype.type(1)

    def call() -> float:
        hits = 0
        for start in range(0, n, CHUNK):
            k = min(CHUNK, n - start)
            x, y = xs[:k], ys[:k]
            rng.random(out=x, dtype=dtype)
            rng.random(out=y, dtype=dtype)
            np.multiply(x, x, out=x)
            np.multiply(y, y, out=y)
            np.add(x, y, out=x)
            hits += int(np.count_nonzero(x <= one))
        return 4.0 * hits / n

    return call
