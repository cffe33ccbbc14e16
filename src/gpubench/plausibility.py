"""Plausibility gates: a number faster than the hardware allows is refused, never ranked.

A correct result can still come with an impossible time. The commonest cause is work
that escapes the clock: an implementation that launches on a stream of its own leaves
the CUDA events on the caller's stream around an empty stretch, and the row then reads
tens of times faster than memory can move its bytes. The gates below turn such a row's
status from ``ok`` into ``implausible``, with the reason; the row keeps its numbers.
GPU rows, but for the two CPU gates below (a CPU row's clock is the caller's wall
clock).

* **Above a measured ceiling**, by more than :data:`MAX_OVER_CEILING`:

  - a memory-bound kernel whose counted bytes exceed :data:`L2_MULTIPLE` times the L2
    cache, against the probe's device-to-device copy (``d2d_copy_gbps``); one whose
    bytes fit in that, against the probe's hot copy inside the L2 (``l2_copy_gbps``):
    data that small may be served from L2, faster than memory, but not faster than L2.
    A probe record without the L2-resident copy (older probes) leaves such rows
    unchecked, as before; :func:`gate_notes` says so;
  - a FLOP rate above the probe's GEMM rate for the dtype, whatever the size;
  - a transfer above the pinned rate of the bus in its direction, at its size (or at
    the largest probed size: :func:`gpubench.ceilings.link_reference`). An older probe
    record has the host-to-device rate only: device-to-host rows are then unchecked.
* **A caller that waited less than the device worked.** The ``sync`` caller clock is
  one call and a wait for its result on the host clock, which contains the device's
  work on the call; a device clock reading beyond it counted time that was not the
  call's work. One rule, whatever the shape of the sync samples' distribution: once the
  row has at least :data:`SYNC_MIN_SAMPLES` sync samples, a sync median more than
  :data:`SYNC_BELOW_TOLERANCE` of the device median below it, and more than
  :data:`SYNC_BELOW_MIN_S` (a host timer's resolution and a thread's wake-up), is
  refused. The quartiles play no part: a wide or two-valued sync distribution (most
  calls fast, a few slow) has an upper quartile that reaches the device clock's lower
  one while its median sits far below, and overlap would let it through. A row with
  fewer sync samples is not judged by this gate (a median of one or two waits is one
  wake-up); one whose count is not recorded (an older schema) is judged on its median.
  Rows on the device's own clock only (events, CUPTI): a host-timed row's "device"
  time is the same host clock and wait as its sync clock.
* **A caller's pipelined time far below the device time.** Calls back to back and one
  wait on the host clock (``pipelined_median_s``, per call) cannot take less than the
  device worked on each call: below :data:`PIPELINED_BELOW_RATIO` of the device clock
  (beyond noise: the pipelined upper quartile under the device's lower one, and more
  than :data:`SYNC_BELOW_MIN_S` apart) one of the two clocks is wrong. The ratio allows
  the device clock's own gaps: CUDA events around one call count the launch, which the
  pipelined calls overlap (the lowest ratio among the 7,779 correct GPU rows on the
  device's clock in ``evidence/``: 0.25, torch's 2-D FFT at 2**20; launch-bound rows
  0.41-0.5). Rows on the device's own clock only, as the sync gate.
* **A CPU row far faster than its threads can stream memory.** A memory-bound CPU row
  whose counted bytes exceed :data:`L2_MULTIPLE` times every cache of the host together
  (``cpu_cache_bytes``, which the probe reads from the kernel's sysfs) comes from
  memory: it is refused above :data:`CPU_MEMORY_MARGIN` times ``threads`` times the
  probe's single-threaded copy (``cpu_copy_gbps``). One thread streams about one
  copy's rate, more threads at most add theirs; the margin is wide because that copy
  is a loose reference on a CPU: a read-only loop moves no write-allocate traffic and
  counts up to 1.5x a copy's bytes, and on a shared host the copy the probe timed and
  the row can each run beside other work (on this project's 2-core machine a 256 MiB
  dot product read 0.6-1.5x the copy timed just before it, and a smoke run's reduction
  over 128 MiB read above it). Within the caches the probe measures no bandwidth (a
  copy timed from Python reads lower than a compiled loop goes); a row there is
  refused above what its threads' cores can move at all: :data:`CPU_BYTES_PER_CYCLE`
  per cycle each (two 64-byte loads and one 64-byte store a cycle is the most any
  x86 or Arm core's L1 serves; 256 leaves room), at :data:`CPU_CLOCK_MARGIN` times the
  fastest clock the probe read (``cpu_clock_hz``; a virtual machine reports its nominal
  clock, which turbo exceeds).
* **A CPU call faster than timing nothing.** The probe times an empty call through the
  harness (``timer_overhead_s.per_sample_s``): the floor under every CPU sample. A CPU
  row whose median is under :data:`CALL_FLOOR_SHARE` of it did not come from a call
  (the committed CPU rows sit 4-8x above it; the share leaves room for a floor timed
  while the host was busy).
* **Work missing from the timed stream.** Where the work needs at least
  :data:`ESCAPE_MIN_WORK_S` at the measured ceilings, device time below
  :data:`ESCAPE_RATIO` of the time the device provably worked per call: the pipelined
  caller clock's wait after the calls had returned (``pipelined_wait_s``). The device
  cannot finish later than its work allows, so that wait bounds its work per call from
  below; a device clock far under it missed work that ran elsewhere (another stream).
  A call whose time goes to the host (dispatch, an allocation) waits little and passes:
  its device clock is right, and its caller's clock says what the host costs.

The ceiling and escape thresholds were read off the H100 evidence (``evidence/plausibility-gates/
README.md``, "What the gates saw"): every correct GPU row stays inside them with a wide
margin, and a side-stream ``vector_add`` (:mod:`gpubench.kernels.vector_add.mutants`)
falls far outside both. The sync gate refuses 11 of the 1,068 GPU rows with a sync clock
in ``evidence/quick-suite-agreement/full-h100`` (6 of them, 13-46 % below, with sync
quartiles that reach the device clock's: CuPy's float64 ``vector_add`` at 1,024 and 2-D
FFT at 65,536 among them), 3 of 1,051 in ``evidence/energy-per-call/h100`` (torch autograd
rosenbrock float32 at 65,536: sync 7.69 ms against 8.60 ms on the device clock) and 9 of
1,051 in ``evidence/energy-per-call/h200`` (pageable device-to-host copies, torch SVD at n=256,
torch autograd rosenbrock): calls that block the host or launch thousands of small
kernels, whose event interval spans host time as well, measured at another moment than
the sync samples. Each comparison is strict (``>``, ``<``): a row exactly at a
threshold passes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from gpubench.ceilings import (
    CALL_FLOOR_KEY,
    L2_MULTIPLE,
    ceiling_for,
    cleaned,
    fmt_bytes,
    gemm_key,
    l2_size,
    link_reference,
    link_table,
    number,
)
from gpubench.spec import find_kernel, kernel_bound

#: a throughput more than this much above its measured ceiling is refused (1.10: 10 %)
MAX_OVER_CEILING = 1.10
#: a sync caller median below the device median by more than this share of the device
#: median (and :data:`SYNC_BELOW_MIN_S`) is refused ...
SYNC_BELOW_TOLERANCE = 0.10
#: ... once the row has at least this many sync samples (a median of 5 has a middle)
SYNC_MIN_SAMPLES = 5
#: ... and by more than this many seconds: the host timer's resolution and a wake-up
SYNC_BELOW_MIN_S = 2e-6
#: a memory-bound CPU row past the caches is refused above this many times its threads'
#: share of the probe's one-thread copy (module docstring: why so wide)
CPU_MEMORY_MARGIN = 10.0
#: bytes one CPU core can count per cycle at most (loads and stores from its L1), and how
#: far above the probe's clock a core may turbo: the in-cache CPU gate's bound
CPU_BYTES_PER_CYCLE = 256
CPU_CLOCK_MARGIN = 2.0
#: a CPU row under this share of the probe's empty-call time is refused
CALL_FLOOR_SHARE = 0.5
#: a pipelined caller time below this share of the device time is refused (with
#: non-overlapping quartiles and :data:`SYNC_BELOW_MIN_S` between the medians)
PIPELINED_BELOW_RATIO = 0.1
#: device time below this share of the pipelined caller time means escaped work ...
ESCAPE_RATIO = 0.5
#: ... where the work needs at least this long at the measured ceilings
ESCAPE_MIN_WORK_S = 100e-6


def is_device_timer(timer: Any) -> bool:
    """Whether a ``timer`` reads the device's own clock (CUDA events, CUPTI), not the
    host's (``perf_counter...``): only such samples can miss work the device did."""
    text = str(timer or "")
    return bool(text) and not text.startswith("perf_counter")


