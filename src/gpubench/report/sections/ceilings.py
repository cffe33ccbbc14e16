"""Measured ceilings, the project's targets, % of ceiling and the roofline: every
number on the device clock (what the hardware did).

The ceilings table lists the probe's flat ceilings, then the bus per direction and size
(pinned: the transfers' reference; pageable: results, not ceilings), then what the
gates could not check with an older probe record (:func:`gpubench.plausibility.gate_notes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gpubench import plausibility
from gpubench.ceilings import fmt_bytes, link_table
from gpubench.report import figures
from gpubench.report.base import (
    KERNELS,
    _finite,
    fmt_int,
    fmt_sig,
)
from gpubench.report.render import Figure, text_table
from gpubench.report.sections.common import (
    primary_mode,
)

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


def pct_table(df: pd.DataFrame, mode: str) -> pd.DataFrame | None:
    """Per kernel and implementation, the best % of its ceiling at the largest size (where
    the arrays are several times the caches, so % of memory bandwidth is honest)."""
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & df["pct_of_ceiling"].notna()]
    if ok.empty:
        return None
    largest = ok.groupby(["kernel", "variant", "dtype"])["size_key"].transform("max")
    at = ok[ok["size_key"] == largest]
    at = at.sort_values(["pct_of_ceiling", "variant", "dtype"], ascending=[False, True, True],
                        kind="mergesort")
    best = at.drop_duplicates(["kernel", "backend", "implementation"])
    order = {k: i for i, k in enumerate(KERNELS)}
    best = best.assign(_k=best["kernel"].map(lambda k: order.get(k, len(order))))
    best = best.sort_values(["_k", "kernel", "pct_of_ceiling", "backend", "implementation"],
                            ascending=[True, True, False, True, True], kind="mergesort")
    rows = [[r["kernel"], r["backend"], r["implementation"], f"{r['variant']} / {r['dtype']}",
             fmt_int(r["size_key"]), f"{float(r['pct_of_ceiling']):.1f} %", r["ceiling"]]
            for _, r in best.iterrows()]
    return text_table(["kernel", "backend", "implementation", "best variant / dtype", "size",
                  "% of ceiling", "ceiling"], rows, frozenset({"size", "% of ceiling"}))


#: The GPU targets the project holds itself to (issue 3): at the largest size, the best
#: implementation of every GPU framework reaches this share of its ceiling.
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("vector_add", "copy bandwidth", 85.0),
    ("elementwise", "copy bandwidth", 85.0),
    ("matmul", "cuBLAS GEMM (library matmul)", 90.0),
)


def targets_table(df: pd.DataFrame, mode: str) -> pd.DataFrame | None:
    """Per GPU backend and target kernel: the weakest case of its best implementations.

    For each (kernel, variant, dtype) at its largest size the backend's best
    implementation counts; the table shows the lowest of those, so one slow dtype or
    variant is not hidden behind a fast one. Matmul counts library calls only
    (hand-written naive and tiled kernels are reported as % of cuBLAS elsewhere).
    """
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & (df["device"] == "gpu")
            & df["pct_of_ceiling"].notna()]
    rows = []
    for kernel, ceiling, target in TARGETS:
        k = ok[ok["kernel"] == kernel]
        k = k[~k["implementation"].str.contains(r"naive|tiled|\+transfers", regex=True)]
        if k.empty:
            continue
        largest = k.groupby(["kernel", "variant", "dtype"])["size_key"].transform("max")
        k = k[k["size_key"] == largest]
        best = k.groupby(["backend", "variant", "dtype"])["pct_of_ceiling"].max().reset_index()
        for backend, g in best.groupby("backend", sort=True):
            worst = g.sort_values(["pct_of_ceiling", "variant", "dtype"],
                                  kind="mergesort").iloc[0]
            pct = float(worst["pct_of_ceiling"])
            rows.append([kernel, backend, f"{worst['variant']} / {worst['dtype']}",
                         f"{pct:.1f} %", f"≥ {target:.0f} % of {ceiling}",
                         "met" if pct >= target else "MISSED"])
    if not rows:
        return None
    return text_table(["kernel", "backend", "weakest case (variant / dtype)",
                  "its best implementation", "target", "verdict"], rows,
                 frozenset({"its best implementation"}))


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
    kernels = sorted(set(points["kernel"]), key=lambda k: (KERNELS.index(k)
                                                           if k in KERNELS else 99, k))
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
    return Ceilings(mode, ceiling_table(env_data), targets_table(df, mode),
                    pct_table(df, mode), rooflines)
