"""Physical bounds at every size: the L2-resident ceiling below 2x L2,
the copy ceiling above it, and a sync caller time below the device time refused.

Stand-in rows and ceilings only: each gate is tested at its threshold edges (exactly at
the threshold passes, the next float past it fails), so a ``>`` turned into ``>=``, a
dropped condition or a swapped ceiling changes an outcome here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gpubench import plausibility
from gpubench.ceilings import FALLBACK_L2_BYTES, L2_MULTIPLE, ceiling_for
from gpubench.plausibility import MAX_OVER_CEILING, SYNC_BELOW_MIN_S, SYNC_BELOW_TOLERANCE

L2 = 50 * 2**20
#: a stand-in GPU: copy 3,000 GB/s from memory, 8,000 GB/s inside its 50 MiB L2
CEILINGS = {"d2d_copy_gbps": 3000.0, "l2_copy_gbps": 8000.0, "l2_bytes": L2,
            "sgemm_gflops": 50_000.0, "dgemm_gflops": 50_000.0}
OLD = {k: v for k, v in CEILINGS.items() if k != "l2_copy_gbps"}  # an older probe record


def _row(**kw):
    """A hot GPU vector_add row on CUDA events; ``gbps`` is given, not derived, so each
    test sets exactly the rate the gate compares."""
    row = {"device": "gpu", "kernel": "vector_add", "variant": "default", "dtype": "float32",
           "bytes": 12.0 * 2**20, "flops": 2.0**20, "timer": "cuda_event", "status": "ok",
           "reason": "", "median_s": 1e-5, "q1_s": 0.98e-5, "q3_s": 1.02e-5, "gbps": 1000.0,
           "gflops": 1.0, "sync_median_s": 2e-5, "sync_q1_s": 1.9e-5, "sync_q3_s": 2.1e-5,
           "pipelined_median_s": 1.2e-5, "pipelined_wait_s": 1e-6}
    row.update(kw)
    return row


def _above(x: float) -> float:
    return float(np.nextafter(x, math.inf))


# -- the L2-resident ceiling ------------------------------------------------------------------


@pytest.mark.parametrize(("nbytes", "gbps", "refused"), [
    # inside 2x L2: against the L2-resident copy
    (12 * 2**20, MAX_OVER_CEILING * 8000.0, ""),                      # exactly at 1.10x
    (12 * 2**20, _above(MAX_OVER_CEILING * 8000.0), "faster than the cache"),
    (12 * 2**20, 5000.0, ""),          # above the memory ceiling, but served from L2
    # exactly 2x L2 is still "within": the L2 gate, not the memory one
    (L2_MULTIPLE * L2, 5000.0, ""),
    (L2_MULTIPLE * L2, _above(MAX_OVER_CEILING * 8000.0), "faster than the cache"),
    # one byte more: against the device-to-device copy
    (L2_MULTIPLE * L2 + 1, 5000.0, "faster than memory"),
    (L2_MULTIPLE * L2 + 1, MAX_OVER_CEILING * 3000.0, ""),
    (L2_MULTIPLE * L2 + 1, _above(MAX_OVER_CEILING * 3000.0), "faster than memory"),
])
def test_memory_gate_edges(nbytes, gbps, refused):
    text = plausibility.reason(_row(bytes=float(nbytes), gbps=gbps), CEILINGS)
    assert (refused in text) if refused else text == "", text


def test_l2_gate_reason_names_the_l2_ceiling_and_size():
    text = plausibility.reason(_row(gbps=20_000.0), CEILINGS)
    assert "L2-resident copy ceiling (8,000 GB/s)" in text
    assert "12 MiB" in text and "50 MiB L2" in text


@pytest.mark.parametrize("l2_copy", [None, "n/a", -1.0, 0.0, math.nan, math.inf])
def test_without_an_l2_ceiling_small_rows_are_not_checked_as_before(l2_copy):
    """An older (or broken) probe record: rows within 2x L2 pass whatever their rate, the
    rows above are checked as before, and the notes say what was not checked."""
    ceilings = dict(OLD) if l2_copy is None else {**OLD, "l2_copy_gbps": l2_copy}
    assert plausibility.reason(_row(gbps=1e6), ceilings) == ""
    big = _row(bytes=L2_MULTIPLE * L2 + 1, gbps=5000.0)
    assert "faster than memory" in plausibility.reason(big, ceilings)
    notes = plausibility.gate_notes(ceilings)
    assert any("no L2-resident copy ceiling" in n for n in notes)
    # and the row's % is read against the copy ceiling, as before
    label, pct = ceiling_for(_row(gbps=1500.0), ceilings)
    assert label.startswith("d2d_copy") and pct == pytest.approx(50.0)


def test_with_an_l2_ceiling_small_rows_read_their_percent_against_it():
    label, pct = ceiling_for(_row(gbps=2000.0), CEILINGS)
    assert label == "l2_copy 8000 GB/s" and pct == pytest.approx(25.0)
    label, pct = ceiling_for(_row(bytes=L2_MULTIPLE * L2 + 1, gbps=1500.0), CEILINGS)
    assert label == "d2d_copy 3000 GB/s" and pct == pytest.approx(50.0)
    assert plausibility.gate_notes(CEILINGS) == [] or all(
        "L2" not in n for n in plausibility.gate_notes(CEILINGS))


def test_unknown_l2_size_falls_back_to_a_large_l2():
    ceilings = {k: v for k, v in CEILINGS.items() if k != "l2_bytes"}
    inside = FALLBACK_L2_BYTES * L2_MULTIPLE
    assert plausibility.reason(_row(bytes=inside, gbps=5000.0), ceilings) == ""
    assert "faster than memory" in plausibility.reason(_row(bytes=inside + 1, gbps=5000.0),
                                                       ceilings)


def test_cpu_rows_and_unknown_bytes_are_not_gated():
    assert plausibility.reason(_row(device="cpu", gbps=1e9), CEILINGS) == ""
    assert plausibility.reason(_row(bytes=math.nan, gbps=1e9), CEILINGS) == ""


# -- the sync clock below the device clock ------------------------------------------------------


def _sync_row(device: float, sync: float, q1: float | None = None,
              sync_q3: float | None = None, **kw):
    """A row whose device median is ``device`` and sync median ``sync``; quartiles 1 %
    around them unless given; the pipelined clock at the device's time."""
    kw.setdefault("pipelined_median_s", device)
    return _row(median_s=device, q1_s=device * 0.99 if q1 is None else q1,
                q3_s=device * 1.01, sync_median_s=sync, sync_q1_s=sync * 0.99,
                sync_q3_s=sync * 1.01 if sync_q3 is None else sync_q3, **kw)


