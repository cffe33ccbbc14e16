"""The GPU's ceilings measured through CuPy: copies (``cudaMemcpyAsync``, an elementwise
kernel, the L2-resident loops of a RawKernel), GEMMs and the bus."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gpubench.backends.cupy.events import cupy_events
from gpubench.backends.hooks import DeviceCeilings
from gpubench.ceilings import (
    L2_COPY_BATCH,
    L2_LOOP_SOURCE,
    MoreCopies,
    batch_seconds,
    best_copy,
    best_l2_copy,
    l2_footprints,
    l2_loop_reps,
    link_rates,
    pageable_rates,
)
from gpubench.timing import median_time


def cupy_l2_loops(cupy: Any, footprints: Sequence[int], sms: int
                   ) -> dict[tuple[str, int], tuple[float, bool]]:
    """The L2-resident rates of :data:`L2_LOOP_SOURCE`'s two loops (bytes moved per
    second, 1e9): copy (read + write, as a copy counts them) and read-only. One launch,
    many passes: the rate of L2 itself, which the batches of small copies (each a launch
    of a few microseconds) understate."""
    module = cupy.RawModule(code=L2_LOOP_SOURCE)
    copy_k = module.get_function("gpubench_l2_copy_loop")
    read_k = module.get_function("gpubench_l2_read_loop")
    ev = cupy_events(cupy)
    threads, blocks = 256, 8 * sms
    out: dict[tuple[str, int], tuple[float, bool]] = {}
    sink = cupy.empty(threads * blocks, dtype=cupy.float32)
    for footprint in footprints:
        n4 = footprint // 32  # two buffers of float4 (16 bytes each)
        src = cupy.random.random(4 * n4, dtype=cupy.float32)
        dst = cupy.empty_like(src)
        reps = l2_loop_reps(footprint)
        size = (cupy.int64(n4), cupy.int32(reps))
        for name, kernel, args, moved in (
                ("L2 copy loop (CuPy RawKernel)", copy_k, (src, dst, *size), reps * footprint),
                ("L2 read loop (CuPy RawKernel)", read_k, (src, sink, *size),
                 reps * footprint // 2)):
            kernel((blocks,), (threads,), args)
            times = [ev.time(lambda k=kernel, a=args: k((blocks,), (threads,), a))[1]
                     for _ in range(5)]
            out[(name, footprint)] = (moved / min(times) / 1e9, True)
    return out


def cupy_copies(copy_bytes: int, l2_bytes: int = 0
                 ) -> tuple[dict[str, float], dict[tuple[str, int], tuple[float, bool]]]:
    """Device-to-device copy rates through CuPy: ``cudaMemcpyAsync`` and an elementwise
    copy kernel (read + write bytes per second, 1e9), of ``copy_bytes`` (memory) and
    L2-resident (see :func:`best_l2_copy`); empty without CuPy or a device."""
    try:
        import cupy

        n = copy_bytes // 4
        buf = {"src": cupy.random.random(n, dtype=cupy.float32)}
        buf["dst"] = cupy.empty_like(buf["src"])
    except Exception:  # noqa: BLE001 - no CuPy here: the other methods stand
        return {}, {}
    ev = cupy_events(cupy)

    def memcpy(dst: Any, src: Any) -> Callable[[], None]:
        def run() -> None:
            cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                          cupy.cuda.runtime.memcpyDeviceToDevice,
                                          cupy.cuda.get_current_stream().ptr)
        return run

    def kernel(dst: Any, src: Any) -> Callable[[], None]:
        return lambda: dst.__setitem__(Ellipsis, src)

    methods = (("cudaMemcpyAsync (CuPy)", memcpy), ("elementwise copy kernel (CuPy)", kernel))
    rates = {}
    for name, make in methods:
        t = median_time(ev.time, make(buf["dst"], buf["src"]), 20)
        rates[name] = 2 * copy_bytes / t / 1e9
    # the L2-resident batches queue behind large copies (busy_s each)
    busy = memcpy(buf["dst"], buf["src"])
    busy_s = 2 * copy_bytes / (max(rates.values()) * 1e9)
    l2: dict[tuple[str, int], tuple[float, bool]] = {}
    for footprint in l2_footprints(l2_bytes):
        small = cupy.random.random(footprint // 8, dtype=cupy.float32)
        into = cupy.empty_like(small)
        for name, make in methods:
            t, ahead = batch_seconds(ev, make(into, small), L2_COPY_BATCH, 5, busy, busy_s)
            l2[(name, footprint)] = (footprint / t / 1e9, ahead)
        del small, into
    try:
        sms = int(cupy.cuda.runtime.getDeviceProperties(
            cupy.cuda.Device().id)["multiProcessorCount"])
        l2.update(cupy_l2_loops(cupy, l2_footprints(l2_bytes), sms))
    except Exception:  # noqa: BLE001 - no kernel compiler here: the copies stand
        pass
    buf.clear()
    cupy.get_default_memory_pool().free_all_blocks()
    return rates, l2


def cupy_ceilings(copy_bytes: int, gemm_n: int, transfer_bytes: Sequence[int],
                  more_copies: MoreCopies) -> dict[str, Any]:
    """The GPU's ceilings through CuPy (:func:`gpubench.ceilings.gpu_ceilings`; its own
    copy methods only, as when it is the framework installed)."""
    import cupy
    import cupyx

    props = cupy.cuda.runtime.getDeviceProperties(0)
    l2_bytes = int(props["l2CacheSize"])
    out: dict[str, Any] = {"measured_with": f"cupy {cupy.__version__}"}
    rates, l2 = cupy_copies(copy_bytes, l2_bytes)
    best_copy(out, rates)
    best_l2_copy(out, l2)
    n = copy_bytes // 4
    src = cupy.random.random(n, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    ev = cupy_events(cupy)

    for dtype, key in ((cupy.float32, "sgemm_gflops"), (cupy.float64, "dgemm_gflops")):
        a = cupy.random.random((gemm_n, gemm_n)).astype(dtype)
        b = cupy.random.random((gemm_n, gemm_n)).astype(dtype)
        c = cupy.empty_like(a)
        t = median_time(ev.time, lambda a=a, b=b, c=c: cupy.matmul(a, b, out=c), 10)
        out[key] = 2 * gemm_n**3 / t / 1e9
        del a, b, c
    link_n = max([n, *(b // 4 for b in transfer_bytes)])
    pinned = cupyx.empty_pinned(link_n, dtype=np.float32)
    pinned[...] = 1.0
    pageable = np.ones(link_n, dtype=np.float32)
    on_dev = dst if link_n <= n else cupy.empty(link_n, dtype=cupy.float32)
    t = median_time(ev.time, lambda: dst.set(pinned[:n]), 10)
    out["h2d_pinned_gbps"] = copy_bytes / t / 1e9
    t = median_time(ev.time, lambda: dst.set(pageable[:n]), 5)
    out["h2d_pageable_gbps"] = copy_bytes / t / 1e9
    rt = cupy.cuda.runtime

    def copier(host: np.ndarray) -> Callable[[str, int], Callable[[], Any]]:
        def copy(direction: str, nbytes: int) -> Callable[[], Any]:
            h, d = host.ctypes.data, on_dev.data.ptr

            def run() -> None:
                stream = cupy.cuda.get_current_stream().ptr
                if direction == "h2d":
                    rt.memcpyAsync(d, h, nbytes, rt.memcpyHostToDevice, stream)
                else:
                    rt.memcpyAsync(h, d, nbytes, rt.memcpyDeviceToHost, stream)
            return run
        return copy

    def busy() -> None:
        dst[...] = src

    busy_s = 2 * copy_bytes / (out["d2d_copy_gbps"] * 1e9)
    out["pinned_gbps"], out["pinned_queued"] = link_rates(ev, copier(pinned), transfer_bytes,
                                                          busy, busy_s)
    out["pageable_gbps"] = pageable_rates(ev, copier(pageable), transfer_bytes)
    out.update(gpu_name=props["name"].decode(), sm_count=props["multiProcessorCount"],
               l2_bytes=l2_bytes)
    return out


def cupy_steady_copy(elements: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """One CuPy device copy of ``elements`` float32, and the wait for the device."""
    import cupy

    src = cupy.random.random(elements, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    return (lambda: dst.__setitem__(Ellipsis, src)), cupy.cuda.Device().synchronize


class CupyCeilings(DeviceCeilings):
    """The GPU measured through CuPy."""

    measure_ceilings = staticmethod(cupy_ceilings)
    measure_copies = staticmethod(cupy_copies)
    steady_copy = staticmethod(cupy_steady_copy)
