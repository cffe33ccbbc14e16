"""launch_overhead in PyTorch: one eager ``torch.add`` into the preallocated output (the
dispatcher's overhead, plus a CUDA launch on GPUs)."""

from collections.abc import Callable

from gpubench.spec import BuildContext, implementation


@implementation("launch_overhead", "torch", "eager", devices=("cpu", "gpu"))
def eager(ctx: BuildContext) -> Callable[[], None]:
    import torch

    a, out = ctx.inputs["a"], ctx.out("out")

    def call() -> None:
        torch.add(a, 1, out=out)

    return call
