"""Measured ceilings: what this machine can do at best, so every row gets a % of it.

The probe measures, per run, a large device-to-device copy (bytes read + written), a hot
copy that stays inside the L2 cache, library SGEMM and DGEMM (TF32 off), and the bus:
host-to-device and device-to-host copies from and into pinned memory, per direction, at
the sizes the ``transfer`` kernel measures (and pageable copies at the same sizes, as
results), on the GPU through PyTorch or CuPy, whichever is installed; and the same
copy and GEMMs on the CPU through NumPy. Datasheet numbers are not used: a row is
judged against what was measured on the same machine the same day.

Which ceiling a row is read against (:func:`ceiling_for`):

* memory-bound rows: the L2-resident copy (``l2_copy_gbps``) when their data fit in
  :data:`L2_MULTIPLE` L2 caches, the device-to-device copy (``d2d_copy_gbps``) above;
* GEMM-bound rows: the GEMM rate of their dtype;
* transfers: the pinned rate of the bus in the row's direction at the row's size
  (``pinned_gbps``), or at the largest probed size if the row's was not probed. Pageable
  rates depend on the size and on the host (its memory copy, its page faults), so they
  are results (``pageable_gbps``, ``h2d_pageable_gbps``), never a ceiling: a pageable copy
  is staged through pinned memory and cannot beat the pinned rate.

This module is also the one reader of a probe record's ceilings, for the plausibility
gates (:mod:`gpubench.plausibility`) and the report alike: :func:`from_record`,
:func:`cleaned`, :func:`number`, :func:`positive`, :func:`has`, :func:`l2_size`,
:func:`gemm_key`, :func:`link_table`, :func:`link_reference`, :func:`in_l2` and
:func:`ceiling_for`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.timing import EventPair, host_time, median_time

#: memory-bound rows whose counted bytes are at most this many L2 caches are read against
#: the L2-resident copy (their data may be served from L2, faster than memory)
L2_MULTIPLE = 2.0
#: L2 size assumed where the probe could not read it (past any current GPU's L2)
FALLBACK_L2_BYTES = 128 * 2**20
#: the L2-resident copies: footprints (source + destination) tried, as shares of the L2;
#: well inside it, so a hot copy is served from L2 and not from memory
L2_COPY_SHARES = (1 / 16, 1 / 8, 1 / 4)
#: L2-resident copies per timed batch: a copy of a few MiB lasts about a microsecond,
#: so a single one between two events would be mostly the events' own cost
L2_COPY_BATCH = 256
#: a batch of host-device copies lasts about this long (fewer copies at large sizes)
LINK_BATCH_S = 0.005
#: most host-device copies in one batch
LINK_MAX_BATCH = 64
#: the transfer kernel's default sizes (float32 elements) when the probe is given none
DEFAULT_TRANSFER_ELEMENTS = (1 << 16, 1 << 20, 1 << 24, 1 << 26)
#: the two directions of the bus, as the transfer kernel's variants name them
DIRECTIONS = ("h2d", "d2h")


def _host(fn: Callable[[], Any]) -> tuple[Any, float]:
    """The host clock around a NumPy call (finished on return: nothing to wait for)."""
    return host_time(fn, lambda _result: None)


#: Linux's description of the CPUs' caches (one folder per CPU and cache)
SYSFS_CPU = Path("/sys/devices/system/cpu")
_SIZE_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def cpu_cache_bytes(root: Path = SYSFS_CPU) -> int | None:
    """Every data and unified cache of the host, each level and instance once (an
    instance is known by the CPUs that share it), summed; None where sysfs has none.
    Data larger than :data:`L2_MULTIPLE` times this cannot be served from the caches:
    the CPU bandwidth gate (gpubench.plausibility) reads it as coming from memory."""
    caches: dict[tuple[str, str], int] = {}
    for index in root.glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = (index / "level").read_text().strip()
            shared = (index / "shared_cpu_list").read_text().strip()
            size = (index / "size").read_text().strip()
            nbytes = int(size.rstrip("KMG")) * _SIZE_UNITS.get(size[-1:], 1)
        except (OSError, ValueError):
            continue
        caches[(level, shared)] = nbytes
    return sum(caches.values()) or None


def cpu_clock_hz(root: Path = SYSFS_CPU, cpuinfo: Path = Path("/proc/cpuinfo")
                 ) -> float | None:
    """The fastest clock any CPU of the host reports: its highest frequency where the
    kernel's cpufreq gives one, else the fastest "cpu MHz" of /proc/cpuinfo (a virtual
    machine's usual answer, its nominal clock); None where neither says."""
    clocks = []
    for path in root.glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq"):
        try:
            clocks.append(float(path.read_text().strip()) * 1e3)  # kHz
        except (OSError, ValueError):
            continue
    if not clocks:
        try:
            for line in cpuinfo.read_text(errors="replace").splitlines():
                name, _, value = line.partition(":")
                if name.strip() == "cpu MHz":
                    clocks.append(float(value) * 1e6)
        except (OSError, ValueError):
            pass
    fastest = max(clocks, default=0.0)
    return fastest if fastest > 0 else None


