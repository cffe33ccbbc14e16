"""mpi.csv: one tidy row per MPI measurement (the columns are fixed here).

Also the derived numbers that need more than one row or a convention: bus bandwidth
(nccl-tests) and parallel efficiency, which needs the ranks=1 row of the same job and
so is computed when the steps are collected.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from gpubench import results
from gpubench.mpi import catalog_of_jobs, jobs_where

#: 2: mean_s and the compute / communication split (compute_s ... hidden_s);
#: 3: the measured link (link_ref_gbps, pct_of_link_ref) and the peer_copy job
SCHEMA_VERSION = 3

#: (name, kind, meaning); kinds as in :mod:`gpubench.results`
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("job", "str", "MPI job (device_selection, reduction, matmul, ..., multi_gpu)"),
    ("framework", "str", "numpy, cupy, numba, jax, cuda_python"),
    ("device", "str", "cpu or gpu"),
    ("backend", "str", "framework-device"),
    ("ranks", "int", "MPI ranks (multi_gpu: GPUs driven by one process)"),
    ("size", "int", "problem size in the unit of size_meaning"),
    ("size_meaning", "str", "what size counts (global elements, bytes per message, ...)"),
    ("dtype", "str", "element type"),
    ("path", "str", "host (host buffers), direct (device buffers to MPI), staged "
     "(device buffers copied through host memory) or n/a"),
    ("mode", "str", "strong/weak (halo), the algorithm (allreduce), the strategy "
     "(device_selection), the API (multi_gpu); else empty"),
    ("status", "str", "ok, wrong_result, unavailable, error or skipped"),
    ("reason", "str", "why the status is not ok"),
    ("samples", "int", "timed iterations kept (warm-up skipped)"),
    ("median_s", "float", "median over samples of the slowest rank's time, seconds"),
    ("min_s", "float", "fastest sample"),
    ("q1_s", "float", "25th percentile"),
    ("q3_s", "float", "75th percentile"),
    ("max_s", "float", "slowest sample"),
    ("iqr_s", "float", "q3_s - q1_s"),
    ("mean_s", "float", "mean over samples of the slowest rank's time: what compute_s and "
     "comm_s are shares of"),
    ("compute_s", "float", "seconds per timed call in local computation (device synced), "
     "each rank's mean over the samples, then the mean over ranks"),
    ("comm_s", "float", "seconds per timed call in MPI calls (and the staged path's copies "
     "through host memory), each rank's mean, then the mean over ranks; "
     "compute_s + comm_s <= mean_s"),
    ("compute_max_s", "float", "compute_s of the slowest-computing rank (load imbalance)"),
    ("comm_max_s", "float", "comm_s of the rank that spent longest communicating"),
    ("hidden_s", "float", "halo_overlap: communication taken off the step, the blocking "
     "halo's comm_s less this row's (same backend, ranks, size, path, mode)"),
    ("gbps", "float", "algorithm bandwidth: bytes / median_s / 1e9"),
    ("bus_gbps", "float", "allreduce bus bandwidth, 2(n-1)/n x gbps (nccl-tests)"),
    ("latency_us", "float", "p2p one-way latency: half the median round trip, microseconds"),
    ("efficiency", "float", "parallel efficiency vs ranks=1 (strong: T1/(n Tn); "
     "weak and throughput jobs: T1/Tn)"),
    ("speedup", "float", "T1 / Tn for the same global problem (strong scaling)"),
    ("rel_err", "float", "distance to the single-rank float64 reference"),
    ("tolerance", "float", "largest rel_err that passes"),
    ("gpu_uuids", "str", "the GPU of each rank, ';'-joined in rank order"),
    ("device_selection", "str", "rank-to-GPU strategy used (the workshop book, §9.4)"),
    ("mpi_library", "str", "MPI library (first line of MPI_Get_library_version)"),
    ("mpi_version", "str", "MPI standard version"),
    ("cuda_aware", "str", "yes, no or unknown, and how it was learned"),
    ("launcher", "str", "the command line prefix that started the ranks"),
    ("link_gbps", "float", "datasheet bandwidth of the link between ranks (config)"),
    ("pct_of_link", "float", "gbps (p2p) or bus_gbps (allreduce) as % of link_gbps; "
     "device buffers, 2+ ranks"),
    ("link_ref_gbps", "float", "the link between ranks as measured on the same host: the "
     "peer_copy job's rate between GPUs 0 and 1 at its largest size (harmonic mean of the "
     "two directions, as a round trip crosses each once)"),
    ("pct_of_link_ref", "float", "gbps (p2p) or bus_gbps (allreduce) as % of "
     "link_ref_gbps; device buffers, 2+ ranks"),
    ("host", "str", "host name (rank 0)"),
    ("device_name", "str", "GPU or CPU model"),
    ("framework_version", "str", "versions of the framework and mpi4py"),
    ("git_commit", "str", "commit of this repository"),
    ("timestamp", "str", "UTC time of the measurement"),
    ("schema_version", "int", "version of this schema"),
)
COLUMN_NAMES: tuple[str, ...] = tuple(c[0] for c in COLUMNS)
KEY_NAMES: tuple[str, ...] = ("job", "backend", "ranks", "size", "dtype", "path", "mode")
SAMPLE_COLUMNS: tuple[str, ...] = ("job", "backend", "ranks", "size", "path", "mode",
                                   "sample_index", "time_s")


def empty_row() -> dict[str, Any]:
    return {name: ("" if kind == "str" else math.nan) for name, kind, _ in COLUMNS}


def coerce(frame: pd.DataFrame) -> pd.DataFrame:
    for name, kind, _ in COLUMNS:
        if name not in frame:
            frame[name] = "" if kind == "str" else math.nan
        if kind == "str":
            values = frame[name].astype(object)
            frame[name] = values.where(values.notna(), "").astype(str)
        elif kind == "int":
            frame[name] = pd.to_numeric(frame[name], errors="raise").astype("Int64")
        else:
            frame[name] = pd.to_numeric(frame[name], errors="raise").astype("float64")
    return frame[list(COLUMN_NAMES)]


def rows_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    return coerce(pd.DataFrame([dict(r) for r in rows], columns=list(COLUMN_NAMES)))


def validate(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Columns, statuses, a reason on every non-ok row, a time on every ok row."""
    missing = [c for c in COLUMN_NAMES if c not in frame.columns]
    if missing:
        raise results.SchemaError(f"{source}: missing columns {missing}")
    frame = coerce(frame.copy())
    bad = sorted(set(frame["status"]) - set(results.STATUSES))
    if bad:
        raise results.SchemaError(f"{source}: unknown status values {bad}")
    ok = frame["status"] == "ok"
    if (ok & ~(frame["median_s"] > 0)).any():
        raise results.SchemaError(f"{source}: ok rows without a positive median_s")
    if (~ok & (frame["reason"].str.len() == 0)).any():
        raise results.SchemaError(f"{source}: non-ok rows without a reason")
    dup = frame.duplicated(list(KEY_NAMES), keep=False)
    if dup.any():
        first = frame[dup].iloc[0]
        raise results.SchemaError(f"{source}: rows share a key, e.g. "
                                  + ", ".join(f"{k}={first[k]}" for k in KEY_NAMES))
    return frame


