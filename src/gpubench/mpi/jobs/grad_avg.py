"""The gradient-averaging job: a data-parallel step of a linear model."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.kernels.axpy import SPEC as AXPY
from gpubench.kernels.linear_grad import SPEC as LINEAR_GRAD
from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Channel, Context, rel_err, result, split, tolerance

#: the model of the workshop book's §9.8.2: 100 features, 10 outputs
GRAD_FEATURES = 100
GRAD_OUTPUTS = 10


@mpi_job(order=40, size_meaning="global batch rows", scaling="strong", buffers=True,
         defaults={"sizes": [4096], "dtype": "float32"})
def job_grad_avg(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.8.2: data-parallel step of a linear model; local gradients
    averaged with one Allreduce of the flattened gradient, then the same update on every
    rank."""
    n, dtype, path = int(ctx.item["size"]), ctx.item["dtype"], ctx.item["path"]
    ad = ctx.ad
    _, rows = split(n, ctx.size, ctx.rank)
    f_, o_ = GRAD_FEATURES, GRAD_OUTPUTS
    nparams = o_ * f_ + o_
    lr = 1e-3

    def setup() -> dict[str, Any]:
        rng = ctx.rng(3)
        x = rng.standard_normal((rows, f_)).astype(dtype)
        y = rng.standard_normal((rows, o_)).astype(dtype)
        p0 = (0.1 * ctx.common_rng(3).standard_normal(nparams)).astype(dtype)
        st = {"x": ad.to_device(x), "y": ad.to_device(y), "p0": p0, "hx": x, "hy": y,
              "recv": ad.to_device(np.zeros(nparams, dtype)),
              "hs": np.zeros(nparams, dtype), "hr": np.zeros(nparams, dtype)}
        st["gradient"] = ctx.operations(LINEAR_GRAD, dtype)["default"]
        st["update"] = ctx.operations(AXPY, dtype)["default"]
        ad.block(st["gradient"](ad.to_device(p0), st["x"], st["y"]))  # compile
        return st

    st = ctx.guarded(setup)
    chan = Channel(ctx, path)
    state = {"p": ad.to_device(st["p0"])}

    def averaged_grad(p: Any) -> Any:
        g = st["gradient"](p, st["x"], st["y"])
        return chan.allreduce(g, st["recv"], st["hs"], st["hr"])

    # check: the averaged gradient at p0 equals the full-batch gradient (float64)
    total = ad.to_host(averaged_grad(state["p"])).astype(np.float64) / n
    w = st["p0"][:o_ * f_].reshape(o_, f_).astype(np.float64)
    b = st["p0"][o_ * f_:].astype(np.float64)
    r = st["hx"].astype(np.float64) @ w.T + b - st["hy"].astype(np.float64)
    local_ref = np.concatenate([(2 * (r.T @ st["hx"].astype(np.float64))).ravel(),
                                2 * r.sum(axis=0)])
    ref = np.zeros_like(local_ref)
    ctx.comm.Allreduce(local_ref, ref, op=ctx.mpi.SUM)
    err = rel_err(total, ref / n)

    sp = ctx.split

    def local_grad() -> Any:
        g = st["gradient"](state["p"], st["x"], st["y"])
        ad.block(g)
        return g

    def update(g: Any) -> Any:
        p = st["update"](state["p"], g, lr / n)
        ad.block(p)
        return p

    def step() -> None:
        g = sp.compute(local_grad)
        g = sp.comm(lambda: chan.allreduce(g, st["recv"], st["hs"], st["hr"]))
        state["p"] = sp.compute(lambda: update(g))

    samples = ctx.timed(step)
    if ctx.rank:
        return None
    res = result(samples, rel_err=err, tolerance=tolerance(dtype, n) * 10)
    res["gbps"] = nparams * np.dtype(dtype).itemsize / res["median_s"] / 1e9
    return res
