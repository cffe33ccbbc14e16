"""linalg in JAX: jitted ``jnp.linalg`` (LAPACK on the CPU, cuSOLVER on GPUs).

Traced under ``default_matmul_precision("highest")``: any matmul XLA uses inside a
decomposition (blocked algorithms, the concatenation's layout) then stays full float32
instead of TF32 on GPUs.

On GPUs the SVD asks for ``SvdAlgorithm.QR`` (cuSOLVER ``gesvd``), as CuPy uses. JAX's
default there switches algorithm with the size: the Jacobi ``gesvdj`` up to n = 1024,
``gesvd`` beyond; gesvdj stops at a looser orthogonality (seen on an H100:
‖VtVtᵀ − I‖_F/√n = 5.1e-4 in float32 at n = 1024), which the float32 check rejects.
On the CPU the default (LAPACK ``gesdd``, as NumPy and PyTorch use) stays.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("linalg", "jax", "jit", devices=("cpu", "gpu"), parallel=True)
def jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    variant = ctx.case.variant
    on_gpu = ctx.backend.device == "gpu"

    def compute(a, b=None):
        with jax.default_matmul_precision("highest"):
            if variant == "solve":
                return jnp.linalg.solve(a, b)
            if variant == "inv":
                return jnp.linalg.inv(a)
            if variant == "eigh":
                w, v = jnp.linalg.eigh(a)
                return jnp.concatenate([w, v.ravel()])
            if on_gpu:
                u, s, vt = jax.lax.linalg.svd(a, full_matrices=False,
                                              algorithm=jax.lax.linalg.SvdAlgorithm.QR)
            else:
                u, s, vt = jnp.linalg.svd(a, full_matrices=False)
            return jnp.concatenate([s, u.ravel(), vt.ravel()])

    fn = jax.jit(compute)
    a = ctx.inputs["a"]
    if variant == "solve":
        b = ctx.inputs["b"]
        return lambda: fn(a, b)
    return lambda: fn(a)
