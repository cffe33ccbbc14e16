"""axpy: the gradient-averaging job's update ``p - scale g`` (:mod:`gpubench.mpi.jobs.
grad_avg`), into a new array.

A kernel of no single-device case (:attr:`~gpubench.spec.KernelSpec.suite` false): what
an MPI rank computes after the gradients are averaged, one implementation per framework,
built through :meth:`~gpubench.backends.base.Backend.build_kernel`. The builder returns
the operation ``(p, g, scale) -> new p``.
"""

from __future__ import annotations

from gpubench.spec import KernelSpec


class Axpy(KernelSpec):
    name = "axpy"
    suite = False
    description = "p - scale g, a parameter update"
    dtypes = ("float32", "float64")


SPEC = Axpy()