def test_sync_gate_relative_edge(monkeypatch):
    """Binary fractions make the edge exact: a tolerance of 1/8 on a 2**-10 s call is a
    gap of exactly 2**-13 s."""
    monkeypatch.setattr(plausibility, "SYNC_BELOW_TOLERANCE", 0.125)
    device = 2.0**-10
    at = device - 2.0**-13
    assert device - at == 0.125 * device
    assert plausibility.reason(_sync_row(device, at, sync_q3=at), CEILINGS) == ""
    past = float(np.nextafter(at, -math.inf))
    assert "cannot wait less" in plausibility.reason(_sync_row(device, past, sync_q3=past),
                                                     CEILINGS)


def test_sync_gate_absolute_edge(monkeypatch):
    """At 2**-16 s (15 µs) a gap of 2**-19 s is 12.5 %, beyond the relative tolerance:
    only the absolute floor decides."""
    monkeypatch.setattr(plausibility, "SYNC_BELOW_MIN_S", 2.0**-19)
    device = 2.0**-16
    at = device - 2.0**-19
    assert device - at == 2.0**-19 and 2.0**-19 > SYNC_BELOW_TOLERANCE * device
    assert plausibility.reason(_sync_row(device, at, sync_q3=at), CEILINGS) == ""
    past = float(np.nextafter(at, -math.inf))
    assert "cannot wait less" in plausibility.reason(_sync_row(device, past, sync_q3=past),
                                                     CEILINGS)


@pytest.mark.parametrize(("device", "sync", "refused"), [
    (1e-3, 0.905e-3, False),    # 9.5 % below: inside the 10 % tolerance
    (1e-3, 0.895e-3, True),     # 10.5 %
    (10e-6, 8.1e-6, False),     # 1.9 µs (19 %): inside the 2 µs floor
    (10e-6, 7.9e-6, True),      # 2.1 µs
    (5e-6, 3.5e-6, False),      # 1.5 µs on a 5 µs call (30 %): timer resolution
])
def test_sync_gate_shipped_thresholds(device, sync, refused):
    assert (SYNC_BELOW_TOLERANCE, SYNC_BELOW_MIN_S) == (0.10, 2e-6)
    text = plausibility.reason(_sync_row(device, sync, sync_q3=sync), CEILINGS)
    assert ("cannot wait less" in text) if refused else text == "", text


