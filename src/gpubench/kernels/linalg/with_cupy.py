"""linalg in CuPy: ``cupy.linalg`` (cuSOLVER getrf/getrs, syevd, gesvd), on the GPU."""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("linalg", "cupy", "cusolver", devices=("gpu",))
def cusolver(ctx: BuildContext) -> Callable[[], Any]:
    import cupy as cp

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "solve":
        b = ctx.inputs["b"]
        return lambda: cp.linalg.solve(a, b)
    if variant == "inv":
        return lambda: cp.linalg.inv(a)
    if variant == "eigh":
        def eigh() -> Any:
            w, v = cp.linalg.eigh(a)
            return cp.concatenate([w, v.ravel()])

        return eigh

    def svd() -> Any:
        u, s, vt = cp.linalg.svd(a, full_matrices=False)
        return cp.concatenate([s, u.ravel(), vt.ravel()])

    return svd
