"""matmul in CuPy: ``cupy.matmul`` into the preallocated C, i.e. cuBLAS GEMM (the
workshop book, §5.10.2).

CuPy asks cuBLAS for full float32 (``CUBLAS_COMPUTE_32F``) unless the environment sets
``CUPY_TF32=1``, which it reads once, at the first float32 GEMM of the process, and then
uses ``CUBLAS_COMPUTE_32F_FAST_TF32`` (10-bit mantissa). That would be a different, less
accurate operation than every other float32 row, so the builders refuse to run then.

``cublas+transfers`` starts from the host matrices: copies A and B to the device
(pageable memory), multiplies, and copies C back, so the report can set the transfer
cost next to the device-resident GEMM.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


def require_full_fp32() -> None:
    """Raise if CuPy would compute float32 GEMMs in TF32 (CUPY_TF32 set, or set earlier).

    Reads CuPy's effective compute type where its internal module exposes it (it keeps
    the first value it saw), and falls back to the environment variable otherwise.
    """
    from gpubench.backends.cupy.adapter import cupy_tf32

    setting = os.environ.get("CUPY_TF32", "")
    tf32 = cupy_tf32()
    if tf32:
        raise RuntimeError(f"CuPy computes float32 GEMMs in TF32 (CUPY_TF32={setting!r}); "
                           "unset CUPY_TF32 for a full-precision float32 matmul")


@implementation("matmul", "cupy", "cublas", devices=("gpu",))
def cublas(ctx: BuildContext) -> Callable[[], None]:
    import cupy

    require_full_fp32()
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call() -> None:
        cupy.matmul(a, b, out=c)

    return call


@implementation("matmul", "cupy", "cublas+transfers", devices=("gpu",))
def cublas_transfers(ctx: BuildContext) -> Callable[[], Any]:
    """Host in, host out: A and B to the device, the GEMM, C back to a NumPy array."""
    import cupy

    require_full_fp32()
    a_host, b_host = ctx.host_inputs["a"], ctx.host_inputs["b"]

    def call() -> Any:
        return cupy.asnumpy(cupy.matmul(cupy.asarray(a_host), cupy.asarray(b_host)))

    return call
