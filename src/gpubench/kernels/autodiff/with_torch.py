"""autodiff in PyTorch: eager autograd.

rosenbrock: each of the ``steps`` steps builds the graph of f, takes
``torch.autograd.grad`` and updates x outside the graph.
pinn: du/dx is ``autograd.grad(u.sum(), x, create_graph=True)`` (u[i] depends on x[i]
only, so this is the pointwise derivative, kept differentiable), and the parameter
gradient is a second ``autograd.grad`` through it.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("autodiff", "torch", "autograd", devices=("cpu", "gpu"), parallel=True)
def autograd(ctx: BuildContext) -> Callable[[], Any]:
    import torch

    from gpubench.kernels.autodiff import PINN_PARAMS, SPEC

    if ctx.case.variant == "rosenbrock":
        steps, lr = SPEC._descent_params(ctx.case)
        x0 = ctx.inputs["x0"]

        def descend() -> Any:
            x = x0.detach().clone()
            for _ in range(steps):
                x.requires_grad_(True)
                t = x[1:] - x[:-1] ** 2
                f = torch.sum(100.0 * t * t + (1.0 - x[:-1]) ** 2)
                (g,) = torch.autograd.grad(f, x)
                x = x.detach() - lr * g
            return x

        return descend

    params = [ctx.inputs[k].detach().clone().requires_grad_(True) for k in PINN_PARAMS]
    x = ctx.inputs["x"]
    xg = x.detach().reshape(-1, 1).clone().requires_grad_(True)
    zero = torch.zeros((1, 1), dtype=x.dtype, device=x.device)

    def net(xc: Any) -> Any:
        w1, b1, w2, b2, w3, b3 = params
        h1 = torch.tanh(xc * w1 + b1)
        h2 = torch.tanh(h1 @ w2 + b2)
        return h2 @ w3 + b3

    def flat_grad() -> Any:
        u = net(xg)
        (du_dx,) = torch.autograd.grad(u.sum(), xg, create_graph=True)
        r = du_dx.reshape(-1) - torch.cos(x)
        loss = torch.mean(r * r) + torch.sum(net(zero) ** 2)
        grads = torch.autograd.grad(loss, params)
        return torch.cat([g.reshape(-1) for g in grads])

    return flat_grad
