"""Measured ceilings, the project's targets, % of ceiling and the roofline: every
number on the device clock (what the hardware did).

The ceilings table lists the probe's flat ceilings, then the bus per direction and size
(pinned: the transfers' reference; pageable: results, not ceilings), then what the
gates could not check with an older probe record (:func:`gpubench.plausibility.gate_notes`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gpubench import devices, ncu, plausibility
from gpubench.ceilings import (
    FALLBACK_L2_BYTES,
    L2_MULTIPLE,
    fmt_bytes,
    has,
    in_l2,
    l2_size,
    link_table,
    number,
)
from gpubench.devices import FLAG_ABOVE_PCT, Peak
from gpubench.report import figures
from gpubench.report.base import (
    _finite,
    fmt_int,
    fmt_sig,
)
from gpubench.report.render import Figure, text_table
from gpubench.report.sections.common import (
    primary_mode,
)
from gpubench.spec import find_kernel, kernel_bound, kernel_order, kernel_specs

# -- ceilings and roofline ----------------------------------------------------------------


CEILING_LABELS = {
    "d2d_copy_gbps": ("GPU device-to-device copy", "GB/s"),
    "l2_copy_gbps": ("GPU copy inside the L2 cache (memory-bound rows within 2x L2)",
                     "GB/s"),
    "sgemm_gflops": ("GPU SGEMM (TF32 off)", "GFLOP/s"),
    "dgemm_gflops": ("GPU DGEMM", "GFLOP/s"),
    "h2d_pinned_gbps": ("host-to-device, pinned (1 GiB)", "GB/s"),
    "h2d_pageable_gbps": ("host-to-device, pageable (1 GiB; a result, not a ceiling)",
                          "GB/s"),
    "cpu_copy_gbps": ("CPU memory copy", "GB/s"),
    "cpu_clock_hz": ("CPU clock, the fastest read (CPU rows within the caches are "
                     "checked against 256 bytes a cycle per thread at twice it)", "Hz"),
    "cpu_sgemm_gflops": ("CPU SGEMM (BLAS)", "GFLOP/s"),
    "cpu_dgemm_gflops": ("CPU DGEMM (BLAS)", "GFLOP/s"),
}


def ceilings_of(env_data: Mapping[str, Any]) -> dict[str, float]:
    raw = env_data.get("ceilings")
    if not isinstance(raw, Mapping):
        return {}
    return {k: float(v) for k, v in raw.items() if k in CEILING_LABELS and _finite(v)
            and float(v) > 0}


def ceiling_table(env_data: Mapping[str, Any]) -> pd.DataFrame | None:
    c = ceilings_of(env_data)
    if not c:
        return None
    raw = env_data.get("ceilings") or {}
    rows = [[CEILING_LABELS[k][0], fmt_sig(c[k], 4), CEILING_LABELS[k][1], k]
            for k in CEILING_LABELS if k in c]
    if "l2_copy_gbps" in c and _finite(raw.get("l2_copy_bytes")):
        # how large the L2-resident copy was, and whether launch gaps lowered it
        row = rows[[r[3] for r in rows].index("l2_copy_gbps")]
        row[0] += f", {fmt_bytes(float(raw['l2_copy_bytes']))} source + destination"
        if raw.get("l2_copy_queued") is False:
            row[0] += "; launch gaps inside its batches: a low bound"
    if "cpu_copy_gbps" in c and _finite(raw.get("cpu_cache_bytes")):
        # one thread's copy: the bound of memory-bound CPU rows past the caches, per thread
        row = rows[[r[3] for r in rows].index("cpu_copy_gbps")]
        row[0] += (f" (one thread; CPU rows past {L2_MULTIPLE:g}x the "
                   f"{fmt_bytes(float(raw['cpu_cache_bytes']))} of caches are checked "
                   "against it per thread)")
    names = {"h2d": "host-to-device", "d2h": "device-to-host"}
    for key, what in (("pinned_gbps", "pinned (the transfers' reference)"),
                      ("pageable_gbps", "pageable (a result, not a ceiling)")):
        for direction, rates in link_table(raw, key).items():
            rows += [[f"{names[direction]}, {what}, {fmt_bytes(n)}", fmt_sig(v, 4), "GB/s",
                      f"{key}.{direction}.{n}"] for n, v in rates.items()]
    if raw.get("pinned_queued") is False:
        rows.append(["(pinned rates)", "", "", "some batches were not queued whole before "
                     "the device reached them: launch gaps may have lowered them"])
    note = f"measured with {raw.get('measured_with')}" if raw.get("measured_with") else ""
    if note:
        rows.append(["(GPU ceilings)", "", "", note])
    rows += [["(not checked)", "", "", text] for text in plausibility.gate_notes(raw)]
    return text_table(["ceiling", "value", "unit", "key"], rows, frozenset({"value"}))


def flag_reason(row: Mapping[str, Any], pct: float, vendor_pct: float,
                ceilings: Mapping[str, Any]) -> str:
    """Why a row's efficiency is above :data:`~gpubench.devices.FLAG_ABOVE_PCT` % of a
    reference, or '' when both shares are within it. A row the gates refused says so;
    otherwise the likeliest cause that the row and the probe record show."""
    over_c = math.isfinite(pct) and pct > FLAG_ABOVE_PCT
    over_v = math.isfinite(vendor_pct) and vendor_pct > FLAG_ABOVE_PCT
    if not (over_c or over_v):
        return ""
    which = " and ".join(w for w, o in (("its measured ceiling", over_c),
                                         ("the vendor's peak", over_v)) if o)
    head = f"above {FLAG_ABOVE_PCT:.0f} % of {which}: "
    if row.get("status") == "implausible":
        return head + f"refused as implausible ({row.get('reason') or 'see Failures'})"
    bound = kernel_bound(row.get("kernel"))
    gpu = row.get("device") == "gpu"
    nbytes = number(row.get("bytes"))
    if bound == "memory" and gpu and in_l2(row, ceilings, FALLBACK_L2_BYTES):
        l2, measured = l2_size(ceilings)
        l2_txt = fmt_bytes(l2) if measured else f"{fmt_bytes(FALLBACK_L2_BYTES)} (assumed)"
        why = (f"its {fmt_bytes(nbytes)} fit in {L2_MULTIPLE:g}x the L2 cache ({l2_txt}), "
               "so they are served from L2, faster than DRAM")
        if over_c and not has(ceilings, "l2_copy_gbps"):
            why += ("; this probe record has no L2-resident ceiling, so the row is read "
                    "against the DRAM copy")
        return head + why
    spec = find_kernel(row.get("kernel"))
    if bound == "memory" and spec is not None and spec.ceiling_note:
        return head + spec.ceiling_note
    if bound == "memory" and not gpu:
        return head + ("the CPU copy ceiling is one NumPy copy of 256 MiB; a CPU row "
                       "whose data stay in the CPU caches can beat it")
    if bound == "compute" and not gpu:
        return head + ("the CPU GEMM ceiling is one BLAS call at n = 2,048; BLAS runs "
                       "larger matrices more efficiently")
    return head + ("the reference is one library call on the day, not the hardware's "
                   "limit; check the row's counted work and its timer")


def _rate(r: Mapping[str, Any]) -> str:
    key = kernel_bound(r["kernel"])
    if key == "compute":
        v = number(r.get("gflops"))
        return f"{v / 1e3:,.3g} TFLOP/s" if v > 0 else "—"
    v = number(r.get("gbps"))
    return f"{fmt_sig(v, 4)} GB/s" if v > 0 else "—"


def pct_table(df: pd.DataFrame, mode: str, env_data: Mapping[str, Any] | None = None
              ) -> pd.DataFrame | None:
    """Per kernel and implementation, the best % of its ceiling at the largest size (where
    the arrays are several times the caches, so % of memory bandwidth is honest), with
    its rate, its % of the vendor's peak beside (:mod:`gpubench.devices`) and a flag
    where either share is above :data:`~gpubench.devices.FLAG_ABOVE_PCT` %."""
    env_data = env_data or {}
    ceilings = env_data.get("ceilings") if isinstance(env_data.get("ceilings"),
                                                      Mapping) else {}
    peak = devices.vendor_peak(devices.gpu_name(env_data))
    ok = df[(df["status"].isin(["ok", "implausible"])) & (df["mode"] == mode)
            & df["pct_of_ceiling"].notna()]
    if ok.empty:
        return None
    largest = ok.groupby(["kernel", "variant", "dtype"])["size_key"].transform("max")
    at = ok[ok["size_key"] == largest]
    at = at.sort_values(["pct_of_ceiling", "variant", "dtype"], ascending=[False, True, True],
                        kind="mergesort")
    best = at.drop_duplicates(["kernel", "backend", "implementation"])
    best = best.assign(_k=best["kernel"].map(kernel_order))
    best = best.sort_values(["_k", "kernel", "pct_of_ceiling", "backend", "implementation"],
                            ascending=[True, True, False, True, True], kind="mergesort")
    rows, classes = [], []
    for _, r in best.iterrows():
        pct = float(r["pct_of_ceiling"])
        v_label, v_pct = devices.pct_of_vendor(r, peak)
        flag = flag_reason(r, pct, v_pct, ceilings or {})
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        rows.append([r["kernel"], r["backend"], r["implementation"] + status,
                     f"{r['variant']} / {r['dtype']}", fmt_int(r["size_key"]), _rate(r),
                     f"{pct:.1f} %", r["ceiling"],
                     f"{v_pct:.1f} %" if math.isfinite(v_pct) else "—", v_label or "—",
                     f"FLAGGED: {flag}" if flag else ""])
        classes.append("warn" if flag else "")
    return text_table(["kernel", "backend", "implementation", "best variant / dtype", "size",
                       "rate (device clock)", "% of measured ceiling", "measured ceiling",
                       "% of vendor peak", "vendor peak", "flag"], rows,
                      frozenset({"size", "rate (device clock)", "% of measured ceiling",
                                 "% of vendor peak"}), classes)


def flagged_table(df: pd.DataFrame, env_data: Mapping[str, Any]) -> pd.DataFrame | None:
    """Every ok or implausible row, any size and mode, whose share of its measured
    ceiling or of the vendor's peak is above :data:`~gpubench.devices.FLAG_ABOVE_PCT` %,
    with the reason (:func:`flag_reason`); None when there is none."""
    ceilings = env_data.get("ceilings") if isinstance(env_data.get("ceilings"),
                                                      Mapping) else {}
    peak = devices.vendor_peak(devices.gpu_name(env_data))
    rows = []
    for _, r in df[df["status"].isin(["ok", "implausible"])].iterrows():
        pct = number(r.get("pct_of_ceiling"))
        _, v_pct = devices.pct_of_vendor(r, peak)
        flag = flag_reason(r, pct, v_pct, ceilings or {})
        if flag:
            rows.append([r["kernel"], r["backend"], r["implementation"],
                         f"{r['variant']} / {r['dtype']}", fmt_int(r["size_key"]), r["mode"],
                         _rate(r), f"{pct:.1f} %" if math.isfinite(pct) else "—",
                         f"{v_pct:.1f} %" if math.isfinite(v_pct) else "—", flag])
    if not rows:
        return None
    return text_table(["kernel", "backend", "implementation", "variant / dtype", "size",
                       "mode", "rate", "% of measured ceiling", "% of vendor peak",
                       "why flagged"], rows,
                      frozenset({"size", "rate", "% of measured ceiling",
                                 "% of vendor peak"}), ["warn"] * len(rows))


#: the measured ceilings set beside the vendor's peaks: (label, ceilings key, unit)
_VENDOR_ROWS = (
    ("device-to-device copy vs DRAM bandwidth", "d2d_copy_gbps", "GB/s"),
    ("SGEMM (TF32 off) vs FP32 peak", "sgemm_gflops", "GFLOP/s"),
    ("DGEMM vs FP64 peak (tensor core where given)", "dgemm_gflops", "GFLOP/s"),
)


def _vendor_ref(key: str, peak: Peak) -> tuple[str, float] | None:
    """(label, value) of the datasheet peak a measured ceiling is set against."""
    if key == "d2d_copy_gbps":
        return f"{peak.memory_gbps:,.0f} GB/s DRAM", peak.memory_gbps
    return peak.gflops_for("float32" if key == "sgemm_gflops" else "float64", gemm=True)


def vendor_table(env_data: Mapping[str, Any]) -> tuple[str, pd.DataFrame | None]:
    """(one sentence, table): the GPU matched to a known device and its measured
    ceilings as % of the datasheet peaks; or why there is none."""
    name = devices.gpu_name(env_data)
    peak = devices.vendor_peak(name)
    if peak is None:
        return devices.unknown_text(name) + ": only the measured ceilings are references.", None
    c = ceilings_of(env_data)
    rows, classes = [], []
    for label, key, unit in _VENDOR_ROWS:
        ref = _vendor_ref(key, peak)
        if key not in c or ref is None:
            continue
        share = 100.0 * c[key] / ref[1]
        flag = ""
        if share > FLAG_ABOVE_PCT:
            flag = (f"FLAGGED: above {FLAG_ABOVE_PCT:.0f} % of the datasheet peak: check "
                    "the probe's counted work")
        measured = (f"{c[key]:,.0f} GB/s" if unit == "GB/s" else
                    f"{c[key] / 1e3:,.3g} TFLOP/s")
        rows.append([label, measured, ref[0], f"{share:.1f} %", flag])
        classes.append("warn" if flag else "")
    sentence = (f"{name} is read as the {peak.device} (source: {peak.source}; figures "
                f"checked on {peak.checked}).")
    if not rows:
        return sentence, None
    return sentence, text_table(["measured ceiling vs vendor peak", "measured", "vendor peak",
                                 "measured / vendor", "flag"], rows,
                                frozenset({"measured", "measured / vendor"}), classes)


#: how the targets table names each reference ceiling (:attr:`KernelSpec.ceiling`)
CEILING_NAMES = {"copy": "copy bandwidth", "gemm": "cuBLAS GEMM (library matmul)",
                 "link": "the pinned host-device link"}


def targets() -> list[tuple[str, str, float]]:
    """The GPU targets the project holds itself to, from each kernel's
    :attr:`~gpubench.spec.KernelSpec.target_pct`: (kernel, its reference ceiling, %) —
    at the largest size, the best implementation of every GPU framework reaches this
    share of its ceiling."""
    return [(s.name, CEILING_NAMES.get(s.ceiling, s.ceiling), float(s.target_pct))
            for s in kernel_specs() if s.target_pct]


def targets_table(df: pd.DataFrame, mode: str, profiles: pd.DataFrame | None = None,
                  gpu: str | None = None) -> pd.DataFrame | None:
    """Per GPU backend and target kernel: the weakest case of its best implementations.

    For each (kernel, variant, dtype) at its largest size the backend's best
    implementation counts; the table shows the lowest of those, so one slow dtype or
    variant is not hidden behind a fast one. Matmul counts library calls only
    (hand-written naive and tiled kernels are reported as % of cuBLAS elsewhere).
    With ``profiles`` (:func:`gpubench.ncu.load_profiles`) a missed target says why:
    Nsight Compute's reading of that implementation on ``gpu`` at the same code.
    """
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & (df["device"] == "gpu")
            & df["pct_of_ceiling"].notna()]
    rows = []
    for kernel, ceiling, target in targets():
        k = ok[ok["kernel"] == kernel]
        k = k[~k["implementation"].str.contains(r"naive|tiled|\+transfers", regex=True)]
        if k.empty:
            continue
        largest = k.groupby(["kernel", "variant", "dtype"])["size_key"].transform("max")
        k = k[k["size_key"] == largest]
        # each backend's best implementation per (variant, dtype), its name kept
        best = k.sort_values("pct_of_ceiling", ascending=False, kind="mergesort"
                             ).drop_duplicates(["backend", "variant", "dtype"])
        for backend, g in best.groupby("backend", sort=True):
            worst = g.sort_values(["pct_of_ceiling", "variant", "dtype"],
                                  kind="mergesort").iloc[0]
            pct = float(worst["pct_of_ceiling"])
            met = pct >= target
            row = [kernel, backend, f"{worst['variant']} / {worst['dtype']}",
                   f"{pct:.1f} %", f"≥ {target:.0f} % of {ceiling}",
                   "met" if met else "MISSED", str(worst["implementation"])]
            if profiles is not None:
                row.append("" if met else ncu.why(
                    profiles, gpu, str(worst["framework"]), str(worst["implementation"]),
                    kernel, str(worst["variant"]), str(worst["dtype"])))
            rows.append(row)
    if not rows:
        return None
    header = ["kernel", "backend", "weakest case (variant / dtype)",
              "its best implementation", "target", "verdict", "which implementation"]
    if profiles is not None:
        header.append("why (Nsight Compute)")
    return text_table(header, rows, frozenset({"its best implementation"}))


def roofline_points(df: pd.DataFrame, device: str, mode: str) -> pd.DataFrame:
    """One point per (backend, implementation, kernel, variant, dtype): its largest size."""
    ok = df[(df["status"] == "ok") & (df["device"] == device) & (df["mode"] == mode)
            & (df["flops"] > 0) & (df["bytes"] > 0)]
    if ok.empty:
        return ok
    ok = ok.sort_values("size_key", ascending=False, kind="mergesort")
    pts = ok.drop_duplicates(["backend", "implementation", "kernel", "variant", "dtype"])
    gflops = pts["gflops"].fillna(pts["flops"] / pts["median_s"] / 1e9)
    out = pd.DataFrame({"kernel": pts["kernel"], "framework": pts["framework"],
                        "dtype": pts["dtype"], "ai": pts["flops"] / pts["bytes"],
                        "gflops": gflops, "label": pts["series"]})
    return out.sort_values(["kernel", "framework", "label", "dtype"],
                           kind="mergesort").reset_index(drop=True)


def roofline_figure(points: pd.DataFrame, title: str, bw_gbps: float,
                    compute: Sequence[tuple[str, float]]) -> str:
    """Achieved GFLOP/s against arithmetic intensity, under the measured roofs."""
    fig = figures.new_figure(5.2)
    fig.subplots_adjust(left=0.08, right=0.74, top=0.92, bottom=0.11)
    ax = fig.subplots()
    kernels = sorted(set(points["kernel"]), key=lambda k: (kernel_order(k), k))
    frameworks = sorted(set(points["framework"]))
    cmap = figures.colors(len(kernels))
    for (kernel, framework, dtype), grp in points.groupby(["kernel", "framework", "dtype"],
                                                           sort=True):
        ki, fi = kernels.index(kernel), frameworks.index(framework)
        ax.plot(grp["ai"].to_numpy(float), grp["gflops"].to_numpy(float), linestyle="none",
                marker=figures.MARKERS[fi % len(figures.MARKERS)], markersize=6,
                color=cmap(ki % cmap.N), markerfacecolor="none" if dtype == "float64"
                else cmap(ki % cmap.N), alpha=0.85)
    ai = points["ai"].to_numpy(float)
    lo = min(ai.min(), 0.05) / 2
    top_c = max([c for _, c in compute] or [points["gflops"].max()])
    hi = max(ai.max() * 2, (top_c / bw_gbps * 4) if bw_gbps else ai.max() * 2)
    xs = np.geomspace(lo, hi, 200)
    handles: list[Any] = []
    if bw_gbps:
        for j, (name, peak) in enumerate(compute):
            roof = np.minimum(xs * bw_gbps, peak)
            (h,) = ax.plot(xs, roof, color="black", linewidth=1.2,
                           linestyle=("-", "--", ":")[j % 3],
                           label=f"roof: {name} {peak:,.0f} GFLOP/s")
            handles.append(h)
        if not compute:
            (h,) = ax.plot(xs, xs * bw_gbps, color="black", linewidth=1.2,
                           label=f"bandwidth {bw_gbps:,.0f} GB/s")
            handles.append(h)
    for ki, k in enumerate(kernels):
        handles.append(Line2D([], [], linestyle="none", marker="s", color=cmap(ki % cmap.N),
                              label=k))
    for fi, f in enumerate(frameworks):
        handles.append(Line2D([], [], linestyle="none", color="black",
                              marker=figures.MARKERS[fi % len(figures.MARKERS)], label=f))
    handles.append(Line2D([], [], linestyle="none", marker="o", color="grey",
                          markerfacecolor="none", label="open: float64"))
    figures.log_scale(ax, "x", np.r_[xs[0], xs[-1]])
    figures.log_scale(ax, "y", np.r_[points["gflops"].to_numpy(float), top_c])
    ax.set_xlim(lo, hi)
    figures.grid(ax)
    ax.set_xlabel("arithmetic intensity (counted flops / counted bytes, log scale)")
    ax.set_ylabel("achieved GFLOP/s (log scale)")
    ax.set_title(title, fontsize=11)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)
    return figures.png(fig)


@dataclass
class Ceilings:
    """The ceilings section: the probe's ceilings, the targets, % of ceiling and one
    roofline per device (``rooflines``: (device name, figure))."""

    mode: str
    ceilings: pd.DataFrame | None
    targets: pd.DataFrame | None
    pct: pd.DataFrame | None
    rooflines: list[tuple[str, Figure]]
    vendor_note: str = ""
    vendor: pd.DataFrame | None = None
    peak: Peak | None = None
    flag_pct: float = FLAG_ABOVE_PCT
    flagged: pd.DataFrame | None = None


def build(df: pd.DataFrame, env_data: Mapping[str, Any]) -> Ceilings:
    mode = primary_mode(df)
    c = ceilings_of(env_data)
    rooflines = []
    for device, bw_key, s_key, d_key in (("gpu", "d2d_copy_gbps", "sgemm_gflops",
                                          "dgemm_gflops"),
                                         ("cpu", "cpu_copy_gbps", "cpu_sgemm_gflops",
                                          "cpu_dgemm_gflops")):
        pts = roofline_points(df, device, mode)
        if pts.empty:
            continue
        bw = c.get(bw_key, 0.0)
        compute = [(n, c[k]) for n, k in (("SGEMM", s_key), ("DGEMM", d_key)) if k in c]
        title = (f"Roofline, {device.upper()}, device clock: memory roof {bw:,.0f} GB/s "
                 f"(mode {mode}, largest size per implementation)" if bw else
                 f"Roofline, {device.upper()}, device clock (mode {mode}; no measured roofs)")
        best = pts.sort_values("gflops", ascending=False, kind="mergesort").iloc[0]
        roofs = (f"bandwidth roof {bw:,.0f} GB/s, compute roofs "
                 + ", ".join(f"{n} {v:,.0f} GFLOP/s" for n, v in compute)) if bw else (
            "no measured roofs")
        alt = (f"Roofline plot for the {device.upper()}: achieved GFLOP/s against arithmetic "
               f"intensity (flops per byte, log-log) for {len(pts)} implementation(s) of "
               f"{', '.join(sorted(set(pts['kernel'])))}; {roofs}. Highest: {best['label']} "
               f"({best['kernel']}, {best['dtype']}) at {best['gflops']:,.0f} GFLOP/s.")
        rooflines.append((device.upper(), Figure(alt, roofline_figure,
                                                 (pts, title, bw, compute), "roofline")))
    note, vendor = vendor_table(env_data)
    gpu = devices.gpu_name(env_data)
    return Ceilings(mode, ceiling_table(env_data),
                    targets_table(df, mode, ncu.load_profiles(), gpu),
                    pct_table(df, mode, env_data), rooflines, note, vendor,
                    devices.vendor_peak(gpu), FLAG_ABOVE_PCT,
                    flagged_table(df, env_data))
