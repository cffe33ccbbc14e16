"""The halo_overlap job: the halo job's exchange overlapped with the interior's stencil."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.kernels.stencil import SPEC as STENCIL
from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context
from gpubench.mpi.jobs.halo import HALO_ALPHA, finished, run_halo


def halo_post(ctx: Context, u: Any, n: int, path: str,
              bufs: dict[str, np.ndarray]) -> list[Any]:
    """The same exchange as :func:`~gpubench.mpi.jobs.halo.halo_exchange`, posted and
    not waited for (the workshop book's §9.10.2): ``Irecv`` into the ghosts, ``Isend`` of
    the edge cells. Returns the requests; the ghosts are valid after :func:`halo_finish`."""
    ad, comm = ctx.ad, ctx.comm
    left, right = (ctx.rank - 1) % ctx.size, (ctx.rank + 1) % ctx.size
    if path in ("direct", "host"):
        ad.block(u)
        return [comm.Irecv(ad.view(u, 0, 1), source=left, tag=1),
                comm.Irecv(ad.view(u, n + 1, n + 2), source=right, tag=2),
                comm.Isend(ad.view(u, n, n + 1), dest=right, tag=1),
                comm.Isend(ad.view(u, 1, 2), dest=left, tag=2)]
    ctx.operations(STENCIL, u.dtype)["edges"](u, n, bufs["sr"], bufs["sl"])
    return [comm.Irecv(bufs["rl"], source=left, tag=1),
            comm.Irecv(bufs["rr"], source=right, tag=2),
            comm.Isend(bufs["sr"], dest=right, tag=1),
            comm.Isend(bufs["sl"], dest=left, tag=2)]


def halo_finish(ctx: Context, u: Any, path: str, bufs: dict[str, np.ndarray],
                requests: list[Any]) -> Any:
    """Wait for :func:`halo_post`'s messages; staged: write the ghosts to the device."""
    ctx.mpi.Request.Waitall(requests)
    if path in ("direct", "host"):
        return u
    return ctx.operations(STENCIL, u.dtype)["ghosts"](u, bufs["rl"], bufs["rr"])



def halo_overlap_step(ctx: Context, u: Any, out: Any, n: int, path: str,
                      bufs: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """One step of the halo_overlap job: post the exchange, compute cells 2..n-1 (they
    need no ghost) while the messages fly, wait, then compute cells 1 and n. The same
    cells by the same formula as :func:`~gpubench.mpi.jobs.halo.halo_blocking_step`, so
    the same answer."""
    ad, sp = ctx.ad, ctx.split
    cells = ctx.operations(STENCIL, u.dtype)["cells"]
    requests = sp.comm(lambda: halo_post(ctx, u, n, path, bufs))
    if n > 2:
        out = sp.compute(lambda: finished(ad, cells(u, out, HALO_ALPHA, 2, n)))
    u = sp.comm(lambda: halo_finish(ctx, u, path, bufs, requests))

    def edges() -> Any:
        new = cells(u, out, HALO_ALPHA, 1, 2)
        if n > 1:
            new = cells(u, new, HALO_ALPHA, n, n + 1)
        return finished(ad, new)

    return sp.compute(edges), u


@mpi_job(order=55, size_meaning="", scaling="by_mode", buffers=True, overlaps="halo",
         defaults={"sizes": [1 << 16], "dtype": "float64", "steps": 100,
                   "scaling": ["strong", "weak"]})
def job_halo_overlap(ctx: Context) -> dict[str, Any] | None:
    """The halo job with its exchange overlapped (the workshop book's §9.10.2):
    ``Isend``/``Irecv`` posted, the interior computed while the messages fly,
    ``Waitall``, then the two boundary cells. Checked against the float64 reference and
    against the blocking exchange's answer."""
    return run_halo(ctx, halo_overlap_step,
                    prepare=lambda u, out: ctx.ad.block(
                        ctx.operations(STENCIL, u.dtype)["cells"](u, out, HALO_ALPHA, 1, 2)))
