"""The multi_gpu job: one process drives several devices, each framework its own way."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.mpi.catalog import mpi_job
from gpubench.mpi.jobs.common import (
    Context,
    one_process_samples,
    rel_err,
    result,
    split,
    tolerance,
)


@mpi_job(order=80, size_meaning="global elements", scaling="strong", single_process=True,
         needs="multi_device", defaults={"sizes": [1 << 20], "dtype": "float32"})
def job_multi_gpu(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §5.7, §7.6.4: one process drives ``ranks`` devices, each
    framework its own way (``mode``: CuPy device contexts, PyTorch ``cuda:<d>`` tensors,
    Numba CUDA contexts, a JAX sharded array under ``jit`` or ``shard_map`` with
    ``psum``); the same sum of squares as the reduction job, checked against float64."""
    n, dtype, mode = int(ctx.item["size"]), ctx.item["dtype"], ctx.item["mode"]
    ndev = int(ctx.item["devices"])
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 8]))
    host = rng.standard_normal(n).astype(dtype)
    ref = float(np.dot(host.astype(np.float64), host.astype(np.float64)))
    parts = [host[s:s + c] for s, c in (split(n, ndev, d) for d in range(ndev))]
    steps = ctx.ad.multi.steps()
    if mode not in steps:
        raise ValueError(f"unknown multi_gpu mode {mode!r}; known: {sorted(steps)}")
    step = steps[mode](ctx, parts)
    first = step()
    samples = one_process_samples(ctx, step)
    res = result(samples, rel_err=rel_err(first, ref), tolerance=tolerance(dtype, n))
    res["gbps"] = n * np.dtype(dtype).itemsize / res["median_s"] / 1e9
    return res
