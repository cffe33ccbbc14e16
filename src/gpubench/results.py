"""The results schema: one tidy row per measurement, raw samples in a sibling file.

Every column is declared once here; collect validates against it and the README's
table of columns is generated from it (``python -m gpubench schema``).
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: 2: the caller's clock (``sync_*``, ``pipelined_*``, ``caller_timer``), status
#: ``implausible``, and a ``clock`` column in the samples file; 3: energy per call
#: (``energy_*``); 4: ``caller_rounds``, ``cache_state``
SCHEMA_VERSION = 4

#: ``implausible``: measured and correct, but faster than the hardware can be (above a
#: measured ceiling, or device work missing from the timed stream); never ranked
STATUSES = ("ok", "wrong_result", "unavailable", "error", "skipped", "implausible")

#: the clocks a sample can be on: the backend's own (``timer``) and the caller's two
CLOCKS = ("device", "sync", "pipelined")


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "str" | "int" | "float"
    doc: str


KEY_COLUMNS: tuple[Column, ...] = (
    Column("framework", "str", "framework (numpy, numba, jax, torch, ...)"),
    Column("device", "str", "cpu or gpu"),
    Column("backend", "str", "framework-device: the workflow step that produced the row"),
    Column("implementation", "str", "the style of the implementation (njit_prange, jit, ...)"),
    Column("kernel", "str", "kernel name (vector_add, matmul, ...)"),
    Column("variant", "str", "which computation of the kernel (hypot, dot, 1d, ...)"),
    Column("size", "int", "problem size, in the unit the kernel's size_meaning gives"),
    Column("dtype", "str", "element type of the inputs"),
    Column("threads", "int", "CPU threads the step was pinned to"),
)

COLUMNS: tuple[Column, ...] = KEY_COLUMNS + (
    Column("status", "str", "ok, wrong_result, unavailable, error, skipped or implausible"),
    Column("reason", "str", "why the status is not ok (empty when ok)"),
    Column("samples", "int", "number of timed calls kept (on the row's `timer`)"),
    Column("median_s", "float", "median time of one call on the row's `timer`, seconds: on "
           "GPUs device time (CUDA events, CUPTI), on CPUs wall time"),
    Column("min_s", "float", "fastest call, seconds"),
    Column("max_s", "float", "slowest call, seconds"),
    Column("q1_s", "float", "25th percentile, seconds"),
    Column("q3_s", "float", "75th percentile, seconds"),
    Column("iqr_s", "float", "interquartile range, seconds"),
    Column("mean_s", "float", "mean, seconds"),
    Column("rel_spread", "float", "iqr_s / median_s: the noise the stopping rule targets"),
    Column("stop_reason", "str", "converged, time_cap or max_samples"),
    Column("first_call_s", "float",
           "the first call alone on the host clock (includes JIT compilation)"),
    Column("setup_s", "float", "building the implementation (tracing, allocation)"),
    Column("cache_state", "str", "the framework's persistent compilation cache over the "
           "build and first call: cold (it gained files: the row compiled and stored), "
           "warm (it existed and gained nothing: a compile, if any, was served from it or "
           "not stored; JAX stores only compiles over 1 s), none (no persistent cache in "
           "use: NumPy, Numba (no cache=True here), CUDA Python's NVRTC, JAX without a "
           "jax_compilation_cache_dir, PyTorch before Inductor made its folder); empty: "
           "never built"),
    Column("bytes", "float", "fewest bytes moved per call"),
    Column("flops", "float", "floating-point operations per call"),
    Column("gbps", "float", "bytes / median_s / 1e9"),
    Column("gflops", "float", "flops / median_s / 1e9"),
    Column("caller_timer", "str", "what timed the caller's clock: the host clock and the "
           "framework's device-wide wait (CPU rows: the row's own samples)"),
    Column("sync_samples", "int", "caller's clock, one call then a device-wide wait: samples"),
    Column("sync_median_s", "float", "caller's clock, sync: median seconds per call"),
    Column("sync_q1_s", "float", "caller's clock, sync: 25th percentile"),
    Column("sync_q3_s", "float", "caller's clock, sync: 75th percentile"),
    Column("pipelined_k", "int", "calls per pipelined sample (1: the sync samples)"),
    Column("pipelined_samples", "int", "caller's clock, k calls then one wait: samples"),
    Column("pipelined_median_s", "float", "caller's clock, pipelined: median seconds per call "
           "(the clock the report's verdicts rank)"),
    Column("pipelined_q1_s", "float", "caller's clock, pipelined: 25th percentile"),
    Column("pipelined_q3_s", "float", "caller's clock, pipelined: 75th percentile"),
    Column("pipelined_wait_s", "float", "of the pipelined time per call, the median part "
           "spent waiting for the device after the calls had returned: the device was busy "
           "at least this long per call"),
    Column("caller_rounds", "int", "rounds the caller's clocks were taken in (a sync "
           "then a pipelined part each, spread over the row's time): harness.caller_rounds, "
           "more where the pipelined median stayed over caller_recheck_factor times its sync "
           "median or the larger of its device median and the implementation's least "
           "pipelined median at smaller sizes (up to caller_max_rounds)"),
    Column("energy_j", "float", "energy per call, joules: the counter's rise between two of "
           "its updates while calls ran back to back, over the calls completed between them "
           "(GPU: NVML, the whole board; CPU: RAPL, the packages); idle power included"),
    Column("energy_power_w", "float", "mean power over that window, watts"),
    Column("energy_sm_mhz", "float", "mean SM clock read at the counter's updates (GPU)"),
    Column("energy_calls", "float", "calls completed in the energy window (interpolated "
           "between the ends of batches, so not a whole number)"),
    Column("energy_window_s", "float", "length of the energy window, seconds"),
    Column("energy_meter", "str", "the counter read: nvml_total_energy or rapl_package"),
    Column("energy_reason", "str", "'not measured: <why>' where a reading was due and none "
           "was made (no counter, unreadable, never moved); empty otherwise"),
    Column("rel_err", "float", "||out - ref|| / ||ref|| against the float64 reference"),
    Column("tolerance", "float", "largest rel_err that passes"),
    Column("timer", "str", "what timed the samples (perf_counter, cuda_event, cupti_kernels)"),
    Column("mode", "str", "hot (caches warm) or cold (caches flushed)"),
    Column("ceiling", "str", "the measured device ceiling this row is compared with"),
    Column("pct_of_ceiling", "float", "throughput as % of that ceiling (from the probe)"),
    Column("device_name", "str", "CPU model or GPU name"),
    Column("gpu_sm_clock_mhz_start", "float", "GPU SM clock before the step (NVML)"),
    Column("gpu_sm_clock_mhz_end", "float", "GPU SM clock after the step (NVML)"),
    Column("gpu_temp_c_start", "float", "GPU temperature before the step (NVML)"),
    Column("gpu_temp_c_end", "float", "GPU temperature after the step (NVML)"),
    Column("gpu_throttle_start", "str", "active clock-throttle reasons before the step"),
    Column("gpu_throttle_end", "str", "active clock-throttle reasons after the step"),
    Column("host", "str", "host name"),
    Column("cpu_model", "str", "host CPU model"),
    Column("cpu_cores", "int", "logical CPUs on the host"),
    Column("python_version", "str", "Python running the step"),
    Column("framework_version", "str", "versions of the framework and its helpers"),
    Column("git_commit", "str", "commit of this repository (+dirty)"),
    Column("config_hash", "str", "sha256 of the step's configuration"),
    Column("env_lock", "str", "sha256 of the step environment's package lock"),
    Column("timestamp", "str", "UTC time the row was measured"),
    Column("schema_version", "int", "version of this schema"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
KEY_NAMES: tuple[str, ...] = tuple(c.name for c in KEY_COLUMNS)
#: ``clock``: device (the row's ``timer``), sync or pipelined (seconds per call)
SAMPLE_COLUMNS: tuple[str, ...] = KEY_NAMES + ("clock", "sample", "time_s")


class SchemaError(ValueError):
    """A results file does not follow the schema; the message names file and column."""


def empty_row() -> dict[str, Any]:
    return {c.name: ("" if c.kind == "str" else math.nan) for c in COLUMNS}


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write via a temporary file in the same folder and rename: never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the file the mode a plain open() would have
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_csv(path: str | os.PathLike[str], frame: pd.DataFrame) -> None:
    atomic_write_text(path, frame.to_csv(index=False, lineterminator="\n"))


def rows_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows in schema column order with schema dtypes."""
    frame = pd.DataFrame(list(rows), columns=list(COLUMN_NAMES))
    return coerce(frame)