def test_sync_gate_refuses_a_two_valued_sync_distribution():
    """Most waits short, a few long: the sync clock's upper quartile reaches above the
    device clock's lower one, yet its median is 30 % below the device median. One rule
    on the medians refuses it, whatever the spread."""
    waits = np.array([0.7e-3] * 6 + [1.3e-3] * 5)
    q1, median, q3 = np.percentile(waits, [25, 50, 75])
    assert q3 > 0.99e-3 and median == 0.7e-3  # the middle halves overlap
    row = _sync_row(1e-3, float(median), sync_q3=float(q3), sync_samples=waits.size)
    row["sync_q1_s"] = float(q1)
    assert "cannot wait less" in plausibility.reason(row, CEILINGS)
    assert "30 % less than the device clock's 1,000.0 µs" in plausibility.reason(row, CEILINGS)


def test_sync_gate_sample_count_edge():
    """At :data:`SYNC_MIN_SAMPLES` sync samples the median is judged, one fewer is not;
    a row that does not record its count is judged."""
    n = plausibility.SYNC_MIN_SAMPLES
    assert n == 5
    assert "cannot wait less" in plausibility.reason(_sync_row(1e-3, 0.5e-3, sync_samples=n),
                                                     CEILINGS)
    assert plausibility.reason(_sync_row(1e-3, 0.5e-3, sync_samples=n - 1), CEILINGS) == ""
    assert "cannot wait less" in plausibility.reason(
        _sync_row(1e-3, 0.5e-3, sync_samples=math.nan), CEILINGS)


@pytest.mark.parametrize("kw", [
    {"timer": "perf_counter+sync"},                      # host-timed: the same clock twice
    {"sync_median_s": math.nan, "sync_q3_s": math.nan},  # cold rows: no caller clock
    {"device": "cpu"},
])
def test_sync_gate_needs_a_device_clock_and_a_sync_clock(kw):
    row = _sync_row(1e-3, 0.5e-3)
    row.update(kw)
    assert plausibility.reason(row, CEILINGS) == ""


def test_sync_above_device_is_plausible():
    assert plausibility.reason(_sync_row(1e-3, 1.5e-3), CEILINGS) == ""


def test_judge_applies_both_new_gates_and_keeps_the_numbers():
    rows = [_row(gbps=20_000.0), _sync_row(1e-3, 0.5e-3), _row(),
            _row(status="error", reason="boom")]
    frame = pd.DataFrame(rows)
    frame["ceiling"], frame["pct_of_ceiling"] = "", math.nan
    frame["size"] = 1
    plausibility.judge(frame, CEILINGS)
    assert list(frame["status"]) == ["implausible", "implausible", "ok", "error"]
    assert "faster than the cache" in frame["reason"].iloc[0]
    assert "cannot wait less" in frame["reason"].iloc[1]
    assert frame["pct_of_ceiling"].iloc[0] == pytest.approx(250.0)  # 20,000 of 8,000
    assert frame["reason"].iloc[3] == "boom"
    # judged again by an older probe record: the in-L2 row is no longer checked, but the
    # sync gate needs no ceiling at all
    plausibility.judge(frame, OLD)
    assert list(frame["status"]) == ["ok", "implausible", "ok", "error"]


def test_the_l2_loop_kernels_compile_for_h100_and_keep_every_pass() -> None:
    """The L2-resident ceiling's loops compile with NVRTC for sm_90, and every pass's
    loads and stores survive into the code (volatile asm: none merged or hoisted)."""
    from test_cuda_sources import nvrtc_compile

    from gpubench.ceilings import L2_LOOP_SOURCE, l2_loop_reps

    ok, log, ptx = nvrtc_compile(L2_LOOP_SOURCE, "l2_loop.cu", ["--gpu-architecture=sm_90"])
    assert ok, log
    text = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
    assert text.count("ld.global.cg.v4.f32") >= 2 and "st.global.cg.v4.f32" in text
    # one launch lasts long enough that launch gaps do not count: 12.5 MiB at 5 TB/s
    assert l2_loop_reps(13_107_200) * 13_107_200 / 5e12 >= 2e-4
