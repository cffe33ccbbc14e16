"""The MPI section: scaling and efficiency, latency and bandwidth, staged vs direct,
compute against communication, and the halo exchange blocking against overlapped.

It reads ``mpi.csv`` (one tidy row per measurement, columns in
:data:`gpubench.mpi.schema.COLUMNS`, mirrored in :data:`MPI_COLUMNS`) and, optionally,
``mpi_samples.csv``. The MPI steps are optional, so a missing file is a sentence in the
report ("MPI was not run"), and a file with missing columns is shown with what it has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpubench import results
from gpubench.mpi import catalog_of_jobs, jobs_where
from gpubench.mpi.schema import LINK_JOBS, LINK_RATES, OVERLAPPED
from gpubench.report import figures, render, stats
from gpubench.report.base import fmt_int, fmt_sig, fmt_time
from gpubench.report.render import Figure, text_table

MPI_COLUMNS: tuple[str, ...] = (
    "job", "framework", "device", "backend", "ranks", "size", "size_meaning", "dtype",
    "path", "mode", "status", "reason", "samples", "median_s", "min_s", "q1_s", "q3_s",
    "max_s", "iqr_s", "mean_s", "compute_s", "comm_s", "compute_max_s", "comm_max_s",
    "hidden_s", "gbps", "bus_gbps", "latency_us", "efficiency", "speedup", "rel_err",
    "tolerance", "gpu_uuids", "device_selection", "mpi_library", "mpi_version",
    "cuda_aware", "launcher", "link_gbps", "pct_of_link", "link_ref_gbps",
    "pct_of_link_ref", "host", "device_name", "framework_version", "git_commit",
    "timestamp", "schema_version")
MPI_SAMPLE_COLUMNS: tuple[str, ...] = ("job", "backend", "ranks", "size", "path", "mode",
                                       "sample_index", "time_s")
NUMERIC = ("ranks", "size", "samples", "median_s", "min_s", "q1_s", "q3_s", "max_s", "iqr_s",
           "mean_s", "compute_s", "comm_s", "compute_max_s", "comm_max_s", "hidden_s",
           "gbps", "bus_gbps", "latency_us", "efficiency", "speedup", "rel_err", "tolerance",
           "link_gbps", "pct_of_link", "link_ref_gbps", "pct_of_link_ref", "schema_version")
#: jobs whose rows form a scaling curve (time against ranks)
SCALING_JOBS = tuple(j for j, job in catalog_of_jobs().items() if job.scaling)
#: jobs measured against message size
MESSAGE_JOBS = jobs_where(message=True)
#: one process driving several devices (no ranks)
SINGLE_PROCESS_JOBS = jobs_where(single_process=True)


@dataclass
class MpiData:
    """The MPI rows (empty when there are none) and what to say about the inputs."""

    frame: pd.DataFrame
    problem: str = ""
    notes: tuple[str, ...] = ()
    samples_note: str = ""

    @property
    def present(self) -> bool:
        return not self.frame.empty


def load_mpi(path: str | Path | None, samples: str | Path | None = None) -> MpiData:
    """Read mpi.csv leniently: absent, unreadable or partial files become notes."""
    empty = pd.DataFrame(columns=list(MPI_COLUMNS))
    if not path:
        return MpiData(empty, "MPI was not run (no mpi.csv was given to the report)")
    path = Path(path)
    if not path.exists():
        return MpiData(empty, f"MPI was not run: {path.name} is missing")
    try:
        frame = results.read_csv(path, results.TIMINGS_MAX_BYTES, "MPI results file")
    except results.SchemaError as exc:
        return MpiData(empty, f"{path.name} is unreadable: {str(exc)[:300]}")
    notes = []
    required = ("job", "backend", "ranks", "status")
    missing_req = [c for c in required if c not in frame.columns]
    if missing_req:
        return MpiData(empty, f"{path.name} lacks the columns {missing_req}: it is not an "
                              "MPI results file of this schema")
    missing = [c for c in MPI_COLUMNS if c not in frame.columns]
    if missing:
        notes.append(f"{path.name} has no columns {missing} (an older schema?): those "
                     "values are shown as unknown")
    extra = sorted(c for c in frame.columns if c not in MPI_COLUMNS)
    if extra:
        notes.append(f"{path.name} has columns this report does not know: {extra}")
    for col in MPI_COLUMNS:
        if col not in frame.columns:
            frame[col] = math.nan if col in NUMERIC else ""
    frame = frame[list(MPI_COLUMNS)].copy()
    for col in MPI_COLUMNS:
        if col in NUMERIC:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        else:
            values = frame[col].astype(object)
            frame[col] = values.where(values.notna(), "").astype(str)
    frame = frame.sort_values(["job", "backend", "path", "mode", "size", "ranks"],
                              kind="mergesort").reset_index(drop=True)
    return MpiData(frame, "", tuple(notes), _samples_note(samples))


def _samples_note(path: str | Path | None) -> str:
    if not path:
        return "not given"
    path = Path(path)
    if not path.exists():
        return f"{path.name} (missing)"
    try:
        frame = results.read_csv(path, results.SAMPLES_MAX_BYTES, "MPI samples file")
    except results.SchemaError as exc:
        return f"{path.name} (unreadable: {str(exc)[:200]})"
    missing = [c for c in MPI_SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        return f"{path.name} ({len(frame)} rows; missing columns {missing})"
    return f"{path.name} ({len(frame):,} samples)"


def _label(rows: pd.DataFrame) -> pd.Series:
    parts = rows["backend"]
    for col in ("path", "mode"):
        extra = rows[col].map(lambda v: "" if v in ("", "n/a") else f" {v}")
        parts = parts + extra
    return parts


def _two_panels() -> tuple[Any, Any]:
    """The MPI figures' layout: two panels side by side, room for a legend at the right."""
    fig = figures.new_figure(4.4)
    fig.subplots_adjust(left=0.07, right=0.72, top=0.88, bottom=0.13, wspace=0.3)
    return fig, fig.subplots(1, 2)


