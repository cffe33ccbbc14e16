"""The MPI jobs of docs/kernels.md, one module each (``<job>.py``, its function
``job_<job>`` decorated with :func:`gpubench.mpi.catalog.mpi_job`), each written once
against the framework's :class:`~gpubench.backends.base.Backend` (the adapter the
single-device rows use too); what they share is :mod:`gpubench.mpi.jobs.common`.

The modules are found by a scan of this package, as kernels and frameworks are: adding
a job is adding its module, and nothing else lists the jobs (the step, the config, the
sweep and the report read :func:`gpubench.mpi.catalog_of_jobs`).

Their local computations are kernels' implementations (``kernels/<kernel>/
with_<framework>.py``, through :meth:`~gpubench.backends.base.Backend.build_kernel`):
the reduction, matmul and Monte Carlo jobs use the single-device suite's kernels; the
halo's stencil and the linear model's gradient and update are kernels that only the
jobs build (:attr:`gpubench.spec.KernelSpec.suite` false).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from gpubench.mpi.catalog import registered
from gpubench.mpi.jobs.common import AgreedError, Context, Settings

__all__ = ["JOB_FUNCTIONS", "SHARED", "AgreedError", "Context", "Settings"]

#: the module every job imports and that declares none
SHARED = "common"


def _scan() -> None:
    """Import every job module of this package (each one's ``@mpi_job`` registers it)."""
    for info in pkgutil.iter_modules(__path__):
        if info.name != SHARED:
            importlib.import_module(f"{__name__}.{info.name}")


_scan()

#: each job's function, by name (its facts: :func:`gpubench.mpi.catalog_of_jobs`)
JOB_FUNCTIONS: dict[str, Callable[[Context], dict[str, Any] | None]] = {
    name: job.run for name, job in registered().items()}