def cpu_ceilings(copy_bytes: int = 1 << 28, gemm_n: int = 2048) -> dict[str, float]:
    """Host copy bandwidth (one thread: NumPy's copy) and NumPy (BLAS) GEMM rates, all
    cores; the size of the host's caches (:func:`cpu_cache_bytes`), which tells the
    rows the copy bounds from those it does not; and the CPU's clock
    (:func:`cpu_clock_hz`), which bounds the rows within the caches."""
    src = np.random.default_rng(0).random(copy_bytes // 8)
    dst = np.empty_like(src)
    t = median_time(_host, lambda: np.copyto(dst, src), 10)
    out = {"cpu_copy_gbps": 2 * src.nbytes / t / 1e9}
    cache = cpu_cache_bytes()
    if cache:
        out["cpu_cache_bytes"] = float(cache)
    clock = cpu_clock_hz()
    if clock:
        out["cpu_clock_hz"] = clock
    for dtype, key in (("float32", "cpu_sgemm_gflops"), ("float64", "cpu_dgemm_gflops")):
        a = np.random.default_rng(1).random((gemm_n, gemm_n)).astype(dtype)
        b = np.random.default_rng(2).random((gemm_n, gemm_n)).astype(dtype)
        c = np.empty_like(a)
        t = median_time(_host, lambda a=a, b=b, c=c: np.matmul(a, b, out=c), 3)
        out[key] = 2 * gemm_n**3 / t / 1e9
    return out


#: ``(copy_bytes, l2_bytes) -> (rates, l2 rates)``: other frameworks' copy methods, which
#: the measuring framework records beside its own (:meth:`~gpubench.backends.hooks.
#: DeviceCeilings.measure_copies`)
MoreCopies = Callable[[int, int], tuple[dict[str, float],
                                         dict[tuple[str, int], tuple[float, bool]]]]


def device_measurers() -> list[Any]:
    """The GPU backend classes the probe may measure the device through, in the order
    it tries them (:attr:`~gpubench.backends.facts.Facts.device_probe_rank`)."""
    from gpubench.backends import backend_classes

    ranked = [c for c in backend_classes().values()
              if c.device == "gpu" and c.facts.device_probe_rank is not None]
    return sorted(ranked, key=lambda c: c.facts.device_probe_rank)


def gpu_ceilings(copy_bytes: int = 1 << 30, gemm_n: int = 8192,
                 transfer_bytes: Sequence[int] = ()) -> dict[str, Any]:
    """GPU ceilings through the first installed framework of :func:`device_measurers`
    (PyTorch, else CuPy); raises ImportError/RuntimeError if none can.

    ``transfer_bytes``: the sizes (bytes per copy) at which the bus is probed, those of
    the transfer kernel's cases (default: its default sizes)."""
    sizes = sorted({int(b) for b in transfer_bytes if int(b) > 0}) or [
        4 * n for n in DEFAULT_TRANSFER_ELEMENTS]
    measurers = device_measurers()
    missing: ImportError = ImportError("no GPU framework measures ceilings here")
    for cls in measurers:
        def more(nbytes: int, l2_bytes: int, me: Any = cls) -> tuple[
                dict[str, float], dict[tuple[str, int], tuple[float, bool]]]:
            rates: dict[str, float] = {}
            l2: dict[tuple[str, int], tuple[float, bool]] = {}
            for other in measurers:
                if other is not me:
                    found, found_l2 = other.ceilings.measure_copies(nbytes, l2_bytes)
                    rates.update(found)
                    l2.update(found_l2)
            return rates, l2

        try:
            return cls.ceilings.measure_ceilings(copy_bytes, gemm_n, sizes, more)
        except ImportError as exc:
            missing = exc
    raise missing


#: a framework's two timing events on its current stream: how to read the time between
#: them, and whether one has been reached by the device yet (the one event timer)
Events = EventPair


def batch_seconds(ev: Events, fn: Callable[[], Any], batch: int, repeats: int,
                  busy: Callable[[], Any], busy_s: float, lead: int = 2
                  ) -> tuple[float, bool]:
    """Fastest seconds per call over ``repeats`` batches of ``batch`` back-to-back calls
    of ``fn`` between two events, and whether every batch was queued whole in time.

    The events time the device's rate only if the device never waits for the host to
    queue the next call; otherwise the interval holds idle launch gaps. So each batch is
    queued behind ``busy`` work (``busy_s`` seconds a call; enough calls to outlast the
    host's queueing twice over), and the start event must still be pending when the end
    event has been queued: then the device began the batch with all of it queued. If not,
    the busy work is made four times longer and the batch timed again (twice at most);
    the flag says whether it held in the end. ``lead`` untimed calls right before the
    start event bring the data back into the cache after the busy work. The fastest batch
    counts: a ceiling is what the device did at best.
    """
    fn()
    ev.record(ev.end)
    ev.wait(ev.end)
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    host_s = time.perf_counter() - t0
    ev.record(ev.end)
    ev.wait(ev.end)
    n_busy = max(1, math.ceil(2 * host_s / busy_s)) if busy_s > 0 else 1
    best, ahead = math.inf, False
    for _attempt in range(3):
        best, ahead = math.inf, True
        for _ in range(repeats):
            for _ in range(n_busy):
                busy()
            for _ in range(lead):
                fn()
            ev.record(ev.start)
            for _ in range(batch):
                fn()
            ev.record(ev.end)
            ahead = ahead and not ev.done(ev.start)
            ev.wait(ev.end)
            best = min(best, ev.elapsed_s(ev.start, ev.end) / batch)
        if ahead:
            break
        n_busy *= 4
    return best, ahead


def link_batch(single_s: float) -> int:
    """Copies per batch for a host-device copy lasting ``single_s``: about
    :data:`LINK_BATCH_S` of them, 1 to :data:`LINK_MAX_BATCH`."""
    if not single_s > 0:
        return 1
    return int(min(max(math.floor(LINK_BATCH_S / single_s), 1), LINK_MAX_BATCH))


def link_rates(ev: Events, copy: Callable[[str, int], Callable[[], Any]],
               sizes: Sequence[int], busy: Callable[[], Any], busy_s: float,
               repeats: int = 10) -> tuple[dict[str, dict[str, float]], bool]:
    """GB/s of pinned host-device copies per direction and size (``{"h2d": {"<bytes>":
    GB/s}}``), and whether every batch was queued whole in time.

    ``copy(direction, nbytes)`` returns one asynchronous copy of ``nbytes`` between a
    pinned host buffer and the device. Per size the faster of one copy at a time and a
    batch of back-to-back copies counts (:func:`batch_seconds`, both behind busy work,
    so the launch is not timed): queued copies overlap their set-up with the previous
    transfer, so at small sizes a batch is faster; the figure is at least what one copy
    at a time reaches, and the fastest of ``repeats`` tries."""
    out: dict[str, dict[str, float]] = {}
    all_ahead = True
    for direction in DIRECTIONS:
        rates = {}
        for nbytes in sizes:
            fn = copy(direction, nbytes)
            single, ahead1 = batch_seconds(ev, fn, 1, repeats, busy, busy_s, lead=0)
            batched, ahead2 = batch_seconds(ev, fn, link_batch(single), repeats, busy,
                                            busy_s, lead=0)
            all_ahead = all_ahead and ahead1 and ahead2
            rates[str(int(nbytes))] = nbytes / min(single, batched) / 1e9
        out[direction] = rates
    return out, all_ahead


def pageable_rates(ev: Events, copy: Callable[[str, int], Callable[[], Any]],
                   sizes: Sequence[int], repeats: int = 5) -> dict[str, dict[str, float]]:
    """GB/s of pageable host-device copies per direction and size (median of single
    copies between events): results, not ceilings (see the module's docstring)."""
    return {d: {str(int(n)): n / median_time(ev.time, copy(d, n), repeats) / 1e9
                for n in sizes}
            for d in DIRECTIONS}


def l2_footprints(l2_bytes: int) -> list[int]:
    """Footprints (source + destination bytes) of the L2-resident copies: the shares
    :data:`L2_COPY_SHARES` of the L2, rounded down to 2 KiB (two float32 buffers of a
    multiple of 256 elements); none when the L2 size is unknown."""
    if not l2_bytes or l2_bytes <= 0:
        return []
    sizes = {int(l2_bytes * s) // 2048 * 2048 for s in L2_COPY_SHARES}
    return sorted(s for s in sizes if s > 0)


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


def best_l2_copy(out: dict[str, Any], copies: Mapping[tuple[str, int], tuple[float, bool]]
                 ) -> None:
    """The L2-resident ceiling: the fastest hot copy that fits in L2, over methods and
    footprints (``copies[(method, footprint bytes)] = (GB/s, queued whole)``).

    Recorded: ``l2_copy_gbps``, the ``l2_copy_bytes`` (source + destination) and
    ``l2_copy_method`` it was reached with, whether its batches were queued whole in time
    (``l2_copy_queued``; if not, launch gaps lowered it) and every figure
    (``l2_copy_gbps_by_method``). With no copy measured, ``l2_copy_error`` says so."""
    if not copies:
        out["l2_copy_error"] = "no L2-resident copy could be measured (L2 size unknown?)"
        return
    (method, footprint), (gbps, ahead) = max(copies.items(), key=lambda kv: kv[1][0])
    out["l2_copy_gbps"] = gbps
    out["l2_copy_bytes"] = footprint
    out["l2_copy_method"] = method
    out["l2_copy_queued"] = bool(ahead)
    out["l2_copy_gbps_by_method"] = {f"{m}, {fmt_bytes(b)}": v[0]
                                     for (m, b), v in sorted(copies.items())}


#: the L2-resident loops: one launch moves the footprint this many times or for about
#: :data:`L2_LOOP_S`, whichever is more, so no launch gap or tail is in the interval
L2_LOOP_S = 2e-4
#: one kernel launch that copies (or reads) an L2-resident buffer ``reps`` times, through
#: L2 only (``.cg``: not kept in L1, so L1 cannot serve later passes); volatile asm, so no
#: pass can be merged, hoisted or left out by the compiler
L2_LOOP_SOURCE = r"""
extern "C" __global__ void gpubench_l2_copy_loop(const float4* src, float4* dst,
                                                 long long n4, int reps) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < reps; ++r) {
    for (long long i = start; i < n4; i += stride) {
      float a, b, c, d;
      asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
                   : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(src + i));
      asm volatile("st.global.cg.v4.f32 [%0], {%1,%2,%3,%4};"
                   :: "l"(dst + i), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
    }
  }
}

extern "C" __global__ void gpubench_l2_read_loop(const float4* src, float* out,
                                                 long long n4, int reps) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int r = 0; r < reps; ++r) {
    for (long long i = start; i < n4; i += stride) {
      float a, b, c, d;
      asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
                   : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(src + i));
      acc += a + b + c + d;
    }
  }
  out[start] = acc;
}
"""


def l2_loop_reps(footprint: int, guess_gbps: float = 5000.0) -> int:
    """Passes over the footprint per launch: enough for :data:`L2_LOOP_S` at an L2 rate
    of ``guess_gbps`` (at least 4)."""
    return max(4, math.ceil(L2_LOOP_S * guess_gbps * 1e9 / max(footprint, 1)))


def fmt_bytes(nbytes: float) -> str:
    """Bytes in binary units: ``256 KiB``, ``4 MiB``, ``1.5 GiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.4g} {unit}"
    return f"{nbytes:.0f} B"


# Reading a probe record: the one place the plausibility gates and the report read a
# ceiling from (an environment record is data, not trusted: every figure goes through
# :func:`number` or :func:`positive`).

def number(value: Any) -> float:
    """``value`` as a finite float; NaN where it is not one (None, text, inf)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def positive(value: Any) -> float:
    """``value`` as a finite positive float; NaN otherwise."""
    x = number(value)
    return x if x > 0 else math.nan


#: the GEMM ceiling each dtype's FLOP rate is read against (complex: its real type's)
GEMM_KEY = {"float32": "sgemm_gflops", "complex64": "sgemm_gflops",
            "float64": "dgemm_gflops", "complex128": "dgemm_gflops"}
#: the key :func:`from_record` gives the probe's empty-call time under
CALL_FLOOR_KEY = "cpu_call_floor_s"


def gemm_key(dtype: Any) -> str:
    """The ceilings' key of the GEMM rate a row of ``dtype`` is read against; '' if none."""
    return GEMM_KEY.get(str(dtype), "")


def l2_size(ceilings: Mapping[str, Any]) -> tuple[float, bool]:
    """(bytes of the GPU's L2, whether the probe read it): :data:`FALLBACK_L2_BYTES`
    where it could not."""
    l2 = positive(ceilings.get("l2_bytes"))
    return (l2, True) if l2 > 0 else (float(FALLBACK_L2_BYTES), False)


def has(ceilings: Mapping[str, Any], key: str) -> bool:
    """Whether the record holds a positive figure under ``key``."""
    return positive(ceilings.get(key)) > 0


def from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ceilings of a probe record (host.json): its ``ceilings``, and the time of
    timing an empty CPU call (``timer_overhead_s.per_sample_s``) as
    :data:`CALL_FLOOR_KEY`; empty where the record has neither."""
    ceilings = record.get("ceilings")
    out = dict(ceilings) if isinstance(ceilings, Mapping) else {}
    overhead = record.get("timer_overhead_s")
    floor = number(overhead.get("per_sample_s")) if isinstance(overhead, Mapping) else math.nan
    if floor > 0:
        out[CALL_FLOOR_KEY] = floor
    return out


def cleaned(ceilings: Mapping[str, Any]) -> dict[str, Any]:
    """The positive figures of ``ceilings`` as floats, and its nested tables (the
    per-direction pinned rates, read by :func:`link_table`) as they are."""
    return {k: (v if isinstance(v, Mapping) else float(v)) for k, v in ceilings.items()
            if isinstance(v, Mapping) or number(v) > 0}


def link_table(ceilings: Mapping[str, Any], key: str = "pinned_gbps"
               ) -> dict[str, dict[int, float]]:
    """``ceilings[key]`` (per direction, bytes -> GB/s) with int sizes, keeping only
    known directions and positive finite figures: an environment record is data, not
    trusted. Empty where the probe did not measure it (an older record)."""
    raw = ceilings.get(key)
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, dict[int, float]] = {}
    for direction in DIRECTIONS:
        per = raw.get(direction)
        if not isinstance(per, Mapping):
            continue
        rates = {}
        for size, gbps in per.items():
            try:
                nbytes = int(float(size))
            except (TypeError, ValueError, OverflowError):  # Overflow: "inf"
                continue
            if nbytes > 0 and positive(gbps) > 0:
                rates[nbytes] = positive(gbps)
        if rates:
            out[direction] = dict(sorted(rates.items()))
    return out


def transfer_direction(row: Mapping[str, Any]) -> str:
    """"h2d" or "d2h" from a transfer row's variant (``h2d_pinned``...), else ''."""
    head = str(row.get("variant", "")).split("_", 1)[0]
    return head if head in DIRECTIONS else ""


def link_reference(row: Mapping[str, Any], ceilings: Mapping[str, Any]
                   ) -> tuple[str, float]:
    """(label, GB/s) of the bus a transfer row is read against; ('', nan) if none.

    The pinned rate of the row's direction at the row's bytes, or at the largest probed
    size where the row's size was not probed (the bus at its fastest, so still a bound
    from above). A record from an older probe has one pinned rate, host to device at
    1 GiB: host-to-device rows are read against it, device-to-host rows against nothing
    (the other direction was never probed, and the two differ)."""
    direction = transfer_direction(row)
    if not direction:
        return "", math.nan
    table = link_table(ceilings).get(direction)
    if table:
        nbytes = positive(row.get("bytes"))
        size = int(nbytes) if nbytes in table else max(table)
        note = "" if nbytes in table else ", largest probed"
        return (f"{direction}_pinned {table[size]:.0f} GB/s at {fmt_bytes(size)}{note}",
                table[size])
    old = positive(ceilings.get("h2d_pinned_gbps"))
    if direction == "h2d" and old > 0:
        return f"h2d_pinned {old:.0f} GB/s", old
    return "", math.nan


def in_l2(row: Mapping[str, Any], ceilings: Mapping[str, Any], fallback_l2: float) -> bool:
    """Whether a row's counted bytes are at most :data:`L2_MULTIPLE` L2 caches (the
    probe's L2 size, or ``fallback_l2`` where it could not read it); False if unknown."""
    l2, measured = l2_size(ceilings)
    l2 = l2 if measured else fallback_l2
    nbytes = positive(row.get("bytes"))
    return nbytes <= L2_MULTIPLE * l2


def ceiling_for(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> tuple[str, float]:
    """(label, % of ceiling) for one result row; ('', nan) when none applies.

    A GPU memory-bound row within :data:`L2_MULTIPLE` L2 caches is read against the
    L2-resident copy where the probe measured it (else, as older records had it, the
    device-to-device copy); a transfer against :func:`link_reference`."""
    from gpubench.spec import kernel_bound

    bound = kernel_bound(row["kernel"])
    gpu = row["device"] == "gpu"
    if bound == "memory":
        key = "d2d_copy_gbps" if gpu else "cpu_copy_gbps"
        if gpu and positive(ceilings.get("l2_copy_gbps")) > 0 and in_l2(
                row, ceilings, FALLBACK_L2_BYTES):
            key = "l2_copy_gbps"
        value = row["gbps"]
    elif bound == "compute":
        prefix = "" if gpu else "cpu_"
        key = prefix + ("sgemm_gflops" if row["dtype"] == "float32" else "dgemm_gflops")
        value = row["gflops"]
    elif bound == "transfer" and gpu:
        label, reference = link_reference(row, ceilings)
        value = positive(row.get("gbps"))
        if not label or not value > 0:
            return "", float("nan")
        return label, 100.0 * value / reference
    else:
        return "", float("nan")
    ceiling = positive(ceilings.get(key))
    if not ceiling > 0 or value is None or not np.isfinite(value):
        return "", float("nan")
    unit = "GFLOP/s" if key.endswith("gflops") else "GB/s"
    return f"{key.rsplit('_', 1)[0]} {ceiling:.0f} {unit}", 100.0 * float(value) / ceiling
