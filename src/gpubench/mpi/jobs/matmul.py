"""The matmul job: rows of A scattered, B broadcast, each rank's rows of C gathered."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpubench.kernels.matmul import SPEC as MATMUL
from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import Context, counts, rel_err, result, tolerance


@mpi_job(order=20, size_meaning="matrix order", scaling="strong", kernel=MATMUL,
         buffers=True, row_per_rank=True, defaults={"sizes": [256], "dtype": "float64"})
def job_matmul(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.6.2, §9.11.3: rows of A scattered, B broadcast, C = A B on
    each device, rows of C gathered on rank 0."""
    n, dtype, path = int(ctx.item["size"]), ctx.item["dtype"], ctx.item["path"]
    ad, comm = ctx.ad, ctx.comm
    rows = counts(n, ctx.size)
    elems = [r * n for r in rows]
    offsets = [int(x) for x in np.cumsum([0, *elems[:-1]])]
    mine = rows[ctx.rank]
    mpi_type = ctx.mpi.DOUBLE if dtype == "float64" else ctx.mpi.FLOAT
    direct = path == "direct"

    def setup() -> dict[str, Any]:
        st: dict[str, Any] = {}
        if ctx.rank == 0:
            rng = ctx.common_rng(2)
            st["A"] = rng.standard_normal((n, n)).astype(dtype)
            st["B"] = rng.standard_normal((n, n)).astype(dtype)
            st["C"] = np.empty((n, n), dtype)
        else:
            st["A"], st["C"] = None, None
            st["B"] = np.empty((n, n), dtype)
        st["a_loc"] = np.zeros((mine, n), dtype)
        st["c_loc"] = np.empty((mine, n), dtype)
        if direct:  # the same buffers on the device
            st["dA"] = ad.to_device(st["A"]) if ctx.rank == 0 else None
            st["dC"] = ad.empty((n, n), dtype) if ctx.rank == 0 else None
            st["dB"] = ad.to_device(st["B"]) if ctx.rank == 0 else ad.empty((n, n), dtype)
            st["in"] = {"a": ad.empty((mine, n), dtype), "b": st["dB"]}
        else:  # device copies the staged step writes into
            st["in"] = {"a": ad.to_device(st["a_loc"]),
                        "b": ad.to_device(np.zeros((n, n), dtype))}
        st["out"] = {"c": ad.empty((mine, n), dtype)}
        st["mm"] = ad.build_kernel(MATMUL.name, "default", n, dtype, st["in"], st["out"])
        ad.block(st["mm"]())  # compile outside timing
        return st

    st = ctx.guarded(setup)
    ins = st["in"]

    def local_product() -> Any:
        """C = A B of this rank's rows: the matmul kernel's implementation."""
        c = st["mm"]()
        return st["out"]["c"] if c is None else c

    sp = ctx.split

    def computed() -> Any:
        c = local_product()
        ad.block(c)
        return c

    def scatter_staged() -> None:
        comm.Scatterv([st["A"], elems, offsets, mpi_type] if ctx.rank == 0 else None,
                      [st["a_loc"], mpi_type], root=0)
        comm.Bcast([st["B"], mpi_type], root=0)
        ins["a"] = ad.upload(st["a_loc"], ins["a"])
        ins["b"] = ad.upload(st["B"], ins["b"])

    def gather_staged(c: Any) -> None:
        ad.download(c, st["c_loc"])
        comm.Gatherv([st["c_loc"], mpi_type],
                     [st["C"], elems, offsets, mpi_type] if ctx.rank == 0 else None, root=0)

    def step_staged() -> None:
        sp.comm(scatter_staged)
        c = sp.compute(computed)
        sp.comm(lambda: gather_staged(c))

    def scatter_direct() -> None:
        comm.Scatterv([st["dA"], elems, offsets, mpi_type] if ctx.rank == 0 else None,
                      [ins["a"], mine * n, mpi_type], root=0)
        comm.Bcast([st["dB"], mpi_type], root=0)

    def step_direct() -> None:
        sp.comm(scatter_direct)
        c = sp.compute(computed)
        sp.comm(lambda: comm.Gatherv(
            [c, mpi_type], [st["dC"], elems, offsets, mpi_type] if ctx.rank == 0 else None,
            root=0))

    step = step_direct if direct else step_staged
    step()
    err = math.nan
    if ctx.rank == 0:
        out = ad.to_host(st["dC"]) if direct else st["C"]
        ref = st["A"].astype(np.float64) @ st["B"].astype(np.float64)
        err = rel_err(out, ref)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    return result(samples, rel_err=err, tolerance=tolerance(dtype, n) * 10)
