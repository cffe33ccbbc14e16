"""The peer_copy job: the link between two GPUs of one host, measured where the ranks run."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context, one_process_samples, result


@mpi_job(order=85, size_meaning="message bytes", message=True, single_process=True,
         needs="peer_copy", min_ranks=2, dtype="uint8", link_reference=True,
         defaults={"min_bytes": 1, "max_bytes": 1 << 20})
def job_peer_copy(ctx: Context) -> dict[str, Any] | None:
    """The link between two GPUs of one host, measured where the ranks run: one process
    copies a buffer from one GPU to another (``cudaMemcpyPeerAsync``, peer access
    enabled both ways, so the copy engines move it over NVLink where the GPUs have it),
    one direction per row (``mode`` ``0->1``, ``1->0``, ...). A sample is one copy on
    the caller's clock (host clock, stream synchronised), the clock the p2p ping-pong
    is timed on. The largest message's rate is the reference the device-buffer p2p and
    allreduce rows are compared with (``link_ref_gbps``), beside the datasheet's
    ``link_gbps``."""
    nbytes = int(ctx.item["size"])
    src, dst = (int(x) for x in str(ctx.item["mode"]).split("->"))
    pattern = ctx.common_rng(9).integers(0, 255, nbytes, dtype=np.uint8)
    copy, received, peer = ctx.ad.multi.peer_copy_setup(src, dst, pattern)
    copy()
    same = received()
    samples = one_process_samples(ctx, copy)
    res = result(samples, rel_err=0.0 if same else 1.0, tolerance=0.0)
    res["latency_us"] = res["median_s"] * 1e6
    res["gbps"] = nbytes / res["median_s"] / 1e9
    if not same:
        res["reason"] = "the copy on the other GPU differs from the buffer sent"
    elif not peer:
        res.update(status="skipped", reason=f"GPUs {src} and {dst} cannot access each "
                   "other's memory (no peer access): the copy goes through host memory "
                   "and is no link reference")
    return res
