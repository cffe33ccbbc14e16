"""The halo job: a 1D heat-equation stencil over ranks, one ghost cell a side
(and what the overlapped version, :mod:`gpubench.mpi.jobs.halo_overlap`, shares)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.stencil import SPEC as STENCIL
from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context, counts, rel_err, result, split, tolerance

HALO_ALPHA = 0.25


def halo_exchange(ctx: Context, u: Any, n: int, path: str, bufs: dict[str, np.ndarray]) -> Any:
    """The workshop book's §9.11.1 on a periodic ring: the last interior cell goes right
    into the right neighbour's left ghost, the first goes left; two Sendrecv calls."""
    ad, comm = ctx.ad, ctx.comm
    left, right = (ctx.rank - 1) % ctx.size, (ctx.rank + 1) % ctx.size
    if path in ("direct", "host"):
        ad.block(u)
        comm.Sendrecv(ad.view(u, n, n + 1), dest=right, sendtag=1,
                      recvbuf=ad.view(u, 0, 1), source=left, recvtag=1)
        comm.Sendrecv(ad.view(u, 1, 2), dest=left, sendtag=2,
                      recvbuf=ad.view(u, n + 1, n + 2), source=right, recvtag=2)
        return u
    ops = ctx.operations(STENCIL, u.dtype)
    ops["edges"](u, n, bufs["sr"], bufs["sl"])
    comm.Sendrecv(bufs["sr"], dest=right, sendtag=1, recvbuf=bufs["rl"], source=left,
                  recvtag=1)
    comm.Sendrecv(bufs["sl"], dest=left, sendtag=2, recvbuf=bufs["rr"], source=right,
                  recvtag=2)
    return ops["ghosts"](u, bufs["rl"], bufs["rr"])


def halo_error(ctx: Context, u0: np.ndarray, out: np.ndarray, k: int) -> float:
    """Global relative error of ``k`` stencil steps on the periodic ring, every rank
    checking its own cells in parallel.

    After k steps a cell depends on the k cells each side of it, so a rank needs only
    the k edge cells of each neighbour's initial data: it steps its slab widened by
    them in float64, shrinking by one cell a side per step, and what is left is exact
    for its own cells. Gathering the whole domain on rank 0 instead cost 10 s and more
    per item at 2**26 cells a rank (2**28 cells and np.roll copies on one core).
    """
    comm = ctx.comm
    left, right = (ctx.rank - 1) % ctx.size, (ctx.rank + 1) % ctx.size
    if min(comm.allgather(len(u0))) < k:  # slabs thinner than the stencil's reach
        parts, ref_parts = comm.allgather(out), comm.allgather(u0)
        ref = np.concatenate(ref_parts).astype(np.float64)
        for _ in range(k):
            ref = ref + HALO_ALPHA * (np.roll(ref, 1) - 2 * ref + np.roll(ref, -1))
        return rel_err(np.concatenate(parts), ref)
    from_left = comm.sendrecv(u0[-k:], dest=right, sendtag=11, source=left, recvtag=11)
    from_right = comm.sendrecv(u0[:k], dest=left, sendtag=12, source=right, recvtag=12)
    ref = np.concatenate([from_left, u0, from_right]).astype(np.float64)
    for _ in range(k):
        ref = ref[1:-1] + HALO_ALPHA * (ref[:-2] - 2 * ref[1:-1] + ref[2:])
    diff = out.astype(np.float64) - ref
    num = comm.allreduce(float(np.dot(diff, diff)))
    den = comm.allreduce(float(np.dot(ref, ref)))
    return math.sqrt(num) / (math.sqrt(den) or 1.0)


def finished(ad: Any, value: Any) -> Any:
    """``value`` once the device has computed it (the compute share ends there)."""
    ad.block(value)
    return value