def _lines(data: pd.DataFrame, x: str, dashed: str = "") -> list[tuple[pd.DataFrame, dict]]:
    """One (rows sorted by ``x``, plot style) per label, in label order: the same colour
    and marker for a label in both panels; labels containing ``dashed`` dashed."""
    labels = sorted(set(data["label"]))
    cmap = figures.colors(len(labels))
    out = []
    for i, lab in enumerate(labels):
        style = {"color": cmap(i % cmap.N), "marker": figures.MARKERS[i % 10],
                 "markersize": 4, "linewidth": 1.3, "label": lab}
        if dashed:
            style["linestyle"] = "--" if dashed in lab else "-"
        out.append((data[data["label"] == lab].sort_values(x), style))
    return out


def scaling_figure(data: pd.DataFrame) -> str:
    """Speedup and parallel efficiency against ranks, one line per job/backend/mode."""
    fig, (ax_s, ax_e) = _two_panels()
    for s, style in _lines(data, "ranks"):
        ax_s.plot(s["ranks"], s["speedup"], **style)
        ax_e.plot(s["ranks"], s["efficiency"], **style)
    ranks = np.unique(data["ranks"].to_numpy(float))
    ax_s.plot(ranks, ranks, color="black", linewidth=0.8, linestyle=":", label="ideal")
    ax_e.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    for ax in (ax_s, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ranks, [str(int(r)) for r in ranks])
    return _finish_panels(fig, (ax_s, ax_e), "MPI ranks (log scale)",
                          ("speedup over 1 rank", "parallel efficiency"),
                          ("speedup (strong scaling; weak: time ratio)",
                           "efficiency (1 = ideal)"),
                          "MPI scaling at the largest size of each job")


def message_figure(data: pd.DataFrame) -> str:
    """Latency (p2p) and bandwidth (p2p algorithm, allreduce bus) against message size."""
    # latency where measured (p2p), else the median time; bus bandwidth where defined
    data = data.assign(
        lat=data["latency_us"].where(data["latency_us"].notna(), data["median_s"] * 1e6),
        bw=data["bus_gbps"].where(data["bus_gbps"].notna(), data["gbps"]))
    fig, (ax_l, ax_b) = _two_panels()
    for s, style in _lines(data, "size", dashed="staged"):
        ax_l.plot(s["size"], s["lat"], **style)
        ax_b.plot(s["size"], s["bw"], **style)
    sizes = data["size"].to_numpy(float)
    figures.log_scale(ax_l, "x", sizes)
    figures.log_scale(ax_b, "x", sizes)
    figures.log_scale(ax_l, "y", data["lat"].to_numpy(float))
    if np.isfinite(data["bw"].to_numpy(float)).any():
        figures.log_scale(ax_b, "y", data["bw"].to_numpy(float))
    return _finish_panels(fig, (ax_l, ax_b), "message size (bytes, log scale)",
                          ("latency (µs, log scale)",
                           "bandwidth (GB/s; allreduce: bus bandwidth)"),
                          ("latency (lower is better)", "bandwidth (higher is better)"),
                          "MPI point-to-point and allreduce (dashed: staged through the host)")


