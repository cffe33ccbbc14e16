"""monte_carlo_pi in CUDA Python: ``monte_carlo_pi.cu`` (Philox4x32-10), launched by cuda.core.

Per call, on the backend's stream: ``monte_carlo_pi_<f32|f64>`` counts hits into a
device counter (grid-stride over Philox blocks, 256 threads, at most one wave of SMs x
resident blocks from the occupancy API), then ``monte_carlo_pi_finalize`` (one thread)
writes 4 * hits / n as a 0-d float64 and zeroes the counter for the next call. The key
is the case's seed and the counter includes a call number that goes up by one every
call, so every call draws fresh, never-overlapping points. The CuPy ``raw_kernel`` row
launches the same source with the same geometry and seeds (so the two draw the same
points call for call).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation


def work_items(n: int, dtype: str) -> int:
    """Philox blocks per call: one per 2 samples in float32, one per sample in float64."""
    return -(-n // 2) if dtype == "float32" else n


@implementation("monte_carlo_pi", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], object]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    n = ctx.case.size
    source = cuda_sources.source("monte_carlo_pi")
    count = be.kernel(source, f"monte_carlo_pi_{cuda_sources.suffix(ctx.case.dtype)}")
    finalize = be.kernel(source, "monte_carlo_pi_finalize")
    grid = be.grid_for(count, work_items(n, ctx.case.dtype))
    hits = be.empty((1,), "uint64")
    be.zero(hits)  # finalize re-zeroes it after every call
    estimate = be.empty((), "float64")
    seed = np.uint64(ctx.seed)
    calls = itertools.count()

    def call() -> object:
        be.launch(count, grid, THREADS, seed, np.uint64(next(calls)), np.int64(n), hits.ptr)
        be.launch(finalize, 1, 1, hits.ptr, np.int64(n), estimate.ptr)
        return estimate

    return call
