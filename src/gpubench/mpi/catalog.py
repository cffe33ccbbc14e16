"""The MPI jobs' facts, each job's stated once: on its function in its module
``gpubench/mpi/jobs/<name>.py`` (``@mpi_job(...)``), its name the function's
(``job_<name>``).

Everything that lists jobs or asks what a job is (the step's plan and skips, the scaling
columns, the report's curves, the workflow's job list) reads these facts through
:func:`gpubench.mpi.catalog_of_jobs`, never a list of names of its own. This module
imports nothing: the facts are plain data, the jobs' modules only need NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

#: how a job's rows scale with ranks: the global size fixed (``strong``), the item's
#: mode says (``by_mode``: ``strong`` or ``weak``), or no scaling curve (``""``)
SCALING = ("strong", "by_mode", "")


@dataclass(frozen=True)
class MpiJob:
    """One MPI job and what the step, the scaling columns and the report need to know."""

    name: str
    #: place in the report and the workflow (lower first)
    order: int
    #: what ``size`` counts (``""``: the item's mode says; halo: cells per rank or global)
    size_meaning: str
    #: defaults of the ``mpi.jobs.<job>`` keys
    defaults: Mapping[str, Any]
    #: the rank-0 function (Context -> fields of the row, or None on other ranks)
    run: Callable[..., Any]
    #: device buffers travel through MPI (so there are ``direct`` and ``staged`` paths)
    buffers: bool = False
    #: sizes are message bytes swept in powers of two (``min_bytes``..``max_bytes``) and
    #: host buffers on the same ranks are measured too, as the baseline
    message: bool = False
    #: see :data:`SCALING`
    scaling: str = ""
    #: one process drives several devices (no launcher, no ranks)
    single_process: bool = False
    #: the dtype every item runs in, whatever the config says (``""``: the config's)
    dtype: str = ""
    #: each rank needs at least one row of the problem (size >= ranks)
    row_per_rank: bool = False
    #: the kernel whose implementation computes the local part (its spec), if any
    kernel: Any = None
    #: the Backend fact a backend must have (truthy) for the job to run on it: ``mpi``
    #: (its ranks run the jobs), ``multi_device`` (one process drives several devices)
    #: or ``peer_copy``
    needs: str = "mpi"
    #: fewest ranks (or devices) the job means anything at (p2p: a pair)
    min_ranks: int = 1
    #: the blocking job this one overlaps with computation (halo_overlap: ``halo``): its
    #: rows get ``hidden_s`` from that job's rows, and the report sets the two side by side
    overlaps: str = ""
    #: its rows are the link between GPUs measured on the host, which the device-buffer
    #: messages between ranks are read against (``link_ref_gbps``; peer_copy)
    link_reference: bool = False
    #: the column of its rows read against the link (allreduce: ``bus_gbps``, the
    #: nccl-tests convention)
    link_rate: str = "gbps"


_registered: dict[str, MpiJob] = {}


def mpi_job(*, order: int, size_meaning: str, defaults: Mapping[str, Any] | None = None,
            **facts: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated ``job_<name>`` function an MPI job with these facts."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = fn.__name__.removeprefix("job_")
        job = MpiJob(name=name, order=order, size_meaning=size_meaning,
                     defaults=MappingProxyType(dict(defaults or {})), run=fn, **facts)
        if job.scaling not in SCALING:
            raise ValueError(f"MPI job {name}: scaling {job.scaling!r} not one of {SCALING}")
        if job.kernel is not None and job.kernel.name != name:
            raise ValueError(f"MPI job {name} computes with kernel {job.kernel.name}: "
                             "name the function after the kernel")
        _registered[name] = job
        return fn

    return register


def registered() -> dict[str, MpiJob]:
    """The jobs declared so far, in :attr:`MpiJob.order`."""
    return {j.name: j for j in sorted(_registered.values(), key=lambda j: (j.order, j.name))}
