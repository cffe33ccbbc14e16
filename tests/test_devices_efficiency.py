"""Efficiency against both references: the vendor's datasheet peak
beside the measured ceiling, each transfer direction against its own ceiling, and every
share above 110 % flagged with its reason."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpubench import devices
from gpubench.ceilings import ceiling_for
from gpubench.devices import FLAG_ABOVE_PCT, pct_of_vendor, vendor_peak
from gpubench.report.sections import ceilings as section

MiB = 2**20


@pytest.mark.parametrize(("name", "device", "gbps", "fp32", "fp64"), [
    ("NVIDIA H100 80GB HBM3", "H100 SXM5", 3350, 67, 34),
    ("NVIDIA H100 PCIe", "H100 PCIe", 2000, 51, 26),
    ("NVIDIA H200", "H200 SXM", 4800, 67, 34),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM", 1555, 19.5, 9.7),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM", 2039, 19.5, 9.7),
    ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe", 1555, 19.5, 9.7),
    ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe", 1935, 19.5, 9.7),
    ("nvidia  l40s", "L40S", 864, 91.6, None),
    ("NVIDIA L4", "L4", 300, 30.3, None),
    ("NVIDIA A10", "A10", 600, 31.2, None),
    ("Tesla V100-SXM2-32GB", "V100 SXM2", 900, 15.7, 7.8),
])
def test_known_devices_match_their_datasheet_entry(name, device, gbps, fp32, fp64):
    peak = vendor_peak(name)
    assert peak is not None and peak.device == device
    assert (peak.memory_gbps, peak.fp32_tflops, peak.fp64_tflops) == (gbps, fp32, fp64)
    assert peak.source.startswith("NVIDIA") and "http" in peak.source and peak.checked


@pytest.mark.parametrize("name", [
    # near misses: other parts whose names contain a known one
    "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB", "NVIDIA H800", "NVIDIA L40",
    "NVIDIA A10G", "Tesla V100-PCIE-16GB", "Tesla V100S-PCIE-32GB", "NVIDIA A1000",
    "NVIDIA GeForce RTX 4090", "", "   ", None, 42])
def test_unknown_devices_get_no_peak(name):
    assert vendor_peak(name) is None


def test_unknown_device_says_so():
    assert devices.unknown_text("NVIDIA B200") == "no vendor peak known for NVIDIA B200"
    note, table = section.vendor_table({"gpus": [{"name": "NVIDIA B200"}]})
    assert table is None and "no vendor peak known for NVIDIA B200" in note


def test_gpu_name_prefers_the_ceilings_device():
    env = {"ceilings": {"gpu_name": "NVIDIA H200"}, "gpus": [{"name": "NVIDIA H100 PCIe"}]}
    assert devices.gpu_name(env) == "NVIDIA H200"
    assert devices.gpu_name({"gpus": [{"name": "NVIDIA L4"}]}) == "NVIDIA L4"
    assert devices.gpu_name({"gpus": []}) is None


def _row(kernel="vector_add", dtype="float32", gbps=math.nan, gflops=math.nan,
         nbytes=1e9, device="gpu", **kw):
    row = {"kernel": kernel, "dtype": dtype, "gbps": gbps, "gflops": gflops, "bytes": nbytes,
           "device": device, "status": "ok", "reason": "", "variant": "default"}
    row.update(kw)
    return row


def test_pct_of_vendor_per_bound():
    h100 = vendor_peak("NVIDIA H100 80GB HBM3")
    label, pct = pct_of_vendor(_row(gbps=3015.0), h100)
    assert label == "H100 SXM5 DRAM 3,350 GB/s" and pct == pytest.approx(90.0)
    # a float64 GEMM is bounded by the FP64 tensor cores (cuBLAS uses them), not 34 TF
    label, pct = pct_of_vendor(_row("matmul", "float64", gflops=55_922.0), h100)
    assert "FP64 tensor core 67" in label and pct == pytest.approx(83.47, abs=0.01)
    label, pct = pct_of_vendor(_row("matmul", "float32", gflops=51_120.0), h100)
    assert "FP32 67" in label and pct == pytest.approx(76.3, abs=0.05)
    # no vendor figure for the host link, for CPU rows or an unknown device
    assert pct_of_vendor(_row("transfer", gbps=50.0, variant="h2d_pinned"), h100)[0] == ""
    assert pct_of_vendor(_row(gbps=10.0, device="cpu"), h100)[0] == ""
    assert pct_of_vendor(_row(gbps=3000.0), None)[0] == ""
    # the L40S has no FP64 figure: no share rather than a made-up one
    assert pct_of_vendor(_row("matmul", "float64", gflops=1e3), vendor_peak("NVIDIA L40S")
                         )[0] == ""


#: a new probe record whose device-to-host link is faster than host-to-device
LINKS = {"d2d_copy_gbps": 3000.0, "l2_copy_gbps": 8000.0, "l2_bytes": 50 * MiB,
         "pinned_gbps": {"h2d": {str(256 * MiB): 36.0}, "d2h": {str(256 * MiB): 55.0}}}


def test_each_transfer_direction_against_its_own_ceiling():
    d2h = _row("transfer", gbps=54.0, nbytes=256 * MiB, variant="d2h_pinned")
    label, pct = ceiling_for(d2h, LINKS)
    # against host-to-device it would read 150 %
    assert label.startswith("d2h_pinned 55") and pct == pytest.approx(54 / 55 * 100)
    h2d = _row("transfer", gbps=35.0, nbytes=256 * MiB, variant="h2d_pageable")
    label, pct = ceiling_for(h2d, LINKS)
    assert label.startswith("h2d_pinned 36") and pct == pytest.approx(35 / 36 * 100)
    # an older record measured host-to-device only: device-to-host gets no share at all
    old = {"d2d_copy_gbps": 3000.0, "h2d_pinned_gbps": 36.0}
    assert ceiling_for(d2h, old)[0] == ""


@pytest.mark.parametrize(("pct", "vendor", "flagged"), [
    (110.0, math.nan, False), (110.01, math.nan, True), (math.nan, 110.0, False),
    (math.nan, 110.5, True), (95.0, 80.0, False), (math.nan, math.nan, False)])
def test_flag_threshold_is_strictly_above_110(pct, vendor, flagged):
    assert FLAG_ABOVE_PCT == 110.0
    assert bool(section.flag_reason(_row(gbps=1.0), pct, vendor, LINKS)) is flagged


def test_flag_reasons_name_the_cause():
    small = _row(gbps=5000.0, nbytes=12 * MiB)
    old = {"d2d_copy_gbps": 2982.0, "l2_bytes": 50 * MiB}
    text = section.flag_reason(small, 166.9, 149.0, old)
    assert "its measured ceiling and the vendor's peak" in text
    assert "served from L2" in text and "no L2-resident ceiling" in text
    text = section.flag_reason(_row("reduction", gbps=3300.0), 111.0, 98.0, LINKS)
    assert "only reads" in text and "the vendor's peak" not in text
    cpu_gemm = _row("matmul", "float64", gflops=567.0, device="cpu")
    assert "BLAS call at n = 2,048" in section.flag_reason(cpu_gemm, 110.2, math.nan, LINKS)
    refused = _row(gbps=1e5, status="implausible", reason="work escaped the timed stream")
    assert "work escaped" in section.flag_reason(refused, 3000.0, math.nan, LINKS)


def _frame(rows):
    base = {"mode": "hot", "backend": "cupy-gpu", "implementation": "raw", "size_key": 1,
            "ceiling": "d2d_copy 3000 GB/s"}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_pct_table_shows_both_references_and_flags_over_110():
    env = {"ceilings": {"d2d_copy_gbps": 3000.0, "gpu_name": "NVIDIA H100 80GB HBM3",
                        "l2_bytes": 50 * MiB}}
    df = _frame([_row(gbps=3060.0, pct_of_ceiling=102.0, size_key=2**26, nbytes=768 * MiB),
                 _row(gbps=3600.0, pct_of_ceiling=120.0, size_key=2**26, nbytes=768 * MiB,
                      implementation="other")])
    t = section.pct_table(df, "hot", env)
    assert t is not None and list(t["% of vendor peak"]) == ["107.5 %", "91.3 %"]
    assert t.iloc[0]["flag"].startswith("FLAGGED: above 110 % of its measured ceiling")
    assert t.iloc[1]["flag"] == "" and t.attrs["row_classes"] == ["warn", ""]
    assert t.iloc[0]["rate (device clock)"] == "3600 GB/s"
    flagged = section.flagged_table(df, env)
    assert flagged is not None and len(flagged) == 1


def test_vendor_table_sets_the_measured_ceilings_beside_the_peaks():
    env = {"ceilings": {"d2d_copy_gbps": 2981.95, "sgemm_gflops": 51_119.9,
                        "dgemm_gflops": 55_922.4, "gpu_name": "NVIDIA H100 80GB HBM3"}}
    note, t = section.vendor_table(env)
    assert "H100 SXM5" in note and "NVIDIA H100 Tensor Core GPU Datasheet" in note
    assert t is not None
    assert list(t["measured / vendor"]) == ["89.0 %", "76.3 %", "83.5 %"]
    assert t["measured"].iloc[0] == "2,982 GB/s" and not any(t["flag"])
