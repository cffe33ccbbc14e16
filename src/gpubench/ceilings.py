"""Measured ceilings: what this machine can do at best, so every row gets a % of it.

The probe measures, per run, a large device-to-device copy (bytes read + written),
library SGEMM and DGEMM (TF32 off), and host-to-device copies from pinned and pageable
memory — on the GPU through PyTorch or CuPy, whichever is installed — and the same
copy and GEMMs on the CPU through NumPy. Datasheet numbers are not used: a row is
judged against what was measured on the same machine the same day.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: which ceiling a kernel is compared with: "memory" (copy bandwidth), "compute"
#: (GEMM rate for the row's dtype), "transfer" (host-device copy), or absent (none)
KERNEL_BOUND: dict[str, str] = {
    "vector_add": "memory",
    "elementwise": "memory",
    "reduction": "memory",
    "moving_average": "memory",
    "fft": "memory",
    "matmul": "compute",
    "transfer": "transfer",
}


def _median_time(fn: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def cpu_ceilings(copy_bytes: int = 1 << 28, gemm_n: int = 2048) -> dict[str, float]:
    """Host copy bandwidth and NumPy (BLAS) GEMM rates, all cores."""
    src = np.random.default_rng(0).random(copy_bytes // 8)
    dst = np.empty_like(src)
    t = _median_time(lambda: np.copyto(dst, src), 10, lambda: None)
    out = {"cpu_copy_gbps": 2 * src.nbytes / t / 1e9}
    for dtype, key in (("float32", "cpu_sgemm_gflops"), ("float64", "cpu_dgemm_gflops")):
        a = np.random.default_rng(1).random((gemm_n, gemm_n)).astype(dtype)
        b = np.random.default_rng(2).random((gemm_n, gemm_n)).astype(dtype)
        c = np.empty_like(a)
        t = _median_time(lambda a=a, b=b, c=c: np.matmul(a, b, out=c), 3, lambda: None)
        out[key] = 2 * gemm_n**3 / t / 1e9
    return out


def gpu_ceilings(copy_bytes: int = 1 << 30, gemm_n: int = 8192) -> dict[str, Any]:
    """GPU ceilings through PyTorch (or CuPy); raises ImportError/RuntimeError if neither."""
    try:
        return _torch_ceilings(copy_bytes, gemm_n)
    except ImportError:
        return _cupy_ceilings(copy_bytes, gemm_n)


def _events_median(start: Any, end: Any, fn: Callable[[], Any], repeats: int,
                   elapsed_s: Callable[[Any, Any], float]) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(elapsed_s(start, end))
    return float(np.median(times))


def best_copy(out: dict[str, Any], copies: Mapping[str, float]) -> None:
    """The copy ceiling is the fastest of several copy methods, each recorded.

    One method alone can sit below what the memory does (``Tensor.copy_`` of 1 GiB read
    2.74 TB/s on an H100 whose plain kernels reach 3.0 TB/s), and a ceiling that kernels
    exceed says nothing; the best measured copy is the honest bound.
    """
    if not copies:
        raise RuntimeError("no device-to-device copy could be measured")
    method = max(copies, key=lambda k: copies[k])
    out["d2d_copy_gbps"] = copies[method]
    out["d2d_copy_method"] = method
    out["d2d_copy_gbps_by_method"] = dict(sorted(copies.items()))


def _cupy_copies(copy_bytes: int) -> dict[str, float]:
    """Device-to-device copy rates through CuPy: ``cudaMemcpyAsync`` and an elementwise
    copy kernel (read + write bytes per second, 1e9); empty without CuPy or a device."""
    try:
        import cupy

        n = copy_bytes // 4
        buf = {"src": cupy.random.random(n, dtype=cupy.float32)}
        buf["dst"] = cupy.empty_like(buf["src"])
    except Exception:  # noqa: BLE001 - no CuPy here: the other methods stand
        return {}
    s, e = cupy.cuda.Event(), cupy.cuda.Event()

    def ms(a: Any, b: Any) -> float:
        return cupy.cuda.get_elapsed_time(a, b) / 1e3

    def memcpy() -> None:
        cupy.cuda.runtime.memcpyAsync(buf["dst"].data.ptr, buf["src"].data.ptr, copy_bytes,
                                      cupy.cuda.runtime.memcpyDeviceToDevice,
                                      cupy.cuda.get_current_stream().ptr)

    rates = {}
    for name, fn in (("cudaMemcpyAsync (CuPy)", memcpy),
                     ("elementwise copy kernel (CuPy)",
                      lambda: buf["dst"].__setitem__(Ellipsis, buf["src"]))):
        t = _events_median(s, e, fn, 20, ms)
        rates[name] = 2 * copy_bytes / t / 1e9
    buf.clear()
    cupy.get_default_memory_pool().free_all_blocks()
    return rates


def _torch_ceilings(copy_bytes: int, gemm_n: int) -> dict[str, Any]:
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    n = copy_bytes // 4
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def ms(a: Any, b: Any) -> float:
        return a.elapsed_time(b) / 1e3

    out: dict[str, Any] = {"measured_with": f"torch {torch.__version__}"}
    t = _events_median(s, e, lambda: dst.copy_(src), 20, ms)
    copies = {"torch.Tensor.copy_": 2 * copy_bytes / t / 1e9}
    copies.update(_cupy_copies(copy_bytes))
    best_copy(out, copies)
    for dtype, key in ((torch.float32, "sgemm_gflops"), (torch.float64, "dgemm_gflops")):
        a = torch.rand(gemm_n, gemm_n, device=dev, dtype=dtype)
        b = torch.rand(gemm_n, gemm_n, device=dev, dtype=dtype)
        c = torch.empty_like(a)
        t = _events_median(s, e, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), 10, ms)
        out[key] = 2 * gemm_n**3 / t / 1e9
    pinned = torch.empty(n, dtype=torch.float32).pin_memory()
    pageable = torch.empty(n, dtype=torch.float32)
    pinned.fill_(1.0)
    pageable.fill_(1.0)
    t = _events_median(s, e, lambda: dst.copy_(pinned, non_blocking=True), 10, ms)
    out["h2d_pinned_gbps"] = copy_bytes / t / 1e9
    t = _events_median(s, e, lambda: dst.copy_(pageable), 5, ms)
    out["h2d_pageable_gbps"] = copy_bytes / t / 1e9
    props = torch.cuda.get_device_properties(0)
    out.update(gpu_name=props.name, sm_count=props.multi_processor_count,
               l2_bytes=int(getattr(props, "L2_cache_size", 0)))
    return out


def _cupy_ceilings(copy_bytes: int, gemm_n: int) -> dict[str, Any]:
    import cupy
    import cupyx

    n = copy_bytes // 4
    src = cupy.random.random(n, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    s, e = cupy.cuda.Event(), cupy.cuda.Event()

    def ms(a: Any, b: Any) -> float:
        return cupy.cuda.get_elapsed_time(a, b) / 1e3

    out: dict[str, Any] = {"measured_with": f"cupy {cupy.__version__}"}
    best_copy(out, _cupy_copies(copy_bytes))
    for dtype, key in ((cupy.float32, "sgemm_gflops"), (cupy.float64, "dgemm_gflops")):
        a = cupy.random.random((gemm_n, gemm_n)).astype(dtype)
        b = cupy.random.random((gemm_n, gemm_n)).astype(dtype)
        c = cupy.empty_like(a)
        t = _events_median(s, e, lambda a=a, b=b, c=c: cupy.matmul(a, b, out=c), 10, ms)
        out[key] = 2 * gemm_n**3 / t / 1e9
    pinned = cupyx.empty_pinned(n, dtype=np.float32)
    pinned[...] = 1.0
    pageable = np.ones(n, dtype=np.float32)
    t = _events_median(s, e, lambda: dst.set(pinned), 10, ms)
    out["h2d_pinned_gbps"] = copy_bytes / t / 1e9
    t = _events_median(s, e, lambda: dst.set(pageable), 5, ms)
    out["h2d_pageable_gbps"] = copy_bytes / t / 1e9
    props = cupy.cuda.runtime.getDeviceProperties(0)
    out.update(gpu_name=props["name"].decode(), sm_count=props["multiProcessorCount"],
               l2_bytes=int(props["l2CacheSize"]))
    return out


def ceiling_for(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> tuple[str, float]:
    """(label, % of ceiling) for one result row; ('', nan) when none applies."""
    bound = KERNEL_BOUND.get(str(row["kernel"]))
    gpu = row["device"] == "gpu"
    if bound == "memory":
        key, value = ("d2d_copy_gbps" if gpu else "cpu_copy_gbps"), row["gbps"]
    elif bound == "compute":
        prefix = "" if gpu else "cpu_"
        key = prefix + ("sgemm_gflops" if row["dtype"] == "float32" else "dgemm_gflops")
        value = row["gflops"]
    elif bound == "transfer" and gpu:
        pinned = "pinned" in str(row["variant"])
        key, value = ("h2d_pinned_gbps" if pinned else "h2d_pageable_gbps"), row["gbps"]
    else:
        return "", float("nan")
    ceiling = ceilings.get(key)
    if not ceiling or value is None or not np.isfinite(value):
        return "", float("nan")
    unit = "GFLOP/s" if key.endswith("gflops") else "GB/s"
    return f"{key.rsplit('_', 1)[0]} {ceiling:.0f} {unit}", 100.0 * float(value) / ceiling