def read(path: str | os.PathLike[str]) -> pd.DataFrame:
    frame = results.read_csv(path, results.TIMINGS_MAX_BYTES, "MPI results file",
                             dtype={"reason": str, "mode": str, "gpu_uuids": str})
    return validate(frame, str(path))


def bus_bandwidth(algbw: float, ranks: int) -> float:
    """nccl-tests bus bandwidth of an allreduce: algbw x 2(n-1)/n.

    An allreduce moves 2(n-1)/n of the buffer over each rank's link (ring
    reduce-scatter + all-gather), so bus bandwidth is comparable with the link's
    peak whatever n is. One rank moves nothing: 0.
    """
    if ranks < 1:
        raise ValueError("ranks must be >= 1")
    return algbw * 2.0 * (ranks - 1) / ranks


#: jobs whose size is the global problem (strong scaling: the same work split n ways)
STRONG_JOBS = jobs_where(scaling="strong")
#: jobs whose rows say which (``mode``: strong or weak; halo)
BY_MODE_JOBS = jobs_where(scaling="by_mode")


def add_scaling(frame: pd.DataFrame) -> pd.DataFrame:
    """Fill ``speedup`` and ``efficiency`` from the ranks=1 row of the same measurement.

    Strong scaling (global size fixed: halo strong and the STRONG_JOBS): speedup
    T1/Tn, efficiency T1/(n Tn). Weak scaling (halo weak: size per rank fixed):
    efficiency T1/Tn (ideal: constant time), no speedup. Only ok rows, only where an
    ok ranks=1 row exists; p2p, allreduce and device_selection have no scaling.
    """
    frame = frame.copy()
    frame["speedup"] = math.nan
    frame["efficiency"] = math.nan
    ok = frame[frame["status"] == "ok"]
    group_keys = ["job", "backend", "size", "dtype", "path", "mode"]
    base = ok[ok["ranks"] == 1].set_index(group_keys)["median_s"]
    base = base[~base.index.duplicated()]
    for idx, row in ok.iterrows():
        job, mode = row["job"], row["mode"]
        by_mode = job in BY_MODE_JOBS
        weak = by_mode and mode == "weak"
        strong = (by_mode and mode == "strong") or job in STRONG_JOBS
        if not (weak or strong):
            continue
        key = tuple(row[k] for k in group_keys)
        if key not in base.index:
            continue
        t1, tn, n = float(base[key]), float(row["median_s"]), int(row["ranks"])
        if weak:
            frame.at[idx, "efficiency"] = t1 / tn
        else:
            frame.at[idx, "speedup"] = t1 / tn
            frame.at[idx, "efficiency"] = t1 / (n * tn)
    return frame


