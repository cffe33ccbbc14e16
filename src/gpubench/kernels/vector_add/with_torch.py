"""vector_add in PyTorch: eager ``torch.add`` into a preallocated tensor."""

from gpubench.spec import implementation


@implementation("vector_add", "torch", "eager", devices=("cpu", "gpu"), parallel=True)
def eager(ctx):
    import torch

    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    def call():
        torch.add(a, b, out=c)

    return call