def device_clocked(row: Mapping[str, Any]) -> bool:
    """Whether the row's samples are on the device's own clock (:func:`is_device_timer`)."""
    return is_device_timer(row.get("timer", ""))


def least_work_s(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> float:
    """The least device time the row's counted work needs on this GPU: its bytes at the
    copy ceiling or its flops at the GEMM ceiling, whichever is longer; NaN if unknown."""
    copy = number(ceilings.get("d2d_copy_gbps"))
    gemm = number(ceilings.get(gemm_key(row.get("dtype")), math.nan))
    times = []
    nbytes, flops = number(row.get("bytes")), number(row.get("flops"))
    if kernel_bound(row.get("kernel")) != "transfer":
        if nbytes > 0 and copy > 0:
            times.append(nbytes / (copy * 1e9))
        if flops > 0 and gemm > 0:
            times.append(flops / (gemm * 1e9))
    return max(times) if times else math.nan


def _bandwidth_reason(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> str:
    """The memory and transfer gates: throughput above the row's ceiling."""
    bound = kernel_bound(row.get("kernel"))
    gbps, nbytes = number(row.get("gbps")), number(row.get("bytes"))
    if bound == "transfer":
        label, ref = link_reference(row, ceilings)
        if label and gbps > MAX_OVER_CEILING * ref:
            return (f"device time gives {gbps:,.1f} GB/s, {100 * gbps / ref:.0f} % of the "
                    f"measured pinned rate of the bus ({label}): faster than the link; "
                    "work ran outside the timed stream")
        return ""
    if bound != "memory" or not nbytes > 0:
        return ""
    l2, _ = l2_size(ceilings)
    if nbytes > L2_MULTIPLE * l2:  # from memory: the copy ceiling
        ceiling, what = number(ceilings.get("d2d_copy_gbps")), "copy ceiling"
        where, faster = f"{nbytes / 2**20:,.0f} MiB, over", "memory"
    else:  # from the L2
        ceiling, what = number(ceilings.get("l2_copy_gbps")), "L2-resident copy ceiling"
        where, faster = f"{fmt_bytes(nbytes)}, within", "the cache"
    if ceiling > 0 and gbps > MAX_OVER_CEILING * ceiling:
        return (f"device time gives {gbps:,.0f} GB/s, {100 * gbps / ceiling:.0f} % of the "
                f"measured {what} ({ceiling:,.0f} GB/s) on {where} {L2_MULTIPLE:g}x the "
                f"{l2 / 2**20:.0f} MiB L2: faster than {faster}; work ran outside the timed "
                "stream")
    return ""


def _sync_reason(row: Mapping[str, Any]) -> str:
    """The caller's sync median below the device median (module docstring)."""
    if not device_clocked(row):
        return ""
    count = number(row.get("sync_samples"))
    if count < SYNC_MIN_SAMPLES:  # NaN (not recorded) compares False: judged
        return ""
    device = number(row.get("median_s"))
    sync, sync_q3 = number(row.get("sync_median_s")), number(row.get("sync_q3_s"))
    gap = device - sync
    if gap > SYNC_BELOW_TOLERANCE * device and gap > SYNC_BELOW_MIN_S:
        quartile = (f" (upper quartile {sync_q3 * 1e6:,.1f} µs)"
                    if math.isfinite(sync_q3) else "")
        return (f"a caller that waited for each call's result (sync clock) took "
                f"{sync * 1e6:,.1f} µs{quartile} in its median, {100 * gap / device:.0f} % "
                f"less than the device clock's {device * 1e6:,.1f} µs: a caller that "
                "waits cannot wait less than the device worked; the device clock "
                "counted more than the call's work")
    return ""


def _pipelined_reason(row: Mapping[str, Any]) -> str:
    """The caller's pipelined clock far below the device clock (module docstring)."""
    if not device_clocked(row):
        return ""
    device, pipelined = number(row.get("median_s")), number(row.get("pipelined_median_s"))
    q1, q3 = number(row.get("q1_s")), number(row.get("pipelined_q3_s"))
    overlap = q3 >= q1 if math.isfinite(q1) and math.isfinite(q3) else False
    if (pipelined < PIPELINED_BELOW_RATIO * device and device - pipelined > SYNC_BELOW_MIN_S
            and not overlap):
        return (f"a caller's pipelined calls took {pipelined * 1e6:,.3g} µs each, "
                f"{100 * pipelined / device:.2g} % of the device clock's "
                f"{device * 1e6:,.3g} µs per call (under {100 * PIPELINED_BELOW_RATIO:.0f} "
                "%): calls cannot finish faster than the device works on them; one of "
                "the two clocks is wrong")
    return ""


def _cpu_reason(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> str:
    """A CPU call faster than timing an empty one, or a memory-bound CPU row past the
    caches above its threads' copy rate (module docstring)."""
    floor, median = number(ceilings.get(CALL_FLOOR_KEY)), number(row.get("median_s"))
    if median < CALL_FLOOR_SHARE * floor:
        return (f"{median * 1e9:,.3g} ns per call is less than half the "
                f"{floor * 1e9:,.3g} ns the probe measured for timing an empty call on "
                "this host: faster than the clock that timed it")
    copy, cache = number(ceilings.get("cpu_copy_gbps")), number(ceilings.get("cpu_cache_bytes"))
    nbytes, gbps = number(row.get("bytes")), number(row.get("gbps"))
    threads = number(row.get("threads"))
    clock = number(ceilings.get("cpu_clock_hz"))
    cores_gbps = threads * CPU_BYTES_PER_CYCLE * CPU_CLOCK_MARGIN * clock / 1e9
    if kernel_bound(row.get("kernel")) == "memory" and cores_gbps > 0 \
            and gbps > cores_gbps:
        return (f"{gbps:,.1f} GB/s is more than {threads:.0f} core(s) can move at all: "
                f"{CPU_BYTES_PER_CYCLE} bytes a cycle each at {CPU_CLOCK_MARGIN:g}x the "
                f"{clock / 1e9:,.2f} GHz clock the probe read ({cores_gbps:,.0f} GB/s)")
    if not (kernel_bound(row.get("kernel")) == "memory" and copy > 0 and cache > 0
            and threads >= 1 and nbytes > L2_MULTIPLE * cache):
        return ""
    if gbps > CPU_MEMORY_MARGIN * threads * copy:
        return (f"{gbps:,.1f} GB/s on {fmt_bytes(nbytes)}, over {L2_MULTIPLE:g}x the "
                f"host's {fmt_bytes(cache)} of caches, is {gbps / (threads * copy):,.1f} "
                f"times what {threads:.0f} thread(s) stream from memory at the probe's "
                f"copy rate ({copy:,.1f} GB/s each; refused above "
                f"{CPU_MEMORY_MARGIN:g}x): faster than memory")
    return ""


def reason(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> str:
    """Why the row's time is impossible on this machine, or '' if it is plausible."""
    if row.get("device") == "cpu":
        return _cpu_reason(row, ceilings)
    if row.get("device") != "gpu":
        return ""
    text = _bandwidth_reason(row, ceilings)
    if text:
        return text
    key = gemm_key(row.get("dtype"))
    gemm = number(ceilings.get(key, math.nan))
    gflops = number(row.get("gflops"))
    spec = find_kernel(row.get("kernel"))
    if gemm > 0 and (spec is None or spec.gemm_gate) and gflops > MAX_OVER_CEILING * gemm:
        return (f"device time gives {gflops:,.0f} GFLOP/s, {100 * gflops / gemm:.0f} % of "
                f"the measured {key.split('_')[0].upper()} ceiling ({gemm:,.0f} "
                "GFLOP/s): faster than the arithmetic units")
    text = _sync_reason(row) or _pipelined_reason(row)
    if text:
        return text
    work = least_work_s(row, ceilings)
    device, busy = number(row.get("median_s")), number(row.get("pipelined_wait_s"))
    if (device_clocked(row) and work >= ESCAPE_MIN_WORK_S
            and busy > 0 and device < ESCAPE_RATIO * busy):
        return (f"device time {device * 1e6:,.1f} µs is {100 * device / busy:.1f} % of the "
                f"{busy * 1e6:,.1f} µs per call a caller waited for the device after its "
                f"calls had returned (pipelined {number(row.get('pipelined_median_s')) * 1e6:,.1f}"
                f" µs per call; the counted work needs at least {work * 1e6:,.1f} µs at the "
                "measured ceilings): work escaped the timed stream")
    return ""


def gate_notes(ceilings: Mapping[str, Any]) -> list[str]:
    """What the gates could not check with this probe record (an older probe's, without
    the newer ceilings), one sentence each; empty when every gate had its ceiling."""
    if not any(number(ceilings.get(k)) > 0 for k in ("d2d_copy_gbps", "sgemm_gflops",
                                                    "dgemm_gflops")):
        return []  # no GPU ceilings at all: nothing on the GPU was gated
    notes = []
    if not number(ceilings.get("l2_copy_gbps")) > 0:
        notes.append(f"the probe record has no L2-resident copy ceiling (an older probe): "
                     f"memory-bound GPU rows moving at most {L2_MULTIPLE:g}x the L2 were "
                     "not checked against a bandwidth ceiling, and read their % against "
                     "the device-to-device copy")
    if number(ceilings.get("cpu_copy_gbps")) > 0 and not number(
            ceilings.get("cpu_cache_bytes")) > 0:
        notes.append("the probe record has no size of the CPU's caches (an older probe): "
                     "CPU rows were not checked against the CPU copy ceiling")
    if number(ceilings.get("cpu_copy_gbps")) > 0 and not number(
            ceilings.get("cpu_clock_hz")) > 0:
        notes.append("the probe record has no CPU clock (an older probe): CPU rows within "
                     "the caches were not checked against what their cores can move")
    if not link_table(ceilings):
        notes.append("the probe record has no pinned rates per direction and size (an "
                     "older probe): host-to-device transfers are read against the one "
                     "pinned rate it measured (1 GiB), device-to-host transfers against "
                     "none")
    return notes


def judge(frame: pd.DataFrame, ceilings: Mapping[str, Any], keep: bool = False
          ) -> pd.DataFrame:
    """Fill ``ceiling``/``pct_of_ceiling`` and apply the gates to every measured row.

    Rows with status ``ok`` or ``implausible`` are (re-)judged, so a timings file judged
    by older thresholds reads the same as a new one; other statuses are left alone.
    With ``keep`` (no probe record to judge by), rows already ``implausible`` stay so,
    with their reason, and the ceiling columns are kept: only the gates that need no
    ceiling (the sync and pipelined clocks against the device's) can add refusals.
    Returns the frame (changed in place). Ceilings that are not positive numbers are
    ignored (an environment record is data, not trusted); the per-direction pinned
    rates are a nested mapping, read by :func:`gpubench.ceilings.link_table`."""
    ceilings = cleaned(ceilings)
    judged = frame["status"].isin(["ok", "implausible"])
    ceil_txt, pct, status, why = [], [], [], []
    for good, (_, row) in zip(judged, frame.iterrows(), strict=True):
        text = reason(row, ceilings) if good else ""
        if not good or keep:
            ceil_txt.append(row.get("ceiling", ""))
            pct.append(row.get("pct_of_ceiling", math.nan))
        else:
            label, value = ceiling_for(row, ceilings)
            ceil_txt.append(label)
            pct.append(value)
        if not good or (keep and not text and row["status"] == "implausible"):
            status.append(row["status"])
            why.append(row["reason"])
            continue
        status.append("implausible" if text else "ok")
        why.append(text)
    frame["ceiling"] = ceil_txt
    frame["pct_of_ceiling"] = pd.to_numeric(pd.Series(pct, index=frame.index),
                                            errors="coerce").astype("float64")
    frame["status"] = status
    frame["reason"] = why
    return frame
