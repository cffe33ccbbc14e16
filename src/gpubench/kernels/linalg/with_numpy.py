"""linalg in NumPy: ``np.linalg`` (LAPACK gesv, inv via gesv, syevd, gesdd).

NumPy computes every real request in float64 and rounds the result to the input's dtype
(``numpy.linalg._commonType`` always picks ``double``; float32 residuals here are ~3e-8,
float64-accurate). Its float32 rows therefore time float64 LAPACK: an honest NumPy
number, but not a single-precision one. The other frameworks call sgesv/ssyevd/...
"""

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


# LAPACK calls the BLAS thread pool (capped by the backend), so it joins the thread sweep.
@implementation("linalg", "numpy", "lapack", parallel=True)
def lapack(ctx: BuildContext) -> Callable[[], object]:
    import numpy as np

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "solve":
        b = ctx.inputs["b"]
        return lambda: np.linalg.solve(a, b)
    if variant == "inv":
        return lambda: np.linalg.inv(a)
    if variant == "eigh":
        def eigh() -> np.ndarray:
            w, v = np.linalg.eigh(a)
            return np.concatenate([w, v.ravel()])

        return eigh

    def svd() -> np.ndarray:
        u, s, vt = np.linalg.svd(a)
        return np.concatenate([s, u.ravel(), vt.ravel()])

    return svd
