"""matmul in PyTorch: eager ``torch.matmul`` into the preallocated C, in full float32."""

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


@implementation("matmul", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx: BuildContext) -> Callable[[], None]:
    import torch

    # On GPUs cuBLAS may compute float32 GEMMs in TF32 (10-bit mantissa) when allowed,
    # which is a different, less accurate operation. Forbid it for the whole process,
    # and ask oneDNN on the CPU for full precision too.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call() -> None:
        torch.matmul(a, b, out=c)

    return call
