"""matmul in NumPy: ``np.matmul`` into the preallocated C, i.e. the linked BLAS GEMM."""

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


# BLAS runs its own thread pool (capped by the backend), so it joins the thread sweep.
@implementation("matmul", "numpy", "blas", parallel=True)
def blas(ctx: BuildContext) -> Callable[[], None]:
    import numpy as np

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call() -> None:
        np.matmul(a, b, out=c)

    return call
