"""autodiff: gradients by automatic differentiation (the workshop
book, §7.6.2, §7.7.1, §7.7.2, §8.3.2).

Two variants; ``size`` means a different thing in each.

``rosenbrock`` (size = dimension d): one call is ``steps`` plain gradient-descent steps
``x ← x − lr·∇f(x)`` on the d-dimensional Rosenbrock function
``f(x) = Σᵢ 100·(xᵢ₊₁ − xᵢ²)² + (1 − xᵢ)²``, from a seeded start in [−1.5, 1.5]ᵈ; the
result is the final x. On that box lr·‖∇²f‖ <= ~0.5 (Gershgorin) for lr = 1e-4, so the
steps are stable; 10 of them move x by ~40 % of ‖x₀‖. The check compares the
*displacement* x − x₀ with the float64 reference's: it is what the gradients produced.

``pinn`` (size = collocation points N): a physics-informed network for du/dx = cos x,
u(0) = 0 on [0, 2π]: an MLP u(x; θ) = w₃·tanh(W₂ᵀ·tanh(w₁x + b₁) + b₂) + b₃ with
hidden width H (1→H→H→1), loss ``mean((du/dx − cos x)²) + u(0)²``. The physics residual
needs du/dx, a derivative with respect to the *input* x (the workshop book's §7.7.2 took it with
respect to the parameters, which is not the residual); one call is the loss and its
gradient with respect to all parameters, i.e. a derivative of a derivative. The result is
the gradient flattened in the order w1 (H), b1 (H), w2 (H×H, row-major, a2 = h1·W2),
b2 (H), w3 (H), b3 (1).

Both references are float64 NumPy with hand-derived gradients (the Rosenbrock gradient
in closed form; the PINN by writing out du/dx and back-propagating through it by hand),
so the autodiff rows are checked against an independent derivation; the tests check the
hand-written PINN gradient against central finite differences.

Parameters θ and collocation points come from the case's NumPy generator, one spawned
child stream per array (the NumPy analogue of ``jax.random.split``), so every framework
starts from the same θ and no two layers share random numbers (the workshop book's
§7.7.2 initialised all parameters from one JAX key, so they started equal).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, itemsize

#: PINN parameters, in the order the flattened gradient uses
PINN_PARAMS: tuple[str, ...] = ("w1", "b1", "w2", "b2", "w3", "b3")
#: Rosenbrock start box
X0_LOW, X0_HIGH = -1.5, 1.5


def pinn_shapes(hidden: int) -> dict[str, tuple[int, ...]]:
    """Shape of each PINN parameter for hidden width ``hidden``."""
    h = hidden
    return {"w1": (h,), "b1": (h,), "w2": (h, h), "b2": (h,), "w3": (h,), "b3": (1,)}


def pinn_param_count(hidden: int) -> int:
    return sum(math.prod(s) for s in pinn_shapes(hidden).values())


# -- Rosenbrock ----------------------------------------------------------------------


def rosenbrock(x: np.ndarray) -> Any:
    """f(x) = Σ 100·(x[i+1] − x[i]²)² + (1 − x[i])²."""
    t = x[1:] - x[:-1] ** 2
    return np.sum(100.0 * t * t + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x: np.ndarray) -> np.ndarray:
    """The closed-form gradient of :func:`rosenbrock`, in x's dtype."""
    t = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * t - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    return g


def rosenbrock_descent(x0: np.ndarray, steps: int, lr: float) -> np.ndarray:
    """``steps`` gradient-descent steps from x0 (a new array, x0's dtype)."""
    x = x0.copy()
    for _ in range(steps):
        x -= lr * rosenbrock_grad(x)
    return x


# -- PINN ------------------------------------------------------------------------------