def _finish_panels(fig: Any, axes: tuple[Any, Any], xlabel: str, ylabels: tuple[str, str],
                   titles: tuple[str, str], suptitle: str) -> str:
    """Label and grid both panels, title the figure, put the legend right of the second
    panel, and return the PNG."""
    for ax, ylabel, title in zip(axes, ylabels, titles, strict=True):
        ax.set_xlabel(xlabel)
        figures.grid(ax)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
    fig.suptitle(suptitle, fontsize=11)
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False)
    return figures.png(fig)


def scaling_frame(ok: pd.DataFrame) -> pd.DataFrame:
    rows = ok[ok["job"].isin(SCALING_JOBS)]
    if rows.empty:
        return rows
    largest = rows.groupby(["job", "backend", "path", "mode"])["size"].transform("max")
    rows = rows[rows["size"] == largest].copy()
    # speedup and efficiency from the times where the job did not record them
    base = rows[rows["ranks"] == 1].set_index(["job", "backend", "path", "mode"])["median_s"]
    key = list(zip(rows["job"], rows["backend"], rows["path"], rows["mode"], strict=True))
    t1 = pd.Series([base.get(k, math.nan) for k in key], index=rows.index)
    weak = rows["mode"] == "weak"
    est_speedup = (t1 / rows["median_s"]).where(~weak, t1 / rows["median_s"] * rows["ranks"])
    rows["speedup"] = rows["speedup"].fillna(est_speedup)
    rows["efficiency"] = rows["efficiency"].fillna(rows["speedup"] / rows["ranks"])
    rows["label"] = rows["job"] + " " + _label(rows)
    rows = rows[rows["speedup"].notna()]
    return rows[["label", "ranks", "speedup", "efficiency"]].sort_values(
        ["label", "ranks"], kind="mergesort").reset_index(drop=True)


def message_frame(ok: pd.DataFrame) -> pd.DataFrame:
    rows = ok[ok["job"].isin(MESSAGE_JOBS) & (ok["size"] > 0)]
    if rows.empty:
        return rows
    # the largest rank count of each curve (p2p is 2 ranks)
    most = rows.groupby(["job", "backend", "path", "mode"])["ranks"].transform("max")
    rows = rows[rows["ranks"] == most].copy()
    rows["label"] = rows["job"] + " " + _label(rows) + " n=" + rows["ranks"].map(
        lambda r: str(int(r)) if math.isfinite(r) else "?")
    return rows[["label", "size", "latency_us", "median_s", "gbps", "bus_gbps"]].sort_values(
        ["label", "size"], kind="mergesort").reset_index(drop=True)


def staged_vs_direct(ok: pd.DataFrame) -> pd.DataFrame | None:
    """At each job's largest message, direct (GPU-aware) against staged bandwidth."""
    rows = ok[ok["path"].isin(["staged", "direct"])]
    if rows.empty:
        return None
    out = []
    for (job, backend, mode), g in rows.groupby(["job", "backend", "mode"], sort=True):
        size = g["size"].max()
        at = g[g["size"] == size]
        at = at[at["ranks"] == at["ranks"].max()]

        def bw(path: str, at: pd.DataFrame = at) -> float:
            r = at[at["path"] == path]
            if r.empty:
                return math.nan
            v = r["bus_gbps"].fillna(r["gbps"]).iloc[0]
            return float(v) if pd.notna(v) else math.nan

        def t(path: str, at: pd.DataFrame = at) -> float:
            r = at[at["path"] == path]
            return float(r["median_s"].iloc[0]) if not r.empty else math.nan

        st, di = t("staged"), t("direct")
        ratio = st / di if st > 0 and di > 0 else math.nan
        out.append([job, backend, mode or "—", fmt_int(size), fmt_int(at["ranks"].max()),
                    fmt_time(st), fmt_time(di), fmt_sig(bw("staged")), fmt_sig(bw("direct")),
                    f"{ratio:.2f}×" if math.isfinite(ratio) else "—"])
    return text_table(["job", "backend", "mode", "size", "ranks", "staged time", "direct time",
                  "staged GB/s", "direct GB/s", "direct speedup"], out,
                 frozenset({"size", "ranks", "staged time", "direct time", "staged GB/s",
                            "direct GB/s", "direct speedup"}))


