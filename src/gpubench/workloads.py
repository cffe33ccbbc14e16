"""Workload classes: the groups of kernels the verdicts rank, one record each.

Each kernel names its class by key (:attr:`gpubench.spec.KernelSpec.report_class`);
everything else the report and the harness need to know about a class stands in its
record here: the title the report shows, the measured ceiling that bounds it, and the
views it appears in. A key never equals a kernel's name (the ``elementwise`` kernel is
one of the ``elementwise work`` class's kernels), so a name in the code says which of the
two it means; the title may repeat a kernel's name, it is only shown.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkloadClass:
    """One workload class and where it appears."""

    #: what the kernels' ``report_class`` and the code name it by
    key: str
    #: what the report shows
    title: str
    #: the measured ceiling that bounds its GPU work, as :data:`gpubench.spec.CEILINGS`
    #: names them: "copy" (the device copy), "gemm" (SGEMM/DGEMM), "link" (the pinned
    #: host link); '' none
    bound: str = ""
    #: its case is the one the overview figure plots (the first such class with rows;
    #: the next ones are the fallbacks, in this module's order)
    overview: bool = False
    #: a column of the compact matrix
    compact: bool = False
    #: its small band is part of the small-arrays class (where fixed costs rule)
    small: bool = False
    #: its rows record ``matmul_precision``: its work is matrix products
    precision: bool = False
    #: its CPU/GPU crossover is the one the matrix, the headline and the claims report
    crossover: bool = False


#: the matrix products of a library GEMM: the class the comparison of two runs names on
#: its own, apart from the other GEMM-bound classes
GEMM = WorkloadClass("GEMM", "GEMM", "gemm", compact=True, precision=True)
#: the classes kernels declare, in the report's order
KERNEL_CLASSES: tuple[WorkloadClass, ...] = (
    WorkloadClass("elementwise work", "elementwise", "copy", overview=True, compact=True,
                  small=True, crossover=True),
    WorkloadClass("reductions", "reductions", "copy", overview=True, compact=True,
                  small=True),
    WorkloadClass("FFT", "FFT", "copy"),
    WorkloadClass("random numbers", "random numbers", "copy"),
    GEMM,
    WorkloadClass("linear algebra", "linalg", "gemm", precision=True),
    WorkloadClass("automatic differentiation", "autodiff", "gemm"),
)
#: the small band of the :attr:`~WorkloadClass.small` classes, ranked as one class
SMALL_ARRAYS = WorkloadClass("small arrays", "small arrays", compact=True)
#: the rows a host link bounds (the link kernel and every ``+transfers``
#: implementation), a class of the comparison of two runs
HOST_TRANSFERS = WorkloadClass("host-device transfers", "host-device transfers", "link")
#: every record: the kernels' classes, then the two made of other classes' rows
WORKLOAD_CLASSES: tuple[WorkloadClass, ...] = (*KERNEL_CLASSES, SMALL_ARRAYS,
                                               HOST_TRANSFERS)
_BY_KEY = {c.key: c for c in WORKLOAD_CLASSES}


def workload_class(key: str) -> WorkloadClass:
    """The record of a class key; a plugin's class without a record reads as one titled
    by its key, bound by no ceiling and in no special view."""
    return _BY_KEY.get(key) or WorkloadClass(key, key)


def crossover_class() -> str:
    """The key of the class whose CPU/GPU crossover the report quotes."""
    return next(c.key for c in WORKLOAD_CLASSES if c.crossover)


def class_title(key: str) -> str:
    """What the report shows for a class key."""
    return workload_class(key).title
