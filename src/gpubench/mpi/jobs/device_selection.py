"""The device_selection job: one strategy of picking a rank's GPU, checked on every rank."""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context, result


@mpi_job(order=0, size_meaning="n/a")
def job_device_selection(ctx: Context) -> dict[str, Any] | None:
    """Evaluate one strategy of the workshop book's §9.4 on every rank; the GPUs must all differ."""
    from gpubench.backends.cuda_common import nvml_uuid
    from gpubench.mpi import devices

    strategy = ctx.item["mode"]
    n_gpus = int(ctx.extra.get("n_gpus", 0))
    gpu = ctx.ad.device == "gpu"
    t0 = time.perf_counter()
    try:
        shared = ctx.comm.Split_type(ctx.mpi.COMM_TYPE_SHARED).Get_rank()
        env = dict(ctx.extra.get("launch_env") or os.environ)
        sel = devices.select(strategy, ctx.rank, n_gpus if gpu else (os.cpu_count() or 1),
                             env, shared_local_rank=shared)
        ident = nvml_uuid(sel.physical) if gpu else ""
        # an index names a device of one node only: host-qualified, ranks on different
        # nodes never share it, and the row shows each node's answer (node2:gpu0)
        ident = ident or (f"{socket.gethostname()}:gpu{sel.physical}" if gpu
                          else f"{socket.gethostname()}:cpu-slot{sel.physical}")
        err = ""
    except devices.DeviceSelectionError as exc:
        ident, err = "", str(exc)
    idents = ctx.comm.allgather(ident)
    errors = [e for e in ctx.comm.allgather(err) if e]
    dt = ctx.comm.allreduce(time.perf_counter() - t0, op=ctx.mpi.MAX)
    if ctx.rank:
        return None
    if errors:
        return {"status": "skipped", "reason": errors[0]}
    res = result([max(dt, 1e-9)], rel_err=0.0, tolerance=0.0)
    res["gpu_uuids"] = ";".join(idents) if gpu else ""
    shared_msg = devices.sharing_error(idents, False)
    if shared_msg:
        allowed = ctx.extra.get("oversubscribe", False)
        res.update(status="ok" if allowed else "error",
                   reason=("allowed by mpi.oversubscribe: " if allowed else "") + shared_msg)
        if allowed:
            res["reason"] = ""
    return res