def _separate_gpus(row: pd.Series) -> bool:
    """Whether each rank of a row had a GPU of its own (distinct UUIDs, one per rank)."""
    uu = [u for u in str(row["gpu_uuids"]).split(";") if u]
    return row["device"] == "gpu" and len(uu) >= 2 and len(set(uu)) == len(uu)


def _rate(row: pd.Series) -> float:
    """A message row's bandwidth: the allreduce's bus bandwidth, else the algorithm's."""
    v = row[LINK_RATES.get(row["job"], "gbps")]
    return float(v) if _finite(v) else math.nan


def _pct(x: Any) -> str:
    """A share in per cent: whole numbers, two significant digits under 10 % (a
    staged path's 0.72 % of the link is not 0 %)."""
    if not _finite(x):
        return "—"
    x = float(x)
    return f"{x:.0f} %" if abs(x) >= 10 else f"{x:.2g} %"


def link_table(ok: pd.DataFrame) -> pd.DataFrame | None:
    """Every message path between GPUs against the link: the peer copy (the measured
    reference), then p2p and allreduce at 2+ ranks, per backend, path and mode: the
    bandwidth at the largest message as % of the link measured on the same host and of
    the datasheet, and the latency at the smallest message."""
    rows = ok[ok["job"].isin(MESSAGE_JOBS) & (ok["ranks"] >= 2) & (ok["size"] > 0)]
    if rows.empty:
        return None
    # the measured link first, then the jobs read against it, in report order
    order = {job: i for i, job in enumerate(sorted(MESSAGE_JOBS,
                                                    key=lambda j: j not in LINK_JOBS))}
    out = []
    keys = ["job", "backend", "path", "mode", "ranks"]
    for key, g in sorted(rows.groupby(keys, sort=True),
                         key=lambda kv: (order.get(kv[0][0], 9), *kv[0][1:])):
        job, backend, path, mode, ranks = key
        big = g.loc[g["size"].idxmax()]
        small = g.loc[g["size"].idxmin()]
        lat = small["latency_us"] if _finite(small["latency_us"]) else \
            float(small["median_s"]) * 1e6
        where = "one process" if job in SINGLE_PROCESS_JOBS else _gpus(big)
        out.append([job, backend, path, str(mode).replace("->", " → ") or "—",
                    fmt_int(ranks), where,
                    fmt_int(big["size"]), fmt_sig(_rate(big)), _pct(big["pct_of_link_ref"]),
                    _pct(big["pct_of_link"]), fmt_int(small["size"]), fmt_sig(lat)])
    return text_table(["job", "backend", "path", "mode", "ranks", "where",
                       "largest message (B)", "GB/s", "% of measured link",
                       "% of datasheet link", "smallest message (B)", "latency (µs)"], out,
                      frozenset({"ranks", "largest message (B)", "GB/s",
                                 "% of measured link", "% of datasheet link",
                                 "smallest message (B)", "latency (µs)"}))


def _faster(fast: pd.Series, slow: pd.Series) -> stats.Verdict:
    """Whether ``fast``'s row takes less time than ``slow``'s, by their quartiles."""
    return stats.compare(float(slow["median_s"]), float(fast["median_s"]),
                         base_iqr=(slow["q1_s"], slow["q3_s"]),
                         new_iqr=(fast["q1_s"], fast["q3_s"]))


#: the claim of the workshop book's MPI chapter that the direct rows judge
STAGING_CLAIM = ("CUDA-aware MPI passes device buffers with lower latency and higher "
                 "bandwidth than staging them through host memory")


