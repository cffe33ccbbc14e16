"""reduction in Numba CUDA: a two-pass ``@cuda.jit`` reduction and ``@cuda.reduce``.

``cuda_jit``: pass 1 is a grid-stride loop over at most one full wave of 256-thread
blocks; each thread multiplies in the input dtype and accumulates in a float64 register
(as the Numba CPU loops do: float32 rows multiply in float32, sum in float64), then a
shared-memory tree sums the block's partials and thread 0 writes one float64 per
block. Pass 2, one block, sums those per-block partials (<= 1056 on an H100) the same
way and writes the scalar (numerator over denominator for the weighted mean). Two
launches and no atomics: the result is deterministic, and no accumulator has to be
zeroed before each call.

``cuda_reduce`` (sumsq and dot only): Numba's ``@cuda.reduce`` takes one array and a
binary operator, so the products are first written to a temporary by a map kernel (an
extra pass: one more write and read of n elements), then reduced in the input dtype
by Numba's tree (at most 64 blocks of 128 threads, then a second launch). It allocates
its partials array on every call, and copies its result device to device into a
1-element array (no host transfer). The weighted mean would need two maps and two
reductions and is left out.

The result is a 0-d device array (a view of a 1-element buffer), not a host scalar.
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
def _jit_kernels() -> dict[str, Any]:
    """Pass-1 kernels per variant plus the pass-2 kernel, created once per process.

    Both passes use blocks of ``threads_per_block()`` threads (256; 32 in the simulator),
    a power of two as the shared-memory tree needs, fixed at compile time.
    """
    from gpubench.backends.numba.gpu import import_cuda, threads_per_block

    global cuda
    cuda = import_cuda()
    float64 = cuda.float64
    threads = threads_per_block()  # a compile-time constant in the kernels (closure variable)

    @cuda.jit(device=True)
    def block_sum(sm, value):
        """The sum of ``value`` over the block (every thread gets it); ``sm`` is reusable after."""
        tid = cuda.threadIdx.x
        sm[tid] = value
        cuda.syncthreads()
        step = threads // 2
        while step > 0:
            if tid < step:
                sm[tid] += sm[tid + step]
            cuda.syncthreads()
            step //= 2
        total = sm[0]
        cuda.syncthreads()
        return total

    @cuda.jit
    def sumsq(a, partials):
        sm = cuda.shared.array(threads, float64)
        acc = 0.0
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            acc += a[i] * a[i]
        total = block_sum(sm, acc)
        if cuda.threadIdx.x == 0:
            partials[0, cuda.blockIdx.x] = total

    @cuda.jit
    def dot(a, b, partials):
        sm = cuda.shared.array(threads, float64)
        acc = 0.0
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            acc += a[i] * b[i]
        total = block_sum(sm, acc)
        if cuda.threadIdx.x == 0:
            partials[0, cuda.blockIdx.x] = total

    @cuda.jit
    def weighted_mean(a, w, partials):
        sm = cuda.shared.array(threads, float64)
        num = 0.0
        den = 0.0
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            num += w[i] * a[i]
            den += w[i]
        num_total = block_sum(sm, num)
        den_total = block_sum(sm, den)
        if cuda.threadIdx.x == 0:
            partials[0, cuda.blockIdx.x] = num_total
            partials[1, cuda.blockIdx.x] = den_total

    @cuda.jit
    def finish(partials, nblocks, divide, out):
        """One block: out[0] = sum(partials[0, :nblocks]) (/ sum(partials[1, :nblocks]))."""
        sm = cuda.shared.array(threads, float64)
        tid = cuda.threadIdx.x
        num = 0.0
        den = 0.0
        for j in range(tid, nblocks, threads):
            num += partials[0, j]
            if divide:
                den += partials[1, j]
        num = block_sum(sm, num)
        if divide:
            den = block_sum(sm, den)
        if tid == 0:
            out[0] = num / den if divide else num

    return {"sumsq": sumsq, "dot": dot, "weighted_mean": weighted_mean, "finish": finish}


_SECOND = {"sumsq": (), "dot": ("b",), "weighted_mean": ("w",)}


@implementation("reduction", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.backends.numba.gpu import grid_1d, import_cuda

    cuda = import_cuda()
    variant = ctx.case.variant
    kernels = _jit_kernels()
    args = (ctx.inputs["a"], *(ctx.inputs[n] for n in _SECOND[variant]))
    blocks, threads = grid_1d(ctx.case.size)
    partials = cuda.device_array((2, blocks), dtype=np.float64)
    res = cuda.device_array(1, dtype=np.float64)
    result = res.reshape(())
    pass1 = kernels[variant][blocks, threads]
    pass2 = kernels["finish"][1, threads]
    divide = variant == "weighted_mean"

    def call() -> Any:
        pass1(*args, partials)
        pass2(partials, blocks, divide, res)
        return result

    return call


@functools.cache
def _reduce_parts() -> tuple[Any, Any, Any]:
    """(square map kernel, product map kernel, ``@cuda.reduce`` sum), created once."""
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()

    @cuda.jit
    def square(a, out):
        for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
            out[i] = a[i] * a[i]

    @cuda.jit
    def product(a, b, out):
        for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
            out[i] = a[i] * b[i]

    @cuda.reduce
    def sum_reduce(x, y):
        return x + y

    return square, product, sum_reduce


@implementation("reduction", "numba", "cuda_reduce", devices=("gpu",),
                variants=("sumsq", "dot"))
def cuda_reduce(ctx: BuildContext) -> Callable[[], Any]:
    from gpubench.backends.numba.gpu import grid_1d, import_cuda

    cuda = import_cuda()
    square, product, sum_reduce = _reduce_parts()
    a = ctx.inputs["a"]
    n = ctx.case.size
    tmp = cuda.device_array(n, dtype=a.dtype)
    res = cuda.device_array(1, dtype=a.dtype)
    result = res.reshape(())
    grid = grid_1d(n)
    if ctx.case.variant == "sumsq":
        mapped = square[grid]
        args: tuple[Any, ...] = (a, tmp)
    else:
        mapped = product[grid]
        args = (a, ctx.inputs["b"], tmp)

    def call() -> Any:
        mapped(*args)
        sum_reduce(tmp, res=res)
        return result

    return call
