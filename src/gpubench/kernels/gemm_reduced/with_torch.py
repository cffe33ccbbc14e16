"""gemm_reduced in PyTorch: eager ``torch.matmul`` into a preallocated C.

``tf32``: float32 tensors, with ``torch.set_float32_matmul_precision("high")`` (cuBLAS
may then round the inputs to TF32) around each call and the setting before it put back
after: the switch is global to the process, and the worker's other rows (the float32
``matmul``, linalg, autodiff, and the spread rounds that call them again later) must
not run in TF32. The switch costs a read and two writes of the setting per GEMM,
0.5 µs of host time on the development VM, which the row includes (n = 1024 at the
415 TFLOP/s a standalone H200 check saw at n = 8192 would take 5 µs). ``bf16`` /
``fp16``: A and B cast once, before the timed calls; C in the same format. PyTorch
accumulates both in float32 (its default lets cuBLAS round split-K partial sums to C's
format, which the tolerance allows for).
"""

from __future__ import annotations

from collections.abc import Callable

from gpubench.kernels.gemm_reduced import FORMATS, not_offered
from gpubench.spec import BuildContext, implementation


@implementation("gemm_reduced", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], None]:
    import torch

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    capability = None
    if ctx.backend.device == "gpu":
        major, minor = torch.cuda.get_device_capability(a.device)
        capability = major + minor / 10
    not_offered(ctx.case, ctx.backend.device, capability)
    if ctx.case.variant == "tf32":

        def call() -> None:
            before = torch.get_float32_matmul_precision()
            torch.set_float32_matmul_precision("high")
            try:
                torch.matmul(a, b, out=c)
            finally:
                torch.set_float32_matmul_precision(before)

        return call
    dtype = getattr(torch, FORMATS[ctx.case.variant].storage)
    a_r, b_r = a.to(dtype), b.to(dtype)  # the cast is not part of the GEMM's time

    def call() -> None:
        torch.matmul(a_r, b_r, out=c)

    return call