def staging_verdict(ok: pd.DataFrame) -> str:
    """The claim :data:`STAGING_CLAIM`, judged on p2p rows whose two ranks each had a
    GPU of their own: per backend with both paths, ``direct`` against ``staged`` at the
    largest message both measured (bandwidth) and at the smallest (latency), each by
    the rows' quartiles (:func:`gpubench.report.stats.compare`). Holds where direct is
    faster at both ends for every such backend; '' when no such pair was measured.
    MPI's own allreduce of device buffers is judged beside it (:func:`_allreduce_clause`):
    a library may pass device buffers and still reduce them on the host."""
    p2p = ok[(ok["job"] == "p2p") & ok["path"].isin(["direct", "staged"])
             & (ok["mode"] == "")]
    p2p = p2p[p2p.apply(_separate_gpus, axis=1)] if not p2p.empty else p2p
    parts, held = [], []
    for backend, g in p2p.groupby("backend", sort=True):
        direct, staged = g[g["path"] == "direct"], g[g["path"] == "staged"]
        common = sorted(set(direct["size"]) & set(staged["size"]))
        if not common:
            continue
        at = {s: (direct[direct["size"] == s].iloc[0], staged[staged["size"] == s].iloc[0])
              for s in (common[-1], common[0])}
        (d_big, s_big), (d_small, s_small) = at[common[-1]], at[common[0]]
        bw, lat = _faster(d_big, s_big), _faster(d_small, s_small)
        held.append(bw.label == stats.FASTER and lat.label == stats.FASTER)
        ref = (f", {_pct(d_big['pct_of_link_ref'])} of the measured link"
               if _finite(d_big["pct_of_link_ref"]) else "")
        parts.append(
            f"{backend}: at {fmt_int(common[-1])} B direct {fmt_sig(_rate(d_big))} GB/s"
            f"{ref} against staged {fmt_sig(_rate(s_big))} GB/s "
            f"({_words(bw)}); at {fmt_int(common[0])} B {fmt_sig(d_small['latency_us'])} µs "
            f"against {fmt_sig(s_small['latency_us'])} µs ({_words(lat)})")
    if not parts:
        return ""
    verdict = ("holds" if all(held) else "does not hold" if not any(held)
               else "holds for some frameworks only")
    out = (f"{STAGING_CLAIM}: {verdict} for point-to-point, on two ranks with a GPU each "
           f"(p2p ping-pong, by quartiles). " + "; ".join(parts))
    clause = _allreduce_clause(ok)
    return f"{out}. {clause}" if clause else out


def _allreduce_clause(ok: pd.DataFrame) -> str:
    """MPI_Allreduce of device buffers (``direct``) against staging them, per backend at
    the most ranks with a GPU each and the largest buffer both measured, by quartiles;
    NCCL's bus bandwidth beside it where measured. '' without such a pair."""
    rows = ok[(ok["job"] == "allreduce") & (ok["mode"] != "nccl")
              & ok["path"].isin(["direct", "staged"])]
    rows = rows[rows.apply(_separate_gpus, axis=1)] if not rows.empty else rows
    nccl = ok[(ok["job"] == "allreduce") & (ok["mode"] == "nccl")]
    parts = []
    for backend, g in rows.groupby("backend", sort=True):
        g = g[g["ranks"] == g["ranks"].max()]
        direct, staged = g[g["path"] == "direct"], g[g["path"] == "staged"]
        common = sorted(set(direct["size"]) & set(staged["size"]))
        if not common:
            continue
        d = direct[direct["size"] == common[-1]].iloc[0]
        s = staged[staged["size"] == common[-1]].iloc[0]
        n = nccl[(nccl["backend"] == backend) & (nccl["ranks"] == d["ranks"])
                 & (nccl["size"] == common[-1])]
        beside = f"; NCCL {fmt_sig(_rate(n.iloc[0]))} GB/s" if not n.empty else ""
        parts.append(f"{backend} on {int(d['ranks'])} GPUs at {fmt_int(common[-1])} B: direct "
                     f"{fmt_sig(_rate(d))} GB/s against staged {fmt_sig(_rate(s))} GB/s "
                     f"({_words(_faster(d, s))}){beside}")
    if not parts:
        return ""
    return ("MPI_Allreduce of device buffers, bus bandwidth: " + "; ".join(parts))


