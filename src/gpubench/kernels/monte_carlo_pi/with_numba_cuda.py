"""monte_carlo_pi in Numba CUDA with the xoroshiro128+ generator of ``numba.cuda.random``.

Corrects the workshop book's §4.11.2, which created RNG states inside the kernel with ``seed=idx``:
state creation is a host call, made here once per build for the whole grid with the
case's seed (``create_xoroshiro128p_states``: one state per thread, each 2**64 steps
apart in one sequence, so the streams are independent). The states live on the device
and each draw advances them in place, so every call draws fresh points.

Launch: a grid-stride loop over the n samples with at most one full wave of 256-thread
blocks (:func:`gpubench.backends.numba.gpu.grid_1d`), so each thread draws about
n / threads points and exactly n are drawn in all. Points are drawn and compared in the
case's dtype (``xoroshiro128p_uniform_float32`` for float32). Each thread counts its
hits in a register, the block adds them with shared-memory atomics, and thread 0 adds
the block's count atomically to an int64 device counter. A one-thread kernel then
writes 4·hits/n (float64) and resets the counter for the next call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factories below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None


@functools.cache
def _kernels(dtype: str) -> tuple[Any, Any]:
    """(sampling kernel, finishing kernel) for one dtype, created once per process."""
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()
    int64 = cuda.int64
    from numba.cuda.random import xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64

    uniform = xoroshiro128p_uniform_float32 if dtype == "float32" else xoroshiro128p_uniform_float64
    one = getattr(np, dtype)(1.0)

    @cuda.jit
    def sample(states, n, hits):
        block_hits = cuda.shared.array(1, int64)
        if cuda.threadIdx.x == 0:
            block_hits[0] = 0
        cuda.syncthreads()
        tid = cuda.grid(1)
        count = 0
        for _ in range(tid, n, cuda.gridsize(1)):
            x = uniform(states, tid)
            y = uniform(states, tid)
            if x * x + y * y <= one:
                count += 1
        cuda.atomic.add(block_hits, 0, count)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(hits, 0, block_hits[0])

    @cuda.jit
    def finish(hits, n, out):
        out[0] = 4.0 * hits[0] / n
        hits[0] = 0

    return sample, finish


@implementation("monte_carlo_pi", "numba", "xoroshiro", devices=("gpu",))
def xoroshiro(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.backends.numba.gpu import grid_1d, import_cuda

    cuda = import_cuda()
    from numba.cuda.random import create_xoroshiro128p_states

    n = ctx.case.size
    blocks, threads = grid_1d(n)
    states = create_xoroshiro128p_states(blocks * threads, seed=ctx.seed)
    hits = cuda.to_device(np.zeros(1, dtype=np.int64))
    res = cuda.device_array(1, dtype=np.float64)
    result = res.reshape(())
    sample, finish = _kernels(ctx.case.dtype)
    launch_sample = sample[blocks, threads]
    launch_finish = finish[1, 1]

    def call() -> Any:
        launch_sample(states, n, hits)
        launch_finish(hits, n, res)
        return result

    return call