def coerce(frame: pd.DataFrame) -> pd.DataFrame:
    for col in COLUMNS:
        if col.name not in frame:
            continue
        if col.kind == "str":
            values = frame[col.name].astype(object)
            frame[col.name] = values.where(values.notna(), "").astype(str)
        elif col.kind == "int":
            frame[col.name] = pd.to_numeric(frame[col.name], errors="raise").astype("Int64")
        else:
            frame[col.name] = pd.to_numeric(frame[col.name], errors="raise").astype("float64")
    return frame


def validate(frame: pd.DataFrame, source: str = "results") -> pd.DataFrame:
    """Check a timings table against the schema; raise :class:`SchemaError` naming the problem."""
    missing = [c for c in COLUMN_NAMES if c not in frame.columns]
    if missing:
        raise SchemaError(f"{source}: missing columns {missing} (schema v{SCHEMA_VERSION})")
    extra = [c for c in frame.columns if c not in COLUMN_NAMES]
    if extra:
        raise SchemaError(f"{source}: unknown columns {extra} (schema v{SCHEMA_VERSION})")
    frame = frame[list(COLUMN_NAMES)].copy()
    for col in COLUMNS:
        try:
            coerce(frame[[col.name]].copy())
        except (ValueError, TypeError) as exc:
            raise SchemaError(f"{source}: column {col.name!r} is not {col.kind}: {exc}") from exc
    frame = coerce(frame)
    versions = set(frame["schema_version"].dropna().astype(int))
    if versions - {SCHEMA_VERSION}:
        raise SchemaError(
            f"{source}: rows of schema version {sorted(versions)}, this code reads "
            f"v{SCHEMA_VERSION}; re-run the step or convert the file"
        )
    bad = sorted(set(frame["status"]) - set(STATUSES))
    if bad:
        raise SchemaError(f"{source}: column 'status' has unknown values {bad}")
    ok = frame["status"] == "ok"
    no_time = frame["status"].isin(["ok", "implausible"]) & ~(frame["median_s"] > 0)
    if no_time.any():
        raise SchemaError(f"{source}: {int(no_time.sum())} ok rows without a positive median_s")
    no_reason = ~ok & (frame["reason"].str.len() == 0)
    if no_reason.any():
        raise SchemaError(f"{source}: {int(no_reason.sum())} non-ok rows without a reason")
    dup = frame.duplicated(list(KEY_NAMES + ("mode",)), keep=False)
    if dup.any():
        first = frame[dup].iloc[0]
        raise SchemaError(
            f"{source}: {int(dup.sum())} rows share a key, e.g. "
            + ", ".join(f"{k}={first[k]}" for k in KEY_NAMES)
        )
    return frame