def _words(v: stats.Verdict) -> str:
    """A verdict as a reader says it: "direct 12× faster", "too close to call"."""
    if v.label == stats.FASTER:
        return f"direct {1 / v.ratio:.3g}× faster"
    if v.label == stats.SLOWER:
        return f"direct {v.ratio:.3g}× slower"
    if v.label == stats.SAME:
        return "the same within 5 %"
    return "too close to call"


#: The halo exchange's weak-scaling efficiency the project expects at the most ranks run
#: (at 4 GPUs)
HALO_WEAK_TARGET = 0.8


def halo_target_table(ok: pd.DataFrame) -> pd.DataFrame | None:
    """Halo weak-scaling efficiency per backend, path and size at the most ranks run,
    against :data:`HALO_WEAK_TARGET`."""
    h = ok[(ok["job"] == "halo") & (ok["mode"] == "weak") & (ok["ranks"] > 1)
           & ok["efficiency"].notna()]
    if h.empty:
        return None
    most = h.groupby(["backend", "path", "size"])["ranks"].transform("max")
    h = h[h["ranks"] == most].sort_values(["backend", "path", "size"], kind="mergesort")
    rows = [[r["backend"], r["path"], f"{int(r['size']):,}", str(int(r["ranks"])),
             f"{float(r['efficiency']):.2f}",
             "met" if float(r["efficiency"]) >= HALO_WEAK_TARGET else "MISSED"]
            for _, r in h.iterrows()]
    return text_table(["backend", "path", "cells per rank", "ranks", "weak efficiency",
                  f"target ≥ {HALO_WEAK_TARGET:.2f}"], rows,
                 frozenset({"ranks", "weak efficiency"}))


def _gpus(row: pd.Series) -> str:
    """Where a row's ranks ran: CPU ranks, ranks sharing one GPU, or N GPUs."""
    if row["device"] != "gpu":
        return "CPU ranks"
    uu = {u for u in str(row["gpu_uuids"]).split(";") if u}
    if not uu:
        return "GPU (unrecorded)"
    if len(uu) == 1 and row["ranks"] > 1:
        return "1 GPU, shared"
    return f"{len(uu)} GPU" + ("s" if len(uu) > 1 else "")


def split_table(ok: pd.DataFrame) -> pd.DataFrame | None:
    """Per job, backend, path and mode at its largest size, every rank count: the mean
    step time and how much of it the ranks spent computing and communicating (means
    over ranks; the rest is waiting at the barrier and Python between the two)."""
    rows = ok[ok["compute_s"].notna() & ok["comm_s"].notna() & (ok["mean_s"] > 0)]
    if rows.empty:
        return None
    largest = rows.groupby(["job", "backend", "path", "mode"])["size"].transform("max")
    rows = rows[rows["size"] == largest].sort_values(
        ["job", "backend", "path", "mode", "ranks"], kind="mergesort")
    out = []
    for _, r in rows.iterrows():
        step, comp, comm = float(r["mean_s"]), float(r["compute_s"]), float(r["comm_s"])
        out.append([r["job"], r["backend"], r["path"], r["mode"] or "—", fmt_int(r["size"]),
                    fmt_int(r["ranks"]), _gpus(r), fmt_time(step), fmt_time(comp),
                    fmt_time(comm), fmt_time(max(0.0, step - comp - comm)),
                    f"{100 * comm / step:.0f} %", fmt_time(r["comm_max_s"])])
    return text_table(["job", "backend", "path", "mode", "size", "ranks", "where",
                       "step (mean)", "compute", "communication", "rest",
                       "comm. share", "comm. (worst rank)"], out,
                      frozenset({"size", "ranks", "step (mean)", "compute", "communication",
                                 "rest", "comm. share", "comm. (worst rank)"}))


