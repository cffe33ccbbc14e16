"""The Monte Carlo pi job: independent streams per rank, hit counts summed with MPI."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.monte_carlo_pi import SPEC as MONTE_CARLO_PI
from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context, result, split


def rank_seed(seed: int, rank: int) -> int:
    """The seed of a rank's generator: hashed from (seed, rank) by SeedSequence, so ranks
    get unrelated streams (never ``seed + rank * 10**6``, docs/kernels.md); 63 bits, which
    every framework's seed argument takes."""
    return int(np.random.SeedSequence([seed, rank]).generate_state(1, np.uint64)[0]) >> 1


@mpi_job(order=30, size_meaning="global samples", scaling="strong", kernel=MONTE_CARLO_PI,
         dtype="float64", defaults={"sizes": [1 << 20]})
def job_monte_carlo_pi(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.7.2 done right: independent streams per rank (and per device thread),
    hit counts summed with MPI."""
    n = int(ctx.item["size"])
    _, count = split(n, ctx.size, ctx.rank)
    send = np.zeros(1, np.int64)
    recv = np.zeros(1, np.int64)
    seed = rank_seed(ctx.seed, ctx.rank)

    def setup() -> Callable[[], Any] | None:
        if not count:
            return None
        pi_local = ctx.ad.build_kernel(MONTE_CARLO_PI.name, "default", count, "float64", {},
                                       seed=seed)
        pi_local()  # compile outside timing
        return pi_local

    pi_local = ctx.guarded(setup)

    def hits() -> int:
        """This rank's points inside the circle, back from the kernel's 4 hits / count."""
        if pi_local is None:
            return 0
        return round(float(ctx.ad.to_host(pi_local())) * count / 4.0)

    sp = ctx.split

    def step() -> None:
        send[0] = sp.compute(hits)
        sp.comm(lambda: ctx.comm.Allreduce(send, recv, op=ctx.mpi.SUM))

    step()
    estimate = 4.0 * float(recv[0]) / n
    sigma = math.sqrt(math.pi * (4 - math.pi) / n)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    res = result(samples, rel_err=abs(estimate - math.pi) / math.pi,
                 tolerance=6 * sigma / math.pi)
    if res["status"] != "ok":
        res["reason"] = f"pi estimate {estimate:.6f} is more than 6 sigma from pi"
    return res