def pinn_loss_and_grad(p: Mapping[str, np.ndarray], x: np.ndarray) -> tuple[Any, np.ndarray]:
    """Loss and flattened parameter gradient, derived by hand, in the inputs' dtype.

    Forward with tangents: h1 = tanh(a1), a1 = x·w1 + b1, t1 = dh1/dx = (1 − h1²)·w1;
    h2 = tanh(a2), a2 = h1·W2 + b2, s2 = da2/dx = t1·W2, t2 = dh2/dx = (1 − h2²)·s2;
    du/dx = t2·w3. Then reverse through every one of those, and through u(0).
    """
    w1, b1, w2, b2, w3, b3 = (p[k] for k in PINN_PARAMS)
    n = x.shape[0]
    one = x.dtype.type(1)
    xc = x[:, None]
    h1 = np.tanh(xc * w1 + b1)
    d1 = one - h1 * h1
    t1 = d1 * w1
    h2 = np.tanh(h1 @ w2 + b2)
    d2 = one - h2 * h2
    s2 = t1 @ w2
    t2 = d2 * s2
    r = t2 @ w3 - np.cos(x)
    # boundary u(0): the same network at x = 0
    h1_0 = np.tanh(b1)
    h2_0 = np.tanh(h1_0 @ w2 + b2)
    u0 = h2_0 @ w3 + b3[0]
    loss = np.mean(r * r) + u0 * u0

    gr = (2.0 / n) * r  # dL/d(du/dx)
    g_w3 = t2.T @ gr
    g_t2 = gr[:, None] * w3
    g_s2 = g_t2 * d2
    g_a2 = g_t2 * s2 * (-2.0 * h2) * d2  # through t2 = (1 − h2²)·s2, then h2 = tanh(a2)
    g_w2 = h1.T @ g_a2 + t1.T @ g_s2
    g_b2 = g_a2.sum(axis=0)
    g_t1 = g_s2 @ w2.T
    g_h1 = g_a2 @ w2.T + g_t1 * w1 * (-2.0 * h1)  # through a2 and through t1 = (1 − h1²)·w1
    g_a1 = g_h1 * d1
    g_w1 = (g_t1 * d1).sum(axis=0) + (xc * g_a1).sum(axis=0)
    g_b1 = g_a1.sum(axis=0)

    gu = 2.0 * u0  # dL/du(0)
    g_w3 = g_w3 + gu * h2_0
    g_b3 = np.reshape(gu, (1,))
    g_a2_0 = gu * w3 * (one - h2_0 * h2_0)
    g_w2 = g_w2 + np.outer(h1_0, g_a2_0)
    g_b2 = g_b2 + g_a2_0
    g_b1 = g_b1 + (w2 @ g_a2_0) * (one - h1_0 * h1_0)
    grad = np.concatenate([g.ravel() for g in (g_w1, g_b1, g_w2, g_b2, g_w3, g_b3)])
    return loss, grad.astype(x.dtype, copy=False)


def pinn_loss(p: Mapping[str, np.ndarray], x: np.ndarray) -> Any:
    """The PINN loss alone (finite-difference checks of the gradient use it)."""
    return pinn_loss_and_grad(p, x)[0]


