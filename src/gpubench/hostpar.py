"""Host work on big arrays split over the CPU cores: inputs, float64 references, checks.

A 2**26-element case costs about a second of single-core NumPy to draw its inputs and
as much again for its float64 reference, and each GPU step repeats that per case and
checks every result twice: on an H100 this host work took longer than the kernels it
surrounds. NumPy releases the GIL inside random fills, casts, ufuncs and dot products,
so a thread pool over fixed-size chunks gives the speed-up. The chunks are fixed (not
one per thread), so every result is the same whatever the thread count.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

#: elements per chunk: large enough to amortise a task, small enough to balance 16 cores
CHUNK = 1 << 22
_T = TypeVar("_T")
_pool: ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: it must start its own pool."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def host_threads() -> int:
    """Cores this process may run on (its affinity: a pinned CPU worker gets its own)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def map_chunks(fn: Callable[[int, int], _T], n: int, chunk: int | None = None) -> list[_T]:
    """``fn(start, stop)`` over fixed chunks of ``range(n)``, in parallel; results in order."""
    chunk = chunk or CHUNK
    bounds = [(i, min(i + chunk, n)) for i in range(0, n, chunk)]
    threads = min(host_threads(), len(bounds))
    if threads <= 1:
        return [fn(a, b) for a, b in bounds]
    global _pool
    if _pool is None or _pool._max_workers < threads:
        _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gpubench-host")
    return list(_pool.map(lambda ab: fn(*ab), bounds))


def fill_uniform(rng: np.random.Generator, out: np.ndarray, low: float, high: float) -> None:
    """Fill a float array with uniform draws in [low, high), chunk-parallel when large.

    Large arrays take one child generator per chunk, spawned from a seed drawn from
    ``rng``: reproducible for a given ``rng`` state, independent of the thread count.
    """
    flat = out.reshape(-1)
    kind = out.dtype.type

    def draw(gen: np.random.Generator, a: int, b: int) -> None:
        part = flat[a:b]
        gen.random(out=part, dtype=kind)
        part *= high - low
        part += low

    if flat.size < 2 * CHUNK:
        draw(rng, 0, flat.size)
        return
    children = np.random.SeedSequence(int(rng.integers(2**63))).spawn(
        math.ceil(flat.size / CHUNK))
    map_chunks(lambda a, b: draw(np.random.default_rng(children[a // CHUNK]), a, b),
               flat.size)


def elementwise64(fn: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    """``fn`` on float64 copies of matching chunks of same-shape arrays (a reference).

    Only for functions that act element by element; the result has the arrays' shape.
    """
    shape = arrays[0].shape
    flats = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    out = np.empty(flats[0].size, dtype=np.float64)

    def work(a: int, b: int) -> None:
        out[a:b] = fn(*(f[a:b].astype(np.float64) for f in flats))

    map_chunks(work, out.size)
    return out.reshape(shape)


def dot64(a: np.ndarray, b: np.ndarray) -> float:
    """The float64 dot product of two flat arrays: chunk partial sums, summed exactly.

    By ``einsum``, not BLAS: a BLAS dot starts the BLAS library's own threads, which then
    spin on the cores for a while after the call. A reference computed just before a CPU
    row's samples then left a framework's thread pool waiting for its cores: PyTorch's
    reductions took ~8 ms a call at 4 and 8 threads on a 16-core host (30-80 µs in a
    process where nothing else ran; tools/thread_stall_check.py)."""
    x, y = a.reshape(-1), b.reshape(-1)
    parts = map_chunks(lambda s, e: float(np.einsum("i,i->", x[s:e].astype(np.float64),
                                                    y[s:e].astype(np.float64))), x.size)
    return math.fsum(parts)


@contextmanager
def blas_in_caller() -> Iterator[None]:
    """BLAS and LAPACK calls inside run in the calling thread only.

    The host's float64 references and checks (a GEMM, eigenvalues, residuals) would
    otherwise wake the BLAS library's own threads, which spin on the cores for a while
    after each call, while the CPU framework under test waits for those cores (see
    :func:`dot64`). Parallelism comes from :func:`map_chunks` instead, whose idle threads
    block. Without threadpoolctl (a bare environment) nothing changes.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


#: rows of the left matrix per task of :func:`matmul64` (fixed: the same blocks, so the
#: same result, whatever the thread count)
MATMUL_ROWS = 128


def matmul64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The float64 product of two matrices, by blocks of rows over the host's cores.

    Each block is a single-threaded BLAS call (:func:`blas_in_caller`): no BLAS threads
    are left spinning when the samples of a CPU row begin."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    out = np.empty((a64.shape[0], b64.shape[1]), dtype=np.float64)
    with blas_in_caller():
        map_chunks(lambda s, e: np.matmul(a64[s:e], b64, out=out[s:e]), a64.shape[0],
                   chunk=MATMUL_ROWS)
    return out


def sum64(a: np.ndarray) -> float:
    """The float64 sum of an array: chunk partial sums, summed exactly."""
    x = a.reshape(-1)
    return math.fsum(map_chunks(lambda s, e: float(x[s:e].sum(dtype=np.float64)), x.size))
