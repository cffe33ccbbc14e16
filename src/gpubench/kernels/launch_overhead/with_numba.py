"""launch_overhead in Numba on the CPU: an ``@njit`` loop; the cost is Numba's dispatcher
(type-matching the arguments to the compiled version) plus a trivial loop."""

import functools
from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


@functools.cache
def _kernel() -> Callable:
    import numba

    @numba.njit
    def add_one(a, out):
        for i in range(a.shape[0]):
            out[i] = a[i] + 1

    return add_one


@implementation("launch_overhead", "numba", "njit")
def njit(ctx: BuildContext) -> Callable[[], None]:
    a, out = ctx.inputs["a"], ctx.out("out")
    fn = _kernel()
    return lambda: fn(a, out)
