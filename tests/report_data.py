"""Synthetic result sets for the report tests: CPU and GPU rows, hot and cold, samples
whose medians reproduce the rows', a probe record with ceilings, and MPI rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpubench import results

SIZES = (1 << 10, 1 << 14, 1 << 18, 1 << 22)
EVIL = "<img src=x onerror=alert(1)>"

ENV: dict[str, Any] = {
    "host": "testhost", "cpu_model": "Test CPU", "cpu_cores": 4, "memory_bytes": 16 << 30,
    "os": "Linux", "python_version": "3.11.7", "git_commit": "abc123",
    "timestamp": "2024-01-02T03:00:00Z", "gpu_reason": "",
    "gpus": [{"index": 0, "name": "Test GPU", "memory_bytes": 80 << 30,
              "driver_version": "1.0", "uuid": "GPU-0"}],
    "ceilings": {"d2d_copy_gbps": 2000.0, "sgemm_gflops": 50000.0, "dgemm_gflops": 50000.0,
                 "h2d_pageable_gbps": 8.0, "h2d_pinned_gbps": 50.0, "cpu_copy_gbps": 20.0,
                 "cpu_sgemm_gflops": 1000.0, "cpu_dgemm_gflops": 500.0,
                 "measured_with": "test"},
    "packages": {"numpy": "2.0", "cupy": "13"},
}


def _samples(median: float, n: int, seed: int, spread: float = 0.02) -> np.ndarray:
    """n positive samples around ``median`` (the row's statistics are computed from them)."""
    rng = np.random.default_rng(seed)
    return np.abs(median * (1 + spread * rng.standard_normal(n)))


#: a GPU call's dispatch and wait on the caller's clock, over its device time
SYNC_OVERHEAD_S, PIPELINED_OVERHEAD_S = 6e-6, 3e-6


def caller_samples(r: dict[str, Any], s: np.ndarray) -> dict[str, np.ndarray]:
    """The caller clocks' samples of a GPU hot row (device samples + a fixed overhead);
    none for CPU rows (their wall samples are the caller's clock) and cold rows."""
    if r["device"] != "gpu" or r["mode"] != "hot" or not len(s):
        return {}
    return {"sync": s + SYNC_OVERHEAD_S, "pipelined": s + PIPELINED_OVERHEAD_S}


def row(framework: str, device: str, impl: str, kernel: str, size: int, dtype: str,
        median: float, mode: str = "hot", threads: int = 4, variant: str = "default",
        status: str = "ok", reason: str = "", n: int = 21, seed: int = 0,
        spread: float = 0.02) -> tuple[dict[str, Any], np.ndarray]:
    r = results.empty_row()
    nbytes = 3.0 * size * (4 if dtype == "float32" else 8)
    flops = 2.0 * size ** 1.5 if kernel == "matmul" else float(size)
    s = _samples(median, n, seed, spread) if status == "ok" else np.array([])
    r.update(
        framework=framework, device=device, backend=f"{framework}-{device}",
        implementation=impl, kernel=kernel, variant=variant, size=size, dtype=dtype,
        threads=threads, status=status, reason=reason, mode=mode,
        timer="cuda_event" if device == "gpu" else "perf_counter",
        host="testhost", cpu_model="Test CPU", cpu_cores=4, python_version="3.11.7",
        git_commit="abc123", config_hash="cafe", timestamp="2024-01-02T03:04:05Z",
        schema_version=results.SCHEMA_VERSION, framework_version=f"{framework} 1.0",
        device_name="Test GPU" if device == "gpu" else "Test CPU")
    if status == "ok":
        q1, med, q3 = np.percentile(s, [25, 50, 75])
        r.update(samples=n, median_s=float(med), min_s=float(s.min()), max_s=float(s.max()),
                 q1_s=float(q1), q3_s=float(q3), iqr_s=float(q3 - q1), mean_s=float(s.mean()),
                 rel_spread=float((q3 - q1) / med), stop_reason="converged",
                 first_call_s=median * 40 + (0.2 if framework != "numpy" else 0.0),
                 setup_s=0.001, bytes=nbytes, flops=flops, gbps=nbytes / med / 1e9,
                 gflops=flops / med / 1e9, rel_err=1e-7, tolerance=1e-5,
                 ceiling="d2d_copy 2000 GB/s",
                 pct_of_ceiling=100 * nbytes / med / 1e9 / 2000.0)
        clocks = caller_samples(r, s) or ({"sync": s, "pipelined": s}
                                          if device == "cpu" else {})
        for clock, cs in clocks.items():
            c1, cm, c3 = np.percentile(cs, [25, 50, 75])
            r.update({f"{clock}_samples": len(cs), f"{clock}_median_s": float(cm),
                      f"{clock}_q1_s": float(c1), f"{clock}_q3_s": float(c3)})
        if clocks:
            r.update(pipelined_k=1 if device == "cpu" else 8,
                     caller_timer=r["timer"] if device == "cpu" else "perf_counter+sync")
    return r, s


def result_set(gpu: bool = True) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """numpy-cpu vs cupy-gpu (GPU wins from 2**14 up) and torch-gpu (always slower)."""
    rows, samples = [], []
    seed = 0
    for kernel in ("vector_add", "matmul"):
        for dtype in ("float32", "float64"):
            for size in SIZES:
                cpu_t = size * 1e-9 + 1e-6
                gpu_t = size * 1e-11 + 5e-6
                specs = [("numpy", "cpu", "ufunc", cpu_t, "hot")]
                if gpu:
                    specs += [("cupy", "gpu", "array_ops", gpu_t, "hot"),
                              ("cupy", "gpu", "array_ops", gpu_t * 1.1, "cold"),
                              ("torch", "gpu", "eager", max(cpu_t, gpu_t) * 3, "hot")]
                for fw, dev, impl, t, mode in specs:
                    seed += 1
                    r, s = row(fw, dev, impl, kernel, size, dtype, t, mode=mode, seed=seed)
                    rows.append(r)
                    samples.append(_sample_frame(r, s))
    if gpu:
        rows.append(row("numba", "gpu", "cuda_jit", "vector_add", SIZES[0], "float32", 0,
                        status="error", reason=f"worker crashed {EVIL}")[0])
    frame = pd.concat(samples, ignore_index=True)
    return rows, frame


#: the rates that are a count over ``median_s`` (gpubench.results.DERIVED)
RATES = ("gbps", "gflops")


def scale_times(frame: pd.DataFrame, rows: Any, factor: float,
                columns: Sequence[str] | None = None) -> None:
    """Times of ``rows`` (``columns``: default every float ``*_s`` column) times
    ``factor``, and their rates over ``factor``, so the rows stay consistent."""
    cols = columns or [c for c in frame.columns if c.endswith("_s")
                       and frame[c].dtype.kind == "f"]
    frame.loc[rows, list(cols)] = frame.loc[rows, list(cols)] * factor
    frame.loc[rows, list(RATES)] = frame.loc[rows, list(RATES)] / factor


def _sample_frame(r: dict[str, Any], s: np.ndarray) -> pd.DataFrame:
    key = {k: r[k] for k in results.KEY_NAMES}
    clocks = {"device": s, **caller_samples(r, s)}
    return pd.DataFrame([{**key, "clock": c, "sample": i, "time_s": float(t)}
                         for c, ts in clocks.items() for i, t in enumerate(ts)],
                        columns=list(results.SAMPLE_COLUMNS))


def mpi_rows() -> pd.DataFrame:
    """A small mpi.csv per the contract: halo scaling, p2p staged/direct, one failure."""
    from gpubench.report.mpi import MPI_COLUMNS

    out = []

    def add(**kw: Any) -> None:
        base = {c: "" for c in MPI_COLUMNS}
        base.update(framework="cupy", device="gpu", backend="cupy-gpu", dtype="float64",
                    status="ok", reason="", samples=10, mpi_library="Open MPI",
                    mpi_version="5.0", cuda_aware="yes", launcher="mpiexec", host="testhost",
                    device_name="Test GPU", framework_version="cupy 13", git_commit="abc123",
                    timestamp="2024-01-02T03:04:05Z", schema_version=1,
                    device_selection="OMPI_COMM_WORLD_LOCAL_RANK", path="n/a", mode="")
        base.update(kw)
        out.append(base)

    for ranks, t in ((1, 1.0), (2, 0.55), (4, 0.3)):
        add(job="halo", ranks=ranks, size=1 << 24, size_meaning="cells", mode="strong",
            median_s=t, q1_s=t * 0.98, q3_s=t * 1.02,
            gpu_uuids=";".join(f"GPU-{i}" for i in range(ranks)))
        add(job="reduction", ranks=ranks, size=1 << 24, size_meaning="elements",
            median_s=t * 0.1, gpu_uuids=";".join(f"GPU-{i}" for i in range(ranks)))
    for size in (8, 1024, 1 << 20):
        for path, lat in (("staged", 20.0), ("direct", 5.0)):
            t = lat * 1e-6 + size / (10e9 if path == "staged" else 40e9)
            add(job="p2p", ranks=2, size=size, size_meaning="bytes", path=path, median_s=t,
                latency_us=t * 1e6, gbps=size / t / 1e9)
    add(job="allreduce", ranks=4, size=1 << 20, size_meaning="bytes", path="direct",
        mode="ring", median_s=1e-4, gbps=10.0, bus_gbps=15.0)
    add(job="matmul", backend="numba-gpu", framework="numba", ranks=4, size=4096,
        status="error", reason=f"MPI_Init failed {EVIL}")
    return pd.DataFrame(out, columns=list(MPI_COLUMNS))


def write_set(folder: Path, gpu: bool = True, shuffle_seed: int | None = None,
              env: dict[str, Any] | None = None) -> dict[str, Path]:
    """timings.csv, samples.csv, host.json, mpi.csv in ``folder``; optionally shuffled."""
    folder.mkdir(parents=True, exist_ok=True)
    rows, samples = result_set(gpu)
    timings = results.rows_frame(rows)
    if shuffle_seed is not None:
        timings = timings.sample(frac=1.0, random_state=shuffle_seed)
    paths = {"timings": folder / "timings.csv", "samples": folder / "samples.csv",
             "env": folder / "host.json", "mpi": folder / "mpi.csv"}
    results.atomic_write_csv(paths["timings"], timings)
    results.atomic_write_csv(paths["samples"], samples)
    paths["env"].write_text(json.dumps(env if env is not None else ENV))
    results.atomic_write_csv(paths["mpi"], mpi_rows())
    return paths


def details_data(page: str) -> dict[str, Any]:
    """The per-kernel detail view's data, embedded once in the page as JSON."""
    import re

    found = re.search(r'<script type="application/json" id="gpubench-details-data">(.*?)'
                      r"</script>", page, re.S)
    assert found is not None, "no detail view data on the page"
    return json.loads(found.group(1))


def cases_drawn(page: str) -> int:
    """How many of the detail view's cases (kernel, variant, dtype) have a figure to draw:
    at least one ok row."""
    data = details_data(page)
    status = data["headers"].index("status") - 7  # the cells after the clock's columns
    return len({r[0] for r in data["rows"] if r[10][status] == "ok"})