def check_whole(path: str | os.PathLike[str]) -> None:
    """Raise :class:`SchemaError` if a CSV does not end with a newline: it was cut short
    mid-row (a copy or write that stopped), and pandas would read the cut row with its
    missing fields empty, or a number missing its last digits, without complaint."""
    path = Path(path)
    if path.suffix != ".csv":
        return  # compressed: the decompressor checks
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(size - 1, 0))
            last = fh.read(1)
    except OSError as exc:
        raise SchemaError(f"{path}: not readable: {exc}") from exc
    if size and last != b"\n":
        raise SchemaError(f"{path}: ends in the middle of a row (cut short?)")


def read_timings(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate one timings CSV; errors name the file."""
    path = Path(path)
    if not path.exists():
        raise SchemaError(f"{path}: file is missing")
    check_whole(path)
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"reason": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SchemaError(f"{path}: not a readable CSV: {exc}") from exc
    return validate(frame, str(path))


def read_samples(path: str | os.PathLike[str]) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise SchemaError(f"{path}: file is missing")
    check_whole(path)
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SchemaError(f"{path}: not a readable CSV: {exc}") from exc
    if "clock" not in frame.columns:  # schema 1: device samples only
        frame["clock"] = "device"
    missing = [c for c in SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        raise SchemaError(f"{path}: missing columns {missing}")
    return frame[list(SAMPLE_COLUMNS)]


def schema_markdown() -> str:
    """The column table for the README."""
    lines = ["| column | type | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.kind} | {c.doc} |" for c in COLUMNS]
    return "\n".join(lines) + "\n"
