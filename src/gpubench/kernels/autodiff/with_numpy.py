"""autodiff in NumPy: the gradients written out by hand (no autodiff), in the case's dtype.

The baseline the autodiff frameworks are compared with: the closed-form Rosenbrock
gradient, and for the PINN the hand-derived forward-tangent-reverse pass. These are the
float64 references' formulas too, so in float64 these rows check the code path, not an
independent derivation; the JAX and PyTorch rows are what validate the formulas.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("autodiff", "numpy", "analytic_gradient", variants=("rosenbrock",))
def analytic_gradient(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.kernels.autodiff import SPEC, rosenbrock_descent

    x0 = ctx.inputs["x0"]
    steps, lr = SPEC._descent_params(ctx.case)
    return lambda: rosenbrock_descent(x0, steps, lr)


@implementation("autodiff", "numpy", "manual_backprop", variants=("pinn",))
def manual_backprop(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.kernels.autodiff import PINN_PARAMS, pinn_loss_and_grad

    params = {k: ctx.inputs[k] for k in PINN_PARAMS}
    x = ctx.inputs["x"]
    return lambda: pinn_loss_and_grad(params, x)[1]
