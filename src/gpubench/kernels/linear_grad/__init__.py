"""linear_grad: the gradient-averaging job's local gradient (:mod:`gpubench.mpi.jobs.
grad_avg`): of ``sum((x W^T + b - y)^2)`` for the flat parameters ``p = [W (O*F), b (O)]``,
flattened the same way (the linear model of the workshop book's §9.8.2).

A kernel of no single-device case (:attr:`~gpubench.spec.KernelSpec.suite` false): what
an MPI rank computes before the gradients are averaged, one implementation per
framework, built through :meth:`~gpubench.backends.base.Backend.build_kernel`. The job
checks the averaged gradient against a float64 NumPy reference. The builder returns the
operation ``(p, x, y) -> gradient`` (a new array).
"""

from __future__ import annotations

from typing import Any

from gpubench.spec import KernelSpec


class LinearGrad(KernelSpec):
    name = "linear_grad"
    suite = False
    description = "the gradient of a linear model's squared error, flattened"
    size_meaning = "batch rows"
    dtypes = ("float32", "float64")


SPEC = LinearGrad()


def array_grad(xp: Any, p: Any, x: Any, y: Any) -> Any:
    """The gradient as array expressions of the array module ``xp`` (NumPy, CuPy)."""
    outs, feats = y.shape[1], x.shape[1]
    w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
    r = x @ w.T + b - y
    return xp.concatenate([(2 * (r.T @ x)).ravel(), 2 * r.sum(axis=0)])
