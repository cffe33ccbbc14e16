"""stencil: the halo jobs' explicit heat-equation step on a slab of n cells with one
ghost cell each side, and the ghost cells' way in and out (:mod:`gpubench.mpi.jobs.halo`,
:mod:`gpubench.mpi.jobs.halo_overlap`).

A kernel of no single-device case (:attr:`~gpubench.spec.KernelSpec.suite` false): what
an MPI rank computes between its messages, one implementation per framework, built
through :meth:`~gpubench.backends.base.Backend.build_kernel` as the reduction and matmul
jobs build theirs. The jobs check the result against a float64 NumPy reference. Each
variant's builder returns an operation with arguments (the state is passed back and
forth between two buffers), which returns the new state:

- ``interior`` ``(u, out, alpha)``: ``out[i] = u[i] + alpha (u[i-1] - 2 u[i] + u[i+1])``
  for the interior ``i = 1..n`` (``u`` and ``out`` hold n + 2 cells);
- ``cells`` ``(u, out, alpha, start, stop)``: the same of cells ``start..stop-1`` only
  (1 <= start < stop <= n): the overlapped job computes the interior while the ghosts
  are in flight, then the edge cells;
- ``ghosts`` ``(u, left, right)``: the two ghost cells written from host buffers;
- ``edges`` ``(u, n, last, first)``: the last and the first interior cell into host
  buffers (returns None).

The functions below are these operations written against the adapter's
:meth:`~gpubench.backends.base.Backend.view`, ``upload`` and ``download``: the
implementations of frameworks whose arrays take views in place share them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import KernelSpec

#: one operation of an implementation, by variant
Operation = Callable[..., Any]


class Stencil(KernelSpec):
    name = "stencil"
    suite = False
    description = "the halo jobs' 3-point heat-equation step on a slab with ghost cells"
    size_meaning = "cells"
    variants = ("interior", "cells", "ghosts", "edges")
    dtypes = ("float32", "float64")


SPEC = Stencil()


def array_interior(u: Any, out: Any, alpha: float) -> Any:
    """The interior step as array expressions (NumPy, CuPy: any array taking slices)."""
    out[1:-1] = u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
    return out


def by_views(backend: Any, interior: Operation) -> dict[str, Operation]:
    """The ``cells``, ``ghosts`` and ``edges`` operations from an ``interior`` one and the
    backend's views: cells start..stop-1 are the interior of the view one cell wider
    each side, so the same code computes each cell as the whole step does."""
    view = backend.view

    def cells(u: Any, out: Any, alpha: float, start: int, stop: int) -> Any:
        interior(view(u, start - 1, stop + 1), view(out, start - 1, stop + 1), alpha)
        return out

    def ghosts(u: Any, left: np.ndarray, right: np.ndarray) -> Any:
        backend.upload(left, view(u, 0, 1))
        backend.upload(right, view(u, u.shape[0] - 1, u.shape[0]))
        return u

    def edges(u: Any, n: int, last: np.ndarray, first: np.ndarray) -> None:
        backend.download(view(u, n, n + 1), last)
        backend.download(view(u, 1, 2), first)

    return {"interior": interior, "cells": cells, "ghosts": ghosts, "edges": edges}
