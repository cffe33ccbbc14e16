"""launch_overhead in NumPy: one ufunc call into the preallocated output (the CPU floor)."""

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


@implementation("launch_overhead", "numpy", "ufunc")
def ufunc(ctx: BuildContext) -> Callable[[], None]:
    import numpy as np

    a, out = ctx.inputs["a"], ctx.out("out")

    def call() -> None:
        np.add(a, 1.0, out=out)

    return call