def overlap_table(ok: pd.DataFrame) -> pd.DataFrame | None:
    """The halo exchange blocking (``Sendrecv``) against overlapped (``Isend``/``Irecv``
    behind the interior), row by row on the same backend, ranks, size, path and mode
    (each overlapped job against the one it overlaps: :data:`gpubench.mpi.schema.
    OVERLAPPED`)."""
    keys = ["backend", "ranks", "size", "dtype", "path", "mode"]
    pairs = []
    for over, blocks in OVERLAPPED.items():
        blocking = ok[ok["job"] == blocks].drop_duplicates(keys).set_index(keys)
        overlap = ok[ok["job"] == over].drop_duplicates(keys).set_index(keys)
        pairs.append(blocking.merge(overlap, how="inner", left_index=True,
                                    right_index=True, suffixes=("_b", "_o")))
    both = pd.concat(pairs) if pairs else pd.DataFrame()
    if both.empty:
        return None
    out = []
    for key, r in both.sort_index().iterrows():
        backend, ranks, size, _dtype, path, mode = key
        tb, to = float(r["median_s_b"]), float(r["median_s_o"])
        where = _gpus(pd.Series({"device": r["device_b"], "gpu_uuids": r["gpu_uuids_b"],
                                 "ranks": ranks}))
        hidden = r["hidden_s_o"]
        if not _finite(hidden):
            hidden = r["comm_s_b"] - r["comm_s_o"]
        share = hidden / r["comm_s_b"] if _finite(hidden) and r["comm_s_b"] > 0 \
            else math.nan
        out.append([backend, path, mode or "—", fmt_int(size), fmt_int(ranks), where,
                    fmt_time(tb), fmt_time(to),
                    f"{tb / to:.2f}×" if tb > 0 and to > 0 else "—",
                    fmt_time(r["comm_s_b"]), fmt_time(r["comm_s_o"]), fmt_time(hidden),
                    _pct(100 * share)])
    return text_table(["backend", "path", "mode", "cells", "ranks", "where",
                       "blocking", "overlapped", "overlap speedup", "blocking comm.",
                       "overlapped comm.", "hidden", "hidden share"], out,
                      frozenset({"cells", "ranks", "blocking", "overlapped",
                                 "overlap speedup", "blocking comm.", "overlapped comm.",
                                 "hidden", "hidden share"}))


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def multi_gpu_note(frame: pd.DataFrame) -> str:
    """What the GPU columns of the split and overlap tables cover so far: CPU ranks
    only, ranks sharing one GPU, or one GPU per rank."""
    ok = frame[(frame["status"] == "ok") & frame["job"].isin([*OVERLAPPED,
                                                               *OVERLAPPED.values()])]
    gpu = ok[ok["device"] == "gpu"]
    spread = gpu[(gpu["ranks"] > 1) & gpu.apply(
        lambda r: len({u for u in str(r["gpu_uuids"]).split(";") if u}) > 1, axis=1)] \
        if not gpu.empty else gpu
    if not spread.empty:
        return ""
    if gpu.empty:
        return ("No GPU ranks are measured here (CPU ranks only): the rows of ranks sharing "
                "one GPU come from a GPU machine, and the multi-GPU figures (one GPU per "
                "rank) come when a multi-GPU machine is available")
    return ("The GPU rows here are ranks sharing one GPU; the multi-GPU figures (one GPU "
            "per rank) come when a multi-GPU machine is available")


def environment_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    cols = ["backend", "mpi_library", "mpi_version", "cuda_aware", "launcher",
            "device_selection", "device_name", "framework_version", "host"]
    env = frame[cols].drop_duplicates().sort_values(cols, kind="mergesort")
    if env.empty:
        return None
    rows = [[v if v else "unknown" for v in r] for r in env.astype(str).to_numpy().tolist()]
    return text_table(cols, rows)


def device_check(frame: pd.DataFrame) -> list[str]:
    """Device selection: every rank of a GPU job must have seen a distinct GPU."""
    out = []
    gpu = frame[(frame["device"] == "gpu") & (frame["gpu_uuids"] != "")
                & (frame["status"] == "ok")]
    for (job, backend, ranks), g in gpu.groupby(["job", "backend", "ranks"], sort=True):
        uu = [u for u in str(g["gpu_uuids"].iloc[0]).split(";") if u]
        if len(uu) != len(set(uu)):
            out.append(f"{job} {backend} with {int(ranks)} ranks: ranks share a GPU "
                       f"({len(set(uu))} distinct of {len(uu)})")
    return out