#: the overlapped job of a blocking one: its rows get ``hidden_s`` from the blocking rows
#: (:attr:`~gpubench.mpi.catalog.MpiJob.overlaps`)
OVERLAPPED = {name: job.overlaps for name, job in catalog_of_jobs().items() if job.overlaps}
#: jobs whose rows are the link measured on the host (peer_copy)
LINK_JOBS = jobs_where(link_reference=True)
#: jobs whose messages cross the link between ranks (p2p, allreduce)
BETWEEN_RANKS = jobs_where(message=True, single_process=False)
#: job -> the column of its rows read against the link, where not ``gbps``
LINK_RATES = {name: job.link_rate for name, job in catalog_of_jobs().items()
              if job.link_rate != "gbps"}


def add_hidden(frame: pd.DataFrame) -> pd.DataFrame:
    """``hidden_s`` of each ok overlapped row (:data:`OVERLAPPED`): the communication
    seconds per call of the blocking job's ok row with the same backend, ranks, size,
    dtype, path and mode, less this row's (the exchange's time that the interior's
    computation covered). Negative where posting and waiting cost more than they hid."""
    frame = frame.copy()
    frame["hidden_s"] = math.nan
    keys = ["backend", "ranks", "size", "dtype", "path", "mode"]
    ok = frame[(frame["status"] == "ok") & frame["comm_s"].notna()]
    for over, blocking in OVERLAPPED.items():
        base = ok[ok["job"] == blocking].set_index(keys)["comm_s"]
        base = base[~base.index.duplicated()]
        for idx, row in ok[ok["job"] == over].iterrows():
            key = tuple(row[k] for k in keys)
            if key in base.index:
                frame.at[idx, "hidden_s"] = float(base[key]) - float(row["comm_s"])
    return frame


#: the peer copy between these two GPUs, both ways, is the link the p2p rows cross (ranks
#: 0 and 1 on GPUs 0 and 1: the device selection strategies all give that)
REFERENCE_PAIR = ("0->1", "1->0")


def link_reference(frame: pd.DataFrame) -> dict[str, float]:
    """Per host, the link measured there: the ``peer_copy`` rate between the GPUs of
    :data:`REFERENCE_PAIR` at each direction's largest message, combined as a harmonic
    mean (a ping-pong's round trip crosses the link once each way). A direction whose
    largest message is not ok is left out, not replaced by a smaller one (a smaller
    message is further from the link's rate); one direction alone where only it is."""
    rows = frame[frame["job"].isin(LINK_JOBS)]
    out: dict[str, float] = {}
    for host, g in rows.groupby("host", sort=True):
        rates = []
        for mode in REFERENCE_PAIR:
            d = g[g["mode"] == mode]
            if d.empty:
                continue
            top = d.loc[d["size"].idxmax()]
            if top["status"] == "ok" and top["gbps"] > 0:
                rates.append(float(top["gbps"]))
        if rates:
            out[str(host)] = len(rates) / sum(1.0 / r for r in rates)
    return out


def add_link(frame: pd.DataFrame) -> pd.DataFrame:
    """How much of the link a device buffer's trip between ranks used: point-to-point
    bandwidth, or an allreduce's bus bandwidth (the nccl-tests convention), as % of the
    datasheet's ``link_gbps`` (``pct_of_link``) and of the link measured on the same
    host by the peer copy (``link_ref_gbps``, ``pct_of_link_ref``; the peer copy
    itself gets the datasheet's only). None with one rank (nothing crosses a link: a
    1-rank NCCL allreduce is a local copy) or with host buffers (they never touch the
    GPU link)."""
    frame = frame.copy()
    rate = frame["gbps"]
    for job, column in LINK_RATES.items():
        rate = rate.where(frame["job"] != job, frame[column] if column in frame else math.nan)
    between_ranks = frame["job"].isin(BETWEEN_RANKS)
    has = ((between_ranks | frame["job"].isin(LINK_JOBS)) & (frame["link_gbps"] > 0)
           & (rate > 0) & (frame["ranks"] >= 2) & (frame["path"] != "host"))
    frame["pct_of_link"] = math.nan
    frame.loc[has, "pct_of_link"] = 100.0 * rate[has] / frame.loc[has, "link_gbps"]
    ref = frame["host"].astype(str).map(link_reference(frame)).astype("float64")
    measured = between_ranks & (ref > 0) & (rate > 0) & (frame["ranks"] >= 2) \
        & (frame["path"] != "host")
    frame["link_ref_gbps"] = ref.where(between_ranks & (frame["ranks"] >= 2)
                                       & (frame["path"] != "host"))
    frame["pct_of_link_ref"] = math.nan
    frame.loc[measured, "pct_of_link_ref"] = 100.0 * rate[measured] / ref[measured]
    return frame