def halo_blocking_step(ctx: Context, u: Any, out: Any, n: int, path: str,
                       bufs: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """One step of the halo job: exchange (two ``Sendrecv``), then the whole stencil.
    Returns (new state, the buffer the next step writes into)."""
    ad, sp = ctx.ad, ctx.split
    u = sp.comm(lambda: halo_exchange(ctx, u, n, path, bufs))
    stencil = ctx.operations(STENCIL, u.dtype)["interior"]
    out = sp.compute(lambda: finished(ad, stencil(u, out, HALO_ALPHA)))
    return out, u


#: one step of a halo job: (ctx, state, the buffer it writes into, cells, path, host
#: buffers) -> (new state, the buffer the next step writes into)
HaloStep = Callable[[Context, Any, Any, int, str, dict[str, np.ndarray]], tuple[Any, Any]]


def run_halo(ctx: Context, take: HaloStep, prepare: Callable[[Any, Any], None] | None = None
             ) -> dict[str, Any] | None:
    """The halo and halo_overlap jobs: the same domain, data, check and timing; only the
    step differs (:func:`halo_blocking_step` or the overlapped one of
    :mod:`gpubench.mpi.jobs.halo_overlap`, then also checked against the blocking one's
    answer). ``prepare(u, out)``: the step's own first calls, outside the timing."""
    size, dtype, path, mode = (int(ctx.item["size"]), ctx.item["dtype"], ctx.item["path"],
                               ctx.item["mode"])
    steps = int(ctx.item.get("params", {}).get("steps", 100))
    ad = ctx.ad
    n = split(size, ctx.size, ctx.rank)[1] if mode == "strong" else size
    global_n = size if mode == "strong" else size * ctx.size
    local_counts = counts(size, ctx.size) if mode == "strong" else [size] * ctx.size
    bufs = {k: np.zeros(1, dtype) for k in ("sr", "sl", "rl", "rr")}

    def setup() -> dict[str, Any]:
        if n < 1:
            raise ValueError(f"{global_n} cells cannot be split over {ctx.size} ranks")
        u0 = np.zeros(n + 2, dtype)
        u0[1:-1] = ctx.rng(4).random(n).astype(dtype)
        u, out = ad.to_device(u0), ad.to_device(u0)
        ad.block(ctx.operations(STENCIL, u.dtype)["interior"](u, out, HALO_ALPHA))  # compile
        if prepare is not None:
            prepare(u, out)
        return {"u0": u0, "u": u, "out": out}

    st = ctx.guarded(setup)

    def advance(state: dict[str, Any], k: int, step: Callable[..., tuple[Any, Any]]) -> None:
        for _ in range(k):
            state["u"], state["out"] = step(ctx, state["u"], state["out"], n, path, bufs)
        ad.block(state["u"])

    def fresh() -> dict[str, Any]:
        return {"u": ad.to_device(st["u0"]), "out": ad.to_device(st["u0"])}

    overlap = take is not halo_blocking_step
    state = fresh()
    check_steps = min(steps, 10)
    advance(state, check_steps, take)
    interior = np.ascontiguousarray(ad.to_host(state["u"])[1:-1])
    err = halo_error(ctx, st["u0"][1:-1], interior, check_steps)
    apart = 0.0
    if overlap:  # the same answer as the blocking exchange, on the same data
        blocking = fresh()
        advance(blocking, check_steps, halo_blocking_step)
        other = ad.to_host(blocking["u"])[1:-1].astype(np.float64)
        num = ctx.comm.allreduce(float(np.sum((interior - other) ** 2)))
        den = ctx.comm.allreduce(float(np.sum(other ** 2)))
        apart = math.sqrt(num) / (math.sqrt(den) or 1.0)
    samples = ctx.timed(lambda: advance(state, steps, take))
    if ctx.rank:
        return None
    tol = tolerance(dtype, global_n)
    res = result(samples, rel_err=err, tolerance=tol)
    if apart > tol:
        res.update(status="wrong_result",
                   reason=f"the overlapped exchange's answer is {apart:.3g} (relative) "
                          f"from the blocking one's after {check_steps} steps")
    # each step reads and writes every cell once (a 3-point stencil from cache)
    res["gbps"] = 2 * sum(local_counts) * np.dtype(dtype).itemsize * steps / \
        res["median_s"] / 1e9
    return res


@mpi_job(order=50, size_meaning="", scaling="by_mode", buffers=True,
         defaults={"sizes": [1 << 16], "dtype": "float64", "steps": 100,
                   "scaling": ["strong", "weak"]})
def job_halo(ctx: Context) -> dict[str, Any] | None:
    """1D domain decomposition with one ghost cell per side, an explicit heat-equation
    stencil; strong (global size fixed) or weak (size per rank fixed) scaling. Blocking
    exchange: two ``Sendrecv``, then the stencil."""
    return run_halo(ctx, halo_blocking_step)