class Autodiff(KernelSpec):
    name = "autodiff"
    order = 90
    bound = "compute"
    ceiling = "none"
    unit = "GB/s"
    report_class = "automatic differentiation"
    target_pct = 0
    description = "Rosenbrock gradient descent and a PINN loss gradient by autodiff"
    size_meaning = "rosenbrock: dimension d; pinn: collocation points N"
    variants = ("rosenbrock", "pinn")
    dtypes = ("float32", "float64")
    default_sizes = (256, 4096, 65536)
    #: rosenbrock: steps per call and their step size; pinn: hidden width H
    default_params: Mapping[str, Any] = {"steps": 10, "lr": 1e-4, "hidden": 32}
    #: floors; tolerance() raises them with N for the pinn (its gradient sums over N)
    tolerances: Mapping[str, float] = {"float32": 1e-5, "float64": 1e-12}

    def tolerance(self, case: Case) -> float:
        """rosenbrock: the floor; pinn: ``max(floor, 4·sqrt(N)·u)``, u the unit roundoff.

        Largest errors seen on the CPU (NumPy, JAX, PyTorch; sizes 256 to 65536):
        rosenbrock float32 1.0e-7 and float64 1.3e-16 at every d (each coordinate is
        computed independently); pinn float32 2.3e-7 (JAX, PyTorch) but 7.0e-6 for
        NumPy at N = 65536, whose float32 BLAS sums the N terms of each parameter's
        gradient sequentially (error ~ sqrt(N)·u), and float64 1.1e-14 (PyTorch at
        N = 65536). The bound 4·sqrt(N)·u (6.1e-5 and 1.1e-13 at N = 65536) leaves 4-10x
        headroom over that; a gradient that drops the du/dx term, or takes du/dx with
        respect to the parameters, is off by O(1).
        """
        floor = float(self.tolerances[case.dtype])
        if case.variant == "rosenbrock":
            return floor
        unit_roundoff = {"float32": 2.0**-24, "float64": 2.0**-53}[case.dtype]
        return max(floor, 4.0 * math.sqrt(case.size) * unit_roundoff)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if case.variant == "rosenbrock":
            if case.size < 2:
                raise ValueError("rosenbrock needs dimension >= 2")
            return {"x0": rng.uniform(X0_LOW, X0_HIGH, case.size).astype(case.dtype)}
        h = int(case.params.get("hidden", self.default_params["hidden"]))
        shapes = pinn_shapes(h)
        streams = rng.spawn(len(shapes) + 1)  # one independent stream per array
        std = {"w1": 1.0, "b1": 0.1, "w2": 1.0 / math.sqrt(h), "b2": 0.1,
               "w3": 1.0 / math.sqrt(h), "b3": 0.1}
        inputs = {"x": streams[0].uniform(0.0, 2.0 * math.pi, case.size).astype(case.dtype)}
        for stream, (name, shape) in zip(streams[1:], shapes.items(), strict=True):
            inputs[name] = (std[name] * stream.standard_normal(shape)).astype(case.dtype)
        return inputs

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> Any:
        if case.variant == "rosenbrock":
            x0 = inputs["x0"].astype(np.float64)
            steps, lr = self._descent_params(case)
            return {"x0": x0, "x": rosenbrock_descent(x0, steps, lr)}
        p = {k: inputs[k].astype(np.float64) for k in PINN_PARAMS}
        return pinn_loss_and_grad(p, inputs["x"].astype(np.float64))[1]

    def _descent_params(self, case: Case) -> tuple[int, float]:
        merged = {**self.default_params, **case.params}
        return int(merged["steps"]), float(merged["lr"])

    def bytes_moved(self, case: Case) -> float:
        """Inputs read once and the result written once (no intermediate traffic)."""
        isz = itemsize(case.dtype)
        if case.variant == "rosenbrock":
            return 2.0 * case.size * isz
        h = int(case.params.get("hidden", self.default_params["hidden"]))
        return float((case.size + 2 * pinn_param_count(h)) * isz)

    def flops(self, case: Case) -> float:
        """pinn: 12·N·H², the six N×H×H matrix products of the forward, tangent and
        backward passes (elementwise work and tanh not counted); rosenbrock: 0, not
        counted (compare rows by time per call: ``steps`` gradient steps)."""
        if case.variant == "rosenbrock":
            return 0.0
        h = int(case.params.get("hidden", self.default_params["hidden"]))
        return 12.0 * case.size * h * h

    def memory_bytes(self, case: Case) -> float:
        """~20 N×H activations and their gradients (pinn), ~10 d-vectors (rosenbrock),
        for the implementation and again in float64 for the reference."""
        isz = itemsize(case.dtype) + 8
        if case.variant == "rosenbrock":
            return 10.0 * case.size * isz
        h = int(case.params.get("hidden", self.default_params["hidden"]))
        return 20.0 * case.size * h * isz + 4.0 * pinn_param_count(h) * isz

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """pinn: relative 2-norm error of the gradient. rosenbrock: of the displacement
        x − x₀ (what the gradient steps produced; x₀ itself carries no information)."""
        if case.variant == "pinn":
            return super().check(case, result, ref)
        out = np.asarray(result)
        if out.shape != ref["x"].shape:
            tol = self.tolerance(case)
            return Check(math.nan, tol, False, f"shape {out.shape} != expected {ref['x'].shape}")
        return super().check(case, out.astype(np.float64) - ref["x0"], ref["x"] - ref["x0"])


SPEC = Autodiff()
