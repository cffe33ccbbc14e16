"""Plausibility gates: a number faster than the hardware allows is refused, never ranked.

A correct result can still come with an impossible time. The commonest cause is work
that escapes the clock: an implementation that launches on a stream of its own leaves
the CUDA events on the caller's stream around an empty stretch, and the row then reads
tens of times faster than memory can move its bytes. Two gates turn such a row's status
from ``ok`` into ``implausible``, with the reason; the row keeps its numbers.

* **Above a measured ceiling.** On a GPU, device time whose throughput exceeds the
  probe's copy bandwidth by more than :data:`MAX_OVER_CEILING` for a memory-bound kernel
  whose data is more than :data:`L2_MULTIPLE` times the L2 cache (smaller data may be
  served from L2, which is faster than memory), or a FLOP rate more than that above the
  probe's GEMM rate for the dtype, whatever the size.
* **Work missing from the timed stream.** Where the work needs at least
  :data:`ESCAPE_MIN_WORK_S` at the measured ceilings, device time below
  :data:`ESCAPE_RATIO` of the time the device provably worked per call: the pipelined
  caller clock's wait after the calls had returned (``pipelined_wait_s``). The device
  cannot finish later than its work allows, so that wait bounds its work per call from
  below; a device clock far under it missed work that ran elsewhere (another stream).
  A call whose time goes to the host (dispatch, an allocation) waits little and passes:
  its device clock is right, and its caller's clock says what the host costs.

The thresholds were read off the H100 evidence (``evidence/h100/README.md``, "Plausibility
gates"): every correct GPU row stays inside them with a wide margin, and a side-stream
``vector_add`` (:mod:`gpubench.mutants`) falls far outside both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from gpubench.ceilings import KERNEL_BOUND, ceiling_for

#: a throughput more than this much above its measured ceiling is refused (1.10: 10 %)
MAX_OVER_CEILING = 1.10
#: the memory-bandwidth gate applies to data moving more than this many L2 caches
L2_MULTIPLE = 2.0
#: L2 size assumed where the probe could not read it (past any current GPU's L2)
FALLBACK_L2_BYTES = 128 * 2**20
#: device time below this share of the pipelined caller time means escaped work ...
ESCAPE_RATIO = 0.5
#: ... where the work needs at least this long at the measured ceilings
ESCAPE_MIN_WORK_S = 100e-6
_GEMM_KEY = {"float32": "sgemm_gflops", "complex64": "sgemm_gflops",
             "float64": "dgemm_gflops", "complex128": "dgemm_gflops"}


def _num(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


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
    copy = _num(ceilings.get("d2d_copy_gbps"))
    gemm = _num(ceilings.get(_GEMM_KEY.get(str(row.get("dtype")), ""), math.nan))
    times = []
    nbytes, flops = _num(row.get("bytes")), _num(row.get("flops"))
    if KERNEL_BOUND.get(str(row.get("kernel"))) != "transfer":
        if nbytes > 0 and copy > 0:
            times.append(nbytes / (copy * 1e9))
        if flops > 0 and gemm > 0:
            times.append(flops / (gemm * 1e9))
    return max(times) if times else math.nan


def reason(row: Mapping[str, Any], ceilings: Mapping[str, Any]) -> str:
    """Why the row's time is impossible on this machine, or '' if it is plausible."""
    if row.get("device") != "gpu":
        return ""
    bound = KERNEL_BOUND.get(str(row.get("kernel")))
    copy = _num(ceilings.get("d2d_copy_gbps"))
    l2 = _num(ceilings.get("l2_bytes"))
    l2 = l2 if l2 > 0 else FALLBACK_L2_BYTES
    gbps, nbytes = _num(row.get("gbps")), _num(row.get("bytes"))
    if (bound == "memory" and copy > 0 and nbytes > L2_MULTIPLE * l2
            and gbps > MAX_OVER_CEILING * copy):
        return (f"device time gives {gbps:,.0f} GB/s, {100 * gbps / copy:.0f} % of the "
                f"measured copy ceiling ({copy:,.0f} GB/s) on {nbytes / 2**20:,.0f} MiB, "
                f"over {L2_MULTIPLE:g}x the {l2 / 2**20:.0f} MiB L2: faster than memory; "
                "work ran outside the timed stream")
    gemm_key = _GEMM_KEY.get(str(row.get("dtype")), "")
    gemm = _num(ceilings.get(gemm_key, math.nan))
    gflops = _num(row.get("gflops"))
    if gemm > 0 and gflops > MAX_OVER_CEILING * gemm:
        return (f"device time gives {gflops:,.0f} GFLOP/s, {100 * gflops / gemm:.0f} % of "
                f"the measured {gemm_key.split('_')[0].upper()} ceiling ({gemm:,.0f} "
                "GFLOP/s): faster than the arithmetic units")
    work = least_work_s(row, ceilings)
    device, busy = _num(row.get("median_s")), _num(row.get("pipelined_wait_s"))
    if (device_clocked(row) and work >= ESCAPE_MIN_WORK_S
            and busy > 0 and device < ESCAPE_RATIO * busy):
        return (f"device time {device * 1e6:,.1f} µs is {100 * device / busy:.1f} % of the "
                f"{busy * 1e6:,.1f} µs per call a caller waited for the device after its "
                f"calls had returned (pipelined {_num(row.get('pipelined_median_s')) * 1e6:,.1f}"
                f" µs per call; the counted work needs at least {work * 1e6:,.1f} µs at the "
                "measured ceilings): work escaped the timed stream")
    return ""


def judge(frame: pd.DataFrame, ceilings: Mapping[str, Any]) -> pd.DataFrame:
    """Fill ``ceiling``/``pct_of_ceiling`` and apply the gates to every measured row.

    Rows with status ``ok`` or ``implausible`` are (re-)judged, so a timings file judged
    by older thresholds reads the same as a new one; other statuses are left alone.
    Returns the frame (changed in place). Ceilings that are not positive numbers are
    ignored (an environment record is data, not trusted)."""
    ceilings = {k: float(v) for k, v in ceilings.items() if _num(v) > 0}
    judged = frame["status"].isin(["ok", "implausible"])
    ceil_txt, pct, status, why = [], [], [], []
    for good, (_, row) in zip(judged, frame.iterrows(), strict=True):
        if not good:
            ceil_txt.append(row.get("ceiling", ""))
            pct.append(row.get("pct_of_ceiling", math.nan))
            status.append(row["status"])
            why.append(row["reason"])
            continue
        label, value = ceiling_for(row, ceilings)
        ceil_txt.append(label)
        pct.append(value)
        text = reason(row, ceilings)
        status.append("implausible" if text else "ok")
        why.append(text)
    frame["ceiling"] = ceil_txt
    frame["pct_of_ceiling"] = pd.to_numeric(pd.Series(pct, index=frame.index),
                                            errors="coerce").astype("float64")
    frame["status"] = status
    frame["reason"] = why
    return frame
