"""gemm_reduced in CuPy: ``cupy.matmul`` into a preallocated C, i.e. cuBLAS ``gemmEx``.

``tf32``: CuPy reads its float32 GEMM compute type on every call from a module-level
setting (``cupy._core._routines_linalg``; the ``CUPY_TF32`` environment variable only
seeds it, once per process). Each call sets ``COMPUTE_TYPE_TF32`` (cuBLAS
``CUBLAS_COMPUTE_32F_FAST_TF32``) and puts the previous type back after, so the
worker's float32 ``matmul`` rows, which refuse to run in TF32, stay float32. The switch
is two calls into CuPy's Cython per GEMM. ``fp16``: A and B cast once, before the timed
calls; cuBLAS multiplies float16 with float32 accumulation (``CUBLAS_COMPUTE_32F``,
CuPy's default for float16), C in float16. CuPy has no bfloat16 dtype: no ``bf16`` row.
"""

from __future__ import annotations

from collections.abc import Callable

from gpubench.kernels.gemm_reduced import not_offered
from gpubench.spec import BuildContext, implementation


@implementation("gemm_reduced", "cupy", "cublas", devices=("gpu",), variants=("tf32", "fp16"))
def cublas(ctx: BuildContext) -> Callable[[], None]:
    import cupy
    import numpy as np
    from cupy._core import _routines_linalg as linalg

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    capability = int(cupy.cuda.Device().compute_capability) / 10
    not_offered(ctx.case, ctx.backend.device, capability)
    if ctx.case.variant == "tf32":
        f32, tf32 = np.dtype(np.float32), linalg.COMPUTE_TYPE_TF32

        def call() -> None:
            before = linalg.get_compute_type(f32)
            linalg.set_compute_type(f32, tf32)
            try:
                cupy.matmul(a, b, out=c)
            finally:
                linalg.set_compute_type(f32, before)

        return call
    a_r, b_r = a.astype(cupy.float16), b.astype(cupy.float16)

    def call() -> None:
        cupy.matmul(a_r, b_r, out=c)

    return call
