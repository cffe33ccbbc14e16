"""Transfers against the bus: the probe's pinned rate per direction at
the transfer kernel's sizes is each transfer row's reference, pageable rates are results,
and the report ranks transfers on the sync clock.

The probe's GPU code needs a GPU; its framework-free parts (batches behind busy work,
per-direction tables, the sizes it is given) run here on stand-in events.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpubench import ceilings, plausibility, probe, results
from gpubench.ceilings import (
    DEFAULT_TRANSFER_ELEMENTS,
    Events,
    batch_seconds,
    best_l2_copy,
    ceiling_for,
    l2_footprints,
    link_batch,
    link_rates,
    link_reference,
    link_table,
)
from gpubench.plausibility import MAX_OVER_CEILING
from gpubench.report import stats
from gpubench.report.sections import ceilings as ceilings_section
from gpubench.report.sections import summary
from gpubench.spec import KernelSpec, get_kernel

ROOT = Path(__file__).resolve().parents[1]
MiB = 2**20
#: a new probe record: pinned per direction at two sizes, pageable results beside them
NEW = {"d2d_copy_gbps": 3000.0, "l2_copy_gbps": 8000.0, "l2_bytes": 50 * MiB,
       "h2d_pinned_gbps": 54.0, "h2d_pageable_gbps": 7.8,
       "pinned_gbps": {"h2d": {str(4 * MiB): 40.0, str(256 * MiB): 54.0},
                       "d2h": {str(4 * MiB): 45.0, str(256 * MiB): 55.0}},
       "pageable_gbps": {"h2d": {str(4 * MiB): 16.0, str(256 * MiB): 7.4},
                         "d2h": {str(4 * MiB): 9.0, str(256 * MiB): 12.5}}}
#: an older probe record: one pinned and one pageable rate, host to device at 1 GiB
OLD = {"d2d_copy_gbps": 3000.0, "l2_bytes": 50 * MiB, "h2d_pinned_gbps": 54.0,
       "h2d_pageable_gbps": 7.8}


def _t(variant: str, nbytes: float, gbps: float, **kw):
    row = {"device": "gpu", "kernel": "transfer", "variant": variant, "dtype": "float32",
           "bytes": float(nbytes), "flops": 0.0, "timer": "cuda_event", "status": "ok",
           "reason": "", "gbps": gbps, "gflops": math.nan, "median_s": nbytes / gbps / 1e9}
    row.update(kw)
    return row


# -- each transfer row against its own direction's pinned rate, at its size ------------------


@pytest.mark.parametrize(("variant", "nbytes", "gbps", "label", "pct"), [
    ("h2d_pinned", 4 * MiB, 20.0, "h2d_pinned 40 GB/s at 4 MiB", 50.0),
    ("d2h_pinned", 4 * MiB, 22.5, "d2h_pinned 45 GB/s at 4 MiB", 50.0),
    # pageable rows are read against the pinned rate too: they are staged through it
    ("h2d_pageable", 256 * MiB, 7.0, "h2d_pinned 54 GB/s at 256 MiB", 7.0 / 54 * 100),
    ("d2h_pageable", 256 * MiB, 12.5, "d2h_pinned 55 GB/s at 256 MiB", 12.5 / 55 * 100),
    # a size the probe did not measure: the largest probed size's figure
    ("d2h_pinned", 64 * MiB, 27.5, "d2h_pinned 55 GB/s at 256 MiB, largest probed", 50.0),
])
def test_transfer_rows_read_against_their_direction_and_size(variant, nbytes, gbps, label,
                                                             pct):
    got_label, got_pct = ceiling_for(_t(variant, nbytes, gbps), NEW)
    assert got_label == label
    assert got_pct == pytest.approx(pct)


def test_device_to_host_is_never_read_against_host_to_device():
    """The committed H100 run read device-to-host pageable at 165 % of the host-to-device
    pageable rate: the wrong direction, and a rate that is not a ceiling."""
    row = _t("d2h_pageable", 256 * MiB, 12.9)
    label, pct = ceiling_for(row, NEW)
    assert label.startswith("d2h_pinned") and pct < 100
    # an older record has no device-to-host figure: no reference rather than a wrong one
    label, pct = ceiling_for(row, OLD)
    assert label == "" and math.isnan(pct)
    # and host-to-device rows fall back to the one pinned rate it has
    assert ceiling_for(_t("h2d_pageable", 256 * MiB, 7.0), OLD)[0] == "h2d_pinned 54 GB/s"


def test_link_table_keeps_only_sound_entries():
    raw = {"pinned_gbps": {"h2d": {"1024": 1.0, "x": 5.0, "2048": -1, "4096": "nan",
                                   "8192": None, "16384": 3.0},
                           "d2h": "garbage", "sideways": {"1024": 9.0}}}
    assert link_table(raw) == {"h2d": {1024: 1.0, 16384: 3.0}}
    assert link_table({"pinned_gbps": [1, 2]}) == {}
    assert link_table({}) == {}
    assert link_reference(_t("h2d_pinned", 1024, 1.0), raw) == ("h2d_pinned 1 GB/s at 1 KiB",
                                                                1.0)
    # not a direction the bus has
    assert link_reference({"variant": "sideways"}, raw)[0] == ""


@pytest.mark.parametrize(("variant", "gbps", "refused"), [
    ("h2d_pinned", MAX_OVER_CEILING * 40.0, False),
    ("h2d_pinned", float(np.nextafter(MAX_OVER_CEILING * 40.0, math.inf)), True),
    ("d2h_pageable", MAX_OVER_CEILING * 45.0, False),
    ("d2h_pageable", float(np.nextafter(MAX_OVER_CEILING * 45.0, math.inf)), True),
])
def test_transfer_gate_edges(variant, gbps, refused):
    text = plausibility.reason(_t(variant, 4 * MiB, gbps), NEW)
    assert ("faster than the link" in text) if refused else text == "", text


def test_transfer_gate_needs_a_reference_of_the_rows_direction():
    assert plausibility.reason(_t("d2h_pinned", 4 * MiB, 1e4), OLD) == ""
    assert "faster than the link" in plausibility.reason(_t("h2d_pinned", 4 * MiB, 60.0),
                                                         OLD)
    notes = plausibility.gate_notes(OLD)
    assert any("device-to-host transfers against none" in n for n in notes)
    assert not any("pinned rates" in n for n in plausibility.gate_notes(NEW))


def test_judge_reads_the_nested_table_from_a_json_record():
    env = json.loads(json.dumps(NEW))  # keys become strings, as in host.json
    frame = pd.DataFrame([_t("d2h_pinned", 4 * MiB, 45.0), _t("h2d_pinned", 4 * MiB, 60.0)])
    frame["ceiling"], frame["pct_of_ceiling"], frame["size"] = "", math.nan, MiB
    plausibility.judge(frame, env)
    assert frame["pct_of_ceiling"].iloc[0] == pytest.approx(100.0)
    assert list(frame["status"]) == ["ok", "implausible"]


def test_ceilings_table_lists_both_directions_and_the_unchecked():
    table = ceilings_section.ceiling_table({"ceilings": {**NEW, "l2_copy_bytes": 12.5 * MiB,
                                                         "l2_copy_queued": True}})
    cells = table.to_string()
    assert "pinned_gbps.d2h.268435456" in cells and "pageable_gbps.h2d.4194304" in cells
    assert "device-to-host, pinned (the transfers' reference), 256 MiB" in cells
    assert "a result, not a ceiling" in cells
    assert "12.5 MiB source + destination" in cells
    assert "not checked" not in cells and "launch gaps" not in cells
    gaps = ceilings_section.ceiling_table({"ceilings": {**NEW, "pinned_queued": False}})
    assert "launch gaps may have lowered them" in gaps.to_string()
    old = ceilings_section.ceiling_table({"ceilings": OLD}).to_string()
    assert "not checked" in old and "no L2-resident copy ceiling" in old


# -- the probe's measurements, on stand-in events -----------------------------------------------


class _Device:
    """A stand-in stream: calls add their cost to the device's timeline, events read it;
    ``starved`` says whether the device reaches a start event before the host queued the
    batch (launch gaps) until that many busy calls precede it."""

    def __init__(self, cost: float, starved_below: int = 0) -> None:
        self.t, self.cost, self.busy_calls = 0.0, cost, 0
        self.starved_below = starved_below
        self.calls = 0

    def call(self) -> None:
        self.calls += 1
        self.t += self.cost

    def busy(self) -> None:
        self.busy_calls += 1
        self.t += 1.0

    def events(self) -> Events:
        dev = self

        class Ev:
            at = 0.0

            def record(self) -> None:
                self.at = dev.t
                self.busy_before = dev.busy_calls

            def synchronize(self) -> None:
                dev.busy_calls = 0

        return Events(Ev(), Ev(), lambda a, b: b.at - a.at,
                      lambda ev: ev.busy_before < dev.starved_below)


def test_batch_seconds_is_the_device_time_per_call_of_a_queued_batch():
    dev = _Device(cost=2e-6)
    seconds, ahead = batch_seconds(dev.events(), dev.call, 100, 3, dev.busy, 1.0)
    assert seconds == pytest.approx(2e-6) and ahead


def test_batch_seconds_lengthens_the_busy_work_until_the_batch_is_queued_in_time():
    dev = _Device(cost=2e-6, starved_below=4)   # 1 busy call starves, 4 do not
    seconds, ahead = batch_seconds(dev.events(), dev.call, 10, 2, dev.busy, 1.0)
    assert ahead and seconds == pytest.approx(2e-6)
    never = _Device(cost=2e-6, starved_below=10**9)
    assert batch_seconds(never.events(), never.call, 10, 2, never.busy, 1.0)[1] is False


@pytest.mark.parametrize(("single_s", "batch"), [
    (0.0, 1), (math.nan, 1), (1.0, 1), (ceilings.LINK_BATCH_S, 1),
    (ceilings.LINK_BATCH_S / 10, 10), (1e-9, ceilings.LINK_MAX_BATCH)])
def test_link_batch(single_s, batch):
    assert link_batch(single_s) == batch


def test_link_rates_per_direction_and_size_as_json_keys():
    costs = {"h2d": 1e-4, "d2h": 2e-4}
    dev = _Device(cost=0.0)

    def copy(direction, nbytes):
        def run():
            dev.t += costs[direction] * nbytes / MiB
        return run

    rates, ahead = link_rates(dev.events(), copy, [MiB, 4 * MiB], dev.busy, 1.0, repeats=2)
    assert ahead
    assert set(rates) == {"h2d", "d2h"}
    assert rates["h2d"][str(MiB)] == pytest.approx(MiB / 1e-4 / 1e9)
    assert rates["d2h"][str(4 * MiB)] == pytest.approx(MiB / 2e-4 / 1e9)
    assert json.loads(json.dumps(rates)) == rates


def test_l2_footprints_and_best_l2_copy():
    assert l2_footprints(0) == [] and l2_footprints(-5) == []
    sizes = l2_footprints(50 * MiB)
    assert sizes == sorted(sizes) and len(sizes) == 3
    assert max(sizes) <= 50 * MiB / 4 and all(s % 2048 == 0 for s in sizes)
    out: dict = {}
    best_l2_copy(out, {("copy_", 4 * MiB): (6000.0, True), ("memcpy", 8 * MiB): (7000.0, False),
                       ("kernel", 8 * MiB): (6500.0, True)})
    assert (out["l2_copy_gbps"], out["l2_copy_bytes"], out["l2_copy_method"],
            out["l2_copy_queued"]) == (7000.0, 8 * MiB, "memcpy", False)
    assert out["l2_copy_gbps_by_method"]["copy_, 4 MiB"] == 6000.0
    empty: dict = {}
    best_l2_copy(empty, {})
    assert "l2_copy_gbps" not in empty and "l2_copy_error" in empty


# -- the probe is given the transfer kernel's sizes -------------------------------------------


def test_transfer_bytes_follow_the_kernel():
    spec = get_kernel("transfer")
    assert probe.transfer_bytes() == [4 * n for n in DEFAULT_TRANSFER_ELEMENTS]
    assert list(spec.default_sizes) == list(DEFAULT_TRANSFER_ELEMENTS)
    assert probe.transfer_bytes([1 << 20, 1 << 16, 1 << 20]) == [1 << 18, 1 << 22]


def test_config_transfer_sizes():
    assert probe.config_transfer_sizes({"kernels": {"transfer": {
        "sizes": [1, 2], "gpu_sizes": [3]}}}) == [3]
    assert probe.config_transfer_sizes({"kernels": {"transfer": {"sizes": [1, 2]}}}) == [1, 2]
    assert probe.config_transfer_sizes({"kernels": {}}) == []
    assert probe.config_transfer_sizes({}) == []


def test_probe_passes_the_sizes_to_the_gpu_ceilings(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(ceilings, "cpu_ceilings", lambda: {"cpu_copy_gbps": 1.0})

    def gpu(**kw):
        seen.update(kw)
        return {"d2d_copy_gbps": 2.0}

    monkeypatch.setattr(ceilings, "gpu_ceilings", gpu)
    out = probe.measure_ceilings(True, [1024, 4096])
    assert seen == {"transfer_bytes": [4096, 16384]} and out["d2d_copy_gbps"] == 2.0
    called = []
    monkeypatch.setattr(probe, "probe", lambda sizes=None: called.append(sizes) or {
        "timer_overhead_s": {"per_sample_s": 0.0, "loop_s": 0.0}, "gpus": [],
        "gpu_reason": "none", "ceilings": {}})
    assert probe.main(["--out", str(tmp_path / "a.json"), "--transfer-sizes", "8", "16"]) == 0
    assert probe.main(["--out", str(tmp_path / "b.json")]) == 0
    assert probe.main(["--out", str(tmp_path / "c.json"), "--transfer-sizes"]) == 0
    assert called == [[8, 16], None, []]


@pytest.mark.workflow
def test_probe_rule_passes_the_configured_transfer_sizes(tmp_path):
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    extra = tmp_path / "transfer.yaml"
    extra.write_text("kernels:\n  transfer:\n    gpu_sizes: [4096, 8192]\n")
    out = subprocess.run([snakemake, "--cores", "2", "-n", "-p", "--configfile",
                          str(extra), "--config",
                          f"results_dir={tmp_path}/r", f"logs_dir={tmp_path}/l"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONWARNINGS": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    probe_cmds = [ln for ln in out.stdout.splitlines() if "scripts/probe.py" in ln]
    assert probe_cmds and all("--transfer-sizes 4096 8192 " in c for c in probe_cmds)


# -- transfers ranked on the sync clock -----------------------------------------------------------


def test_rank_clock_is_declared_per_kernel():
    assert KernelSpec.rank_clock == "pipelined"
    assert get_kernel("transfer").rank_clock == "sync"
    assert get_kernel("vector_add").rank_clock == "pipelined"
    assert summary.rank_clock("transfer") == "sync"
    assert summary.rank_clock("vector_add") == "caller"
    assert summary.rank_clock("no_such_kernel") == "caller"
    assert summary.rank_clock("transfer", "device") == "device"


def _pair(kernel: str, variant: str) -> list[dict]:
    """Two GPU backends on one case: ``fast-pipe`` wins when calls overlap (5 µs
    pipelined, 20 µs sync), ``fast-sync`` when each call is waited for (8 and 12 µs)."""
    rows = []
    for backend, pipe, sync in (("fastpipe-gpu", 5e-6, 20e-6), ("fastsync-gpu", 8e-6, 12e-6)):
        r = results.empty_row()
        r.update(framework=backend.split("-")[0], device="gpu", backend=backend,
                 implementation="impl", kernel=kernel, variant=variant, size=1 << 20,
                 dtype="float32", threads=1, status="ok", mode="hot", timer="cuda_event",
                 samples=9, median_s=4e-6, q1_s=3.9e-6, q3_s=4.1e-6, bytes=4.0 * 2**20,
                 sync_samples=9, sync_median_s=sync, sync_q1_s=sync * 0.99,
                 sync_q3_s=sync * 1.01, pipelined_samples=9, pipelined_median_s=pipe,
                 pipelined_q1_s=pipe * 0.99, pipelined_q3_s=pipe * 1.01)
        rows.append(r)
    return rows


def test_transfers_are_ranked_on_the_sync_clock_other_kernels_pipelined():
    from gpubench.report.base import prepare

    df = prepare(results.rows_frame(_pair("transfer", "h2d_pinned")
                                    + _pair("vector_add", "default")))
    picks = {k: found for k, _v, _d, found in
             summary.picks_for(df, stats.Samples({}, ""), "hot")}
    transfer, add = picks["transfer"]["large"], picks["vector_add"]["large"]
    assert transfer.clock == "sync" and transfer.winner["backend"] == "fastsync-gpu"
    assert add.clock == "caller" and add.winner["backend"] == "fastpipe-gpu"
    assert transfer.sure and "1.67× faster than fastpipe-gpu (20 µs sync)" in transfer.text()
    # on the device clock neither changes: it ranks median_s for every kernel
    dev = {k: f for k, _v, _d, f in summary.picks_for(df, stats.Samples({}, ""), "hot",
                                                        "device")}
    assert dev["transfer"]["large"].clock == "device"
    label = summary.build(df, {"hot": summary.picks_for(df, stats.Samples({}, ""), "hot")})
    assert label.clock_label == "caller's clock (pipelined; transfer: sync; CPU: wall)"
