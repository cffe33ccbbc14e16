"""The reduction job: each rank's sum of squares, then an MPI sum of the partial sums."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.kernels.reduction import SPEC as REDUCTION
from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context, rel_err, result, split, tolerance


@mpi_job(order=10, size_meaning="global elements", scaling="strong", kernel=REDUCTION,
         defaults={"sizes": [1 << 20], "dtype": "float32"})
def job_reduction(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.6.1, §9.7.1, §9.8.1, §9.9.1: local sum of squares on each
    device, then an MPI reduction of the partial sums (a host scalar, as the book does)."""
    n, dtype = int(ctx.item["size"]), ctx.item["dtype"]
    _start, count = split(n, ctx.size, ctx.rank)

    def setup() -> tuple[Any, float]:
        host = ctx.rng(1).standard_normal(count).astype(dtype)
        sumsq = ctx.ad.build_kernel(REDUCTION.name, "sumsq", count, dtype,
                                    {"a": ctx.ad.to_device(host)})
        sumsq()  # compile / first call outside the timed loop
        return sumsq, float(np.dot(host.astype(np.float64), host.astype(np.float64)))

    sumsq, ref_local = ctx.guarded(setup)
    send = np.zeros(1, np.float64)
    recv = np.zeros(1, np.float64)

    sp = ctx.split

    def step() -> None:
        # on the host: the device has finished
        send[0] = sp.compute(lambda: float(ctx.ad.to_host(sumsq())))
        sp.comm(lambda: ctx.comm.Allreduce(send, recv, op=ctx.mpi.SUM))

    step()
    ref = ctx.comm.allreduce(ref_local, op=ctx.mpi.SUM)
    err = rel_err(recv[0], ref)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    res = result(samples, rel_err=err, tolerance=tolerance(dtype, n))
    res["gbps"] = n * np.dtype(dtype).itemsize / res["median_s"] / 1e9
    return res
