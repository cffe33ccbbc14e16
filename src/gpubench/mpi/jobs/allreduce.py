"""The allreduce job: float32 buffers summed over ranks by MPI or NCCL."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Channel, Context, rel_err, result


@mpi_job(order=70, size_meaning="buffer bytes", buffers=True, message=True,
         dtype="float32", link_rate="bus_gbps",
         defaults={"min_bytes": 4, "max_bytes": 1 << 20, "nccl": True})
def job_allreduce(ctx: Context) -> dict[str, Any] | None:
    """Allreduce (sum) of float32 buffers, out of place; algorithm bandwidth and
    nccl-tests bus bandwidth. Mode names the implementation (MPI or NCCL)."""
    nbytes, path, mode = int(ctx.item["size"]), ctx.item["path"], ctx.item["mode"]
    ad = ctx.ad
    count = max(1, nbytes // 4)
    base = ctx.common_rng(6).standard_normal(count).astype(np.float32)
    mine = (base * np.float32(ctx.rank + 1)).astype(np.float32)
    expected = base.astype(np.float64) * ctx.size * (ctx.size + 1) / 2

    def setup() -> dict[str, Any]:
        st: dict[str, Any] = {"hs": mine.copy(), "hr": np.zeros(count, np.float32)}
        if path != "host":
            st["send"] = ad.to_device(mine)
            st["recv"] = ad.to_device(np.zeros(count, np.float32))
        if mode == "nccl":
            st["nccl"] = ad.multi.nccl_allreduce(ctx, st["send"], st["recv"])
        return st

    st = ctx.guarded(setup)
    chan = Channel(ctx, path)
    if mode == "nccl":
        def step() -> None:
            ctx.split.comm(st["nccl"])
    elif path == "host":
        def step() -> None:
            ctx.split.comm(lambda: chan.allreduce(st["hs"], st["hr"]))
    else:
        def exchange() -> None:
            st["recv"] = chan.allreduce(st["send"], st["recv"], st["hs"], st["hr"])
            ad.block(st["recv"])

        def step() -> None:
            ctx.split.comm(exchange)

    step()
    out = st["hr"] if path == "host" else ad.to_host(st["recv"])
    err = rel_err(out, expected)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    from gpubench.mpi.schema import bus_bandwidth

    res = result(samples, rel_err=err, tolerance=1e-6 * max(1, ctx.size))
    res["gbps"] = count * 4 / res["median_s"] / 1e9
    res["bus_gbps"] = bus_bandwidth(res["gbps"], ctx.size)
    return res
