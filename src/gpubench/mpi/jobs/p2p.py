"""The p2p job: ping-pong between ranks 0 and 1 (host, direct, staged or NCCL)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import AgreedError, Context, result


@mpi_job(order=60, size_meaning="message bytes", buffers=True, message=True, dtype="uint8",
         min_ranks=2,
         defaults={"min_bytes": 1, "max_bytes": 1 << 20})
def job_p2p(ctx: Context) -> dict[str, Any] | None:
    """Ping-pong between ranks 0 and 1 (osu_latency / osu_bw style): one sample is a
    round trip; latency is half of it, bandwidth the message over that half."""
    nbytes, path = int(ctx.item["size"]), ctx.item["path"]
    nccl_mode = ctx.item.get("mode") == "nccl"
    ad, comm = ctx.ad, ctx.comm
    if ctx.size < 2:
        raise AgreedError("p2p needs 2 ranks")
    pattern = ctx.common_rng(5).integers(0, 255, nbytes, dtype=np.uint8)

    def setup() -> dict[str, Any]:
        st: dict[str, Any] = {"host": np.zeros(nbytes, np.uint8)}
        if ctx.rank == 0:
            st["host"][...] = pattern
        if path != "host" and ctx.rank < 2:
            st["dev"] = ad.to_device(st["host"])
        if nccl_mode:  # collective: every rank joins the communicator
            st["nccl"] = ad.multi.nccl_communicator(ctx)
        return st

    st = ctx.guarded(setup)
    peer = 1 - ctx.rank
    host = st["host"]

    def ping() -> None:
        if ctx.rank > 1:
            return
        first = ctx.rank == 0
        for turn in (0, 1):
            sending = (turn == 0) == first
            if nccl_mode:
                ad.multi.nccl_send_recv(st["nccl"], st["dev"], peer, sending)
            elif path == "host":
                comm.Send(host, dest=peer) if sending else comm.Recv(host, source=peer)
            elif path == "direct":
                if sending:
                    comm.Send(st["dev"], dest=peer)
                else:
                    comm.Recv(st["dev"], source=peer)
            elif sending:
                ad.download(st["dev"], host)
                comm.Send(host, dest=peer)
            else:
                comm.Recv(host, source=peer)
                st["dev"] = ad.upload(host, st["dev"])
        if path != "host":
            ad.block(st["dev"])

    ping()
    ok = True
    if ctx.rank == 0:
        back = host if path == "host" else ad.to_host(st["dev"])
        ok = bool(np.array_equal(back, pattern))
    samples = ctx.timed(lambda: ctx.split.comm(ping))  # nothing to compute: all message
    if ctx.rank:
        return None
    res = result(samples, rel_err=0.0 if ok else 1.0, tolerance=0.0)
    half = res["median_s"] / 2
    res["latency_us"] = half * 1e6
    res["gbps"] = nbytes / half / 1e9
    if not ok:
        res["reason"] = "the echoed message differs from the one sent"
    return res