def failures_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    bad = frame[frame["status"] != "ok"]
    if bad.empty:
        return None
    rows = []
    for (status, job, backend, reason), g in bad.groupby(["status", "job", "backend",
                                                          "reason"], sort=True):
        ranks = ", ".join(str(int(r)) for r in sorted(set(g["ranks"].dropna())))
        rows.append([status, job, backend, ranks or "—", str(len(g)), reason or "—"])
    return text_table(["status", "job", "backend", "ranks", "rows", "reason"], rows,
                 frozenset({"rows"}))


@dataclass
class MpiSection:
    """The MPI section's data: scaling (figure, table, halo target), latency and bandwidth
    (figure), staged vs direct, compute against communication, the halo blocking against
    overlapped (and what the GPU rows cover), device selection, the MPI environment and
    failures."""

    problem: str
    notes: list[str]
    n_rows: int
    counts: str
    samples_note: str
    scaling: Figure | None = None
    scaling_table: pd.DataFrame | None = None
    target: pd.DataFrame | None = None
    messages: Figure | None = None
    link: pd.DataFrame | None = None
    staging: str = ""
    staged: pd.DataFrame | None = None
    split: pd.DataFrame | None = None
    overlap: pd.DataFrame | None = None
    multi_gpu: str = ""
    clashes: list[str] = field(default_factory=list)
    environment: pd.DataFrame | None = None
    failures: pd.DataFrame | None = None


def section(data: MpiData) -> MpiSection:
    frame = data.frame
    if data.problem or frame.empty:
        return MpiSection(data.problem, list(data.notes), len(frame), "", data.samples_note,
                          failures=None if data.problem else failures_table(frame))
    counts = ", ".join(f"{s} {n}" for s, n in frame["status"].value_counts().sort_index()
                       .items())
    out = MpiSection("", list(data.notes), len(frame), counts, data.samples_note)
    ok = frame[frame["status"] == "ok"]
    sc = scaling_frame(ok)
    if not sc.empty:
        worst = sc.sort_values(["efficiency", "label"], kind="mergesort").iloc[0]
        ranks = ", ".join(str(int(r)) for r in sorted(set(sc["ranks"])))
        alt = (f"Two plots against MPI ranks ({ranks}): speedup over one rank and parallel "
               f"efficiency, {sc['label'].nunique()} "
               f"curve(s): {'; '.join(sorted(set(sc['label'])))}. Lowest efficiency: "
               f"{worst['label']} at {int(worst['ranks'])} ranks, {worst['efficiency']:.2f}.")
        out.scaling = Figure(alt, scaling_figure, (sc,), "mpi")
        out.scaling_table = text_table(
            ["job / backend / path / mode", "ranks", "speedup", "efficiency"],
            [[r["label"], str(int(r["ranks"])), f"{r['speedup']:.2f}",
              f"{r['efficiency']:.2f}"] for _, r in sc.iterrows()],
            frozenset({"ranks", "speedup", "efficiency"}))
        out.target = halo_target_table(ok)
    msg = message_frame(ok)
    if not msg.empty:
        alt = (f"Two log-log plots against message size in bytes "
               f"({int(msg['size'].min()):,} to {int(msg['size'].max()):,}): latency in µs and "
               f"bandwidth in GB/s, {msg['label'].nunique()} curve(s): "
               f"{'; '.join(sorted(set(msg['label'])))}.")
        out.messages = Figure(alt, message_figure, (msg,), "mpi")
    out.link = link_table(ok)
    out.staging = staging_verdict(ok)
    out.staged = staged_vs_direct(ok)
    out.split = split_table(ok)
    out.overlap = overlap_table(ok)
    out.multi_gpu = multi_gpu_note(frame)
    out.clashes = device_check(frame)
    out.environment = environment_table(frame)
    out.failures = failures_table(frame)
    return out


def mpi_html(data: MpiData, figs: figures.FigureQueue) -> str:
    """The section as HTML (``mpi.html.j2``); figures are queued on ``figs``."""
    from gpubench.report.sections.common import figure_drawer

    return render.render_html("mpi.html.j2", s=section(data), figure=figure_drawer(figs))


def mpi_markdown(data: MpiData) -> str:
    """The section as Markdown (``mpi.md.j2``)."""
    return render.render_md("mpi.md.j2", s=section(data))
