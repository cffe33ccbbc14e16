"""autodiff in JAX: ``jax.jit`` of ``jax.grad``.

rosenbrock: the ``steps`` descent steps run inside one jitted ``lax.fori_loop``.
pinn: du/dx is ``vmap(grad(u, argnums=1))`` (a derivative with respect to the input x,
per collocation point), and the parameter gradient is ``grad`` of the loss built from it.
Traced under ``default_matmul_precision("highest")`` so float32 matmuls stay float32
(not TF32) on GPUs.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("autodiff", "jax", "grad_jit", devices=("cpu", "gpu"), parallel=True)
def grad_jit(ctx: BuildContext) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    from gpubench.kernels.autodiff import PINN_PARAMS, SPEC

    if ctx.case.variant == "rosenbrock":
        steps, lr = SPEC._descent_params(ctx.case)

        def f(x):
            t = x[1:] - x[:-1] ** 2
            return jnp.sum(100.0 * t * t + (1.0 - x[:-1]) ** 2)

        grad_f = jax.grad(f)

        @jax.jit
        def descend(x0):
            return jax.lax.fori_loop(0, steps, lambda _, x: x - lr * grad_f(x), x0)

        x0 = ctx.inputs["x0"]
        return lambda: descend(x0)

    def u(p, x):
        """The network at one scalar x."""
        w1, b1, w2, b2, w3, b3 = p
        h1 = jnp.tanh(x * w1 + b1)
        h2 = jnp.tanh(h1 @ w2 + b2)
        return h2 @ w3 + b3[0]

    du_dx = jax.vmap(jax.grad(u, argnums=1), in_axes=(None, 0))

    def loss(p, x):
        r = du_dx(p, x) - jnp.cos(x)
        return jnp.mean(r * r) + u(p, jnp.zeros((), x.dtype)) ** 2

    @jax.jit
    def flat_grad(p, x):
        with jax.default_matmul_precision("highest"):
            grads = jax.grad(loss)(p, x)
        return jnp.concatenate([g.ravel() for g in grads])

    params = tuple(ctx.inputs[k] for k in PINN_PARAMS)
    x = ctx.inputs["x"]
    return lambda: flat_grad(params, x)
