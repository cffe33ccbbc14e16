"""The results schema: one tidy row per measurement, raw samples in a sibling file.

Every column is declared once here; collect, the report and compare validate against it
(:func:`validate`: types, statuses, keys, and every measured column's bound and order in
:data:`MEASURED` and :data:`ORDERS`; :func:`check_samples` for the samples) and the
docs/measurement.md's table of columns is generated from it (``python -m gpubench schema``).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import lzma
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpubench.files import atomic_write_text
from gpubench.inputs import DECOMPRESS_ERRORS, InputError, open_bounded

#: 2: the caller's clock (``sync_*``, ``pipelined_*``, ``caller_timer``), status
#: ``implausible``, and a ``clock`` column in the samples file; 3: energy per call
#: (``energy_*``); 4: ``caller_rounds``, ``cache_state``; 5: ``caller_spread_rounds``,
#: ``caller_spread_s`` (the spread rounds, :mod:`gpubench.spread`) and peak device memory
#: (``memory_*``); 6: ``matmul_precision``; 7: the host's conditions while the row's
#: worker ran (``host_load_*``, ``host_steal_pct``, ``host_other_cpu_pct``,
#: :mod:`gpubench.hostload`); 8: theoretical occupancy (``occupancy``,
#: ``occupancy_reason``, :mod:`gpubench.occupancy`)
SCHEMA_VERSION = 8
#: older versions whose rows the report reads as this version's, with no note: 7 lacks
#: only the occupancy columns, which every kernel's rows but the block-size sweep's leave
#: empty (and no file of version 7 has such rows)
READ_AS_CURRENT = (7,)

#: ``implausible``: measured and correct, but faster than the hardware can be (above a
#: measured ceiling, or device work missing from the timed stream); never ranked
STATUSES = ("ok", "wrong_result", "unavailable", "error", "skipped", "implausible")

#: the clocks a sample can be on: the backend's own (``timer``) and the caller's two
CLOCKS = ("device", "sync", "pipelined")

#: the timing modes a row is measured in (config ``gpu_modes``; CPU rows are hot)
MODES = ("hot", "cold")

#: the columns that take one of a known set of values, in every row: the report groups
#: and ranks by them, so a row with another value (``mode: lukewarm``) would drop out of
#: every verdict without a word. "" is allowed where the column may be empty.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "device": ("cpu", "gpu"),
    "mode": MODES,
    "stop_reason": ("", "converged", "time_cap", "max_samples"),
    "cache_state": ("", "cold", "warm", "none"),
    "matmul_precision": ("", "full", "tf32", "bf16"),
}

#: the forms a results CSV is read in, by its name's ending: plain, gzip or xz (pandas
#: decompresses by the same suffix; the committed evidence is compressed)
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.xz")

#: the most text (decompressed) a timings CSV may hold: the report reads every row into
#: its tables and figures; the committed full suite's is 1.3 MB, and one of 21 MB takes
#: the report about a minute (docs/results.md, "Reliability"); a larger file is refused with its
#: size
TIMINGS_MAX_BYTES = 32 * 10**6
#: ... and a samples CSV (the full suite's: 33 MB; 200 MB are read in about 2 s)
SAMPLES_MAX_BYTES = 512 * 10**6


def csv_variants(folder: str | os.PathLike[str], stem: str) -> list[Path]:
    """``folder/stem.csv`` and its compressed forms, in :data:`CSV_SUFFIXES` order."""
    return [Path(folder) / f"{stem}{suffix}" for suffix in CSV_SUFFIXES]


def find_csv(folder: str | os.PathLike[str], stem: str) -> Path | None:
    """The first of :func:`csv_variants` that exists, or None."""
    return next((p for p in csv_variants(folder, stem) if p.exists()), None)


def open_text(path: str | os.PathLike[str]) -> Any:
    """``path`` opened for reading text (UTF-8, newlines kept), decompressed by suffix."""
    path = Path(path)
    opener: Any = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    return opener(path, "rt", encoding="utf-8", newline="")


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
           "not stored; JAX stores only compiles over 1 s unless told otherwise, as the "
           "step does in its own folder), none (no persistent cache in "
           "use: NumPy, Numba (no cache=True here), JAX without a "
           "jax_compilation_cache_dir, PyTorch before Inductor made its folder, PyTorch's "
           "rows other than `compile` and `triton`, and CUDA Python's copies, allocations "
           "and interop rows, which compile nothing through those caches); empty: never "
           "built"),
    Column("matmul_precision", "str", "GEMM and linalg rows: what the framework's own "
           "setting, read after the first call, allowed the row's float32 products to "
           "round to: full (computed in the dtype), tf32 or bf16 (PyTorch's "
           "float32_matmul_precision and allow_tf32, CuPy's GEMM compute type, JAX's "
           "jax_default_matmul_precision); float64 rows and frameworks without a reduced "
           "mode: full; empty for other kernels"),
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
    Column("caller_spread_rounds", "int",
           "spread rounds the row was sampled in, between its step's later items and after "
           "them (0: not spread: off, a call longer than harness.caller_spread_max_call_s, "
           "or larger inputs; gpubench.spread): the host's speed changes in regimes of "
           "seconds to minutes, so a short row's samples are spread over the rest of its "
           "step"),
    Column("caller_spread_s", "float",
           "seconds from the row's first spread round to its last (the time its spread "
           "samples span)"),
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
    Column("memory_peak_bytes", "float", "peak device memory of one call, bytes, read "
           "from the framework's own allocator in an extra, untimed call after the "
           "samples: what the row's inputs, outputs and build keep on the device plus "
           "the call's own high-water (temporaries, new outputs, autograd's graph); "
           "GPU rows only (CPU rows: empty, no claim)"),
    Column("memory_call_bytes", "float", "of that peak, the call's high-water above "
           "what was in use when it started, bytes"),
    Column("memory_data_bytes", "float", "the row's inputs plus outputs, bytes (outputs: "
           "the preallocated buffers, else the returned result)"),
    Column("memory_multiple", "float", "memory_peak_bytes / memory_data_bytes: 1 for a "
           "call that needs nothing beyond its data; autodiff rows show autograd's "
           "overhead here"),
    Column("memory_meter", "str", "what read the peak: torch.cuda.max_memory_allocated, "
           "cupy_pool_used_bytes, jax_peak_bytes_in_use, numba_memalloc_hook or "
           "cuda_driver_hook (see gpubench.memory)"),
    Column("memory_reason", "str", "'not measured: <why>' for a GPU row without a "
           "reading (JAX's hidden high-water mark, no probe); empty otherwise"),
    Column("occupancy", "float", "theoretical occupancy of the row's launch: resident "
           "threads per SM at its threads per block (blocks from the framework's occupancy "
           "API) over the SM's most, 0-1; rows of the block-size sweep (launch_config) "
           "only, empty for other kernels"),
    Column("occupancy_reason", "str", "'not measured: <why>' for a block-size sweep row "
           "without an occupancy (Numba's CUDA simulator, no occupancy API); empty "
           "otherwise"),
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
    Column("host_load_start", "float", "the host's 1-minute load average when the "
           "worker that measured the row started (os.getloadavg; a worker per thread "
           "count of the step)"),
    Column("host_load_end", "float", "... and when that worker ended (it counts the "
           "worker's own threads)"),
    Column("host_steal_pct", "float", "CPU time a hypervisor took from this virtual "
           "machine while the worker ran, % of all CPUs' time (/proc/stat's steal; "
           "empty without /proc/stat)"),
    Column("host_other_cpu_pct", "float", "CPU time other processes used while the "
           "worker ran, % of all CPUs' time: the host's busy time (/proc/stat) less "
           "the step's own (os.times of the step and its workers); empty without "
           "/proc/stat. The report flags comparisons of rows taken on a busy host "
           "(docs/report.md)"),
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


class SchemaError(InputError):
    """A results file does not follow the schema; the message names file and column."""


def empty_row() -> dict[str, Any]:
    return {c.name: ("" if c.kind == "str" else math.nan) for c in COLUMNS}


def atomic_write_csv(path: str | os.PathLike[str], frame: pd.DataFrame) -> None:
    atomic_write_text(path, frame.to_csv(index=False, lineterminator="\n"))


# -- collect steps (single-device and MPI) ----------------------------------------------

def collect_parser(description: str | None, inputs: str, out: str,
                   prog: str) -> argparse.ArgumentParser:
    """The arguments of a collect step (``prog``: its ``gpubench`` command, for the usage
    line): the steps' files (``--<inputs>``, ``--samples``) and where the merged ones go
    (``--<out>``, ``--out-samples``)."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument(f"--{inputs}", nargs="+", required=True)
    p.add_argument("--samples", nargs="+", required=True)
    p.add_argument(f"--{out}", required=True)
    p.add_argument("--out-samples", required=True)
    return p


def merge_files(paths: Sequence[str], read: Callable[[str], pd.DataFrame],
                validate: Callable[[pd.DataFrame, str], pd.DataFrame],
                source: str) -> pd.DataFrame:
    """The steps' files read, concatenated and validated as one (:class:`SchemaError`
    names what is wrong)."""
    return validate(pd.concat([read(f) for f in paths], ignore_index=True), source)


def collected(tool: str, merged: pd.DataFrame, files: int) -> str:
    """A collect step's closing line: rows, files and how many rows have each status."""
    return (f"{tool}: {len(merged)} rows from {files} files "
            f"{merged['status'].value_counts().to_dict()}")


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


#: The measured columns of a row of status ``ok`` or ``implausible`` (what the verdicts,
#: speedups, crossovers and comparisons are computed from), each with its bound and why.
#: A value must be finite and meet the bound; an empty cell (NaN) means "not measured"
#: and passes (a CPU row of an older file without the caller's clocks, a row without an
#: energy reading, a kernel without a byte or flop count), except in ``median_s``, the
#: row's time, which these rows must have. ``int > 0``: a whole number above zero.
MEASURED: tuple[tuple[str, str, str], ...] = (
    # column                bound      why
    ("median_s",            "> 0",     "a measured row needs a positive median_s, its "
                                       "time"),
    ("min_s",               "> 0",     "a call takes time"),
    ("max_s",               "> 0",     "a call takes time"),
    ("q1_s",                "> 0",     "a call takes time"),
    ("q3_s",                "> 0",     "a call takes time"),
    ("mean_s",              "> 0",     "a call takes time"),
    ("iqr_s",               ">= 0",    "0 when the quartiles are equal (a coarse timer)"),
    ("rel_spread",          ">= 0",    "iqr_s / median_s"),
    ("first_call_s",        "> 0",     "a call takes time"),
    ("setup_s",             ">= 0",    "0 when there is nothing to build"),
    ("bytes",               ">= 0",    "0 for kernels that move no array (monte_carlo_pi)"),
    ("flops",               ">= 0",    "0 for kernels without arithmetic (copies)"),
    ("gbps",                "> 0",     "bytes / median_s; empty where bytes is 0"),
    ("gflops",              "> 0",     "flops / median_s; empty where flops is 0"),
    ("sync_median_s",       "> 0",     "a call takes time"),
    ("sync_q1_s",           "> 0",     "a call takes time"),
    ("sync_q3_s",           "> 0",     "a call takes time"),
    ("pipelined_median_s",  "> 0",     "a call takes time"),
    ("pipelined_q1_s",      "> 0",     "a call takes time"),
    ("pipelined_q3_s",      "> 0",     "a call takes time"),
    ("pipelined_wait_s",    ">= 0",    "0 when the device had finished when the calls "
                                       "returned"),
    ("energy_j",            "> 0",     "a call takes energy"),
    ("energy_power_w",      "> 0",     "a board draws power"),
    ("energy_sm_mhz",       "> 0",     "a clock that runs"),
    ("energy_calls",        "> 0",     "calls completed in the window (interpolated)"),
    ("energy_window_s",     "> 0",     "a window takes time"),
    ("memory_peak_bytes",   ">= 0",    "bytes held; 0 for a call with no device data"),
    ("memory_call_bytes",   ">= 0",    "0 when the call allocates nothing"),
    ("memory_data_bytes",   "> 0",     "empty where the row has no arrays"),
    ("memory_multiple",     ">= 0",    "0 only where nothing of the row sits on the device"),
    ("rel_err",             ">= 0",    "a norm; 0 for an exact result"),
    ("tolerance",           ">= 0",    "0 where the result must be exact"),
    ("pct_of_ceiling",      "> 0",     "of a positive throughput"),
    ("samples",             "int > 0", "a time needs at least one call"),
    ("sync_samples",        "int > 0", "a time needs at least one call"),
    ("pipelined_k",         "int > 0", "calls per sample"),
    ("pipelined_samples",   "int > 0", "a time needs at least one call"),
    ("caller_rounds",       "int > 0", "the caller's clock takes at least one round"),
    ("caller_spread_rounds", "int >= 0", "0 where the row was not spread"),
    ("caller_spread_s",     ">= 0",    "a window's length"),
    ("occupancy",           "> 0",     "a launch keeps at least one block resident"),
    ("host_load_start",     ">= 0",    "a count of tasks"),
    ("host_load_end",       ">= 0",    "a count of tasks"),
    ("host_steal_pct",      ">= 0",    "a share of CPU time"),
    ("host_other_cpu_pct",  ">= 0",    "a share of CPU time"),
)

#: per clock, quantiles in order: each value at most the next present one (empty cells
#: are skipped), within :data:`ORDER_RTOL`
ORDERS: tuple[tuple[str, ...], ...] = (
    ("min_s", "q1_s", "median_s", "q3_s", "max_s"),
    ("min_s", "mean_s", "max_s"),
    ("sync_q1_s", "sync_median_s", "sync_q3_s"),
    ("pipelined_q1_s", "pipelined_median_s", "pipelined_q3_s"),
)

#: relative slack in the order checks: a mean of equal samples may differ from them in
#: its last bits
ORDER_RTOL = 1e-9

#: throughputs that are a count over the row's time: (column, count, time, scale); a
#: value off its count and time (a hand-edited or mixed-up row) would rank the row by a
#: rate it did not reach
DERIVED: tuple[tuple[str, str, str, float], ...] = (
    ("gbps", "bytes", "median_s", 1e9),
    ("gflops", "flops", "median_s", 1e9),
)
#: relative slack of :data:`DERIVED` (a CSV keeps every digit: the committed evidence is
#: within 1e-12)
DERIVED_RTOL = 1e-6

#: how many problems an error message lists before it gives the count of the rest
SHOWN_PROBLEMS = 5

#: the statuses whose rows carry measurements the report uses
MEASURED_STATUSES = ("ok", "implausible")


def record_lines(path: str | os.PathLike[str]) -> list[int] | None:
    """The line in ``path`` on which each data record starts (1 = the header), as pandas
    reads them (blank lines skipped), or None if the file cannot be read again. Only
    called to word an error: a quoted field can span lines, so the row number plus 2 is
    not always the line."""
    try:
        with open_text(path) as fh:
            reader = csv.reader(fh)
            starts, end = [], 0
            for record in reader:
                if record:
                    starts.append(end + 1)
                end = reader.line_num
    except (OSError, UnicodeDecodeError, csv.Error, *DECOMPRESS_ERRORS):
        return None
    return starts[1:]


class _Where:
    """Words a row's place for an error: its line in the file (or its row number in a
    table that came from no one file) and its key."""

    def __init__(self, frame: pd.DataFrame, path: str | os.PathLike[str] | None) -> None:
        self.frame = frame
        self.path = path
        self._lines: list[int] | None = None
        self._read = False

    def line(self, pos: int) -> str:
        if self.path is not None and not self._read:
            self._read = True
            lines = record_lines(self.path)
            self._lines = lines if lines is not None and len(lines) == len(self.frame) else None
        if self._lines is not None:
            return f"line {self._lines[pos]}"
        return f"row {pos + 1}"

    def key(self, pos: int) -> str:
        r = self.frame.iloc[pos]

        def get(col: str) -> str:
            if col not in r.index:
                return "?"
            v = r[col]
            if pd.isna(v) or v == "":
                return "?"
            if isinstance(v, float) and v.is_integer():
                return str(int(v))
            return str(v)

        mode = f" {get('mode')}" if "mode" in r.index else ""
        return (f"{get('backend')} {get('kernel')}/{get('variant')} {get('dtype')} "
                f"size={get('size')} {get('implementation')}{mode} threads={get('threads')}")

    def __call__(self, pos: int) -> str:
        return f"{self.line(pos)} ({self.key(pos)})"


def _raise_problems(source: str, problems: Sequence[tuple[int, str]], where: _Where,
                    what: str) -> None:
    """One :class:`SchemaError` listing the first problems (by row) and the count."""
    if not problems:
        return
    problems = sorted(problems, key=lambda p: p[0])
    rows = len({pos for pos, _ in problems})
    shown = [f"  {where(pos)}: {text}" for pos, text in problems[:SHOWN_PROBLEMS]]
    more = len(problems) - len(shown)
    raise SchemaError(
        f"{source}: {len(problems)} problem(s) in {rows} {what}"
        + (f"; the first {len(shown)}" if more else "") + ":\n" + "\n".join(shown)
        + (f"\n  ... and {more} more" if more else ""))


def _show(value: Any) -> str:
    """A cell as read: text quoted, numbers plain."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def _fmt(v: float) -> str:
    """A value as read (all its digits), whole numbers without a point."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def numbers(frame: pd.DataFrame, col: str) -> np.ndarray:
    """A column as floats, NaN where a cell is empty or not a number."""
    return pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def measured_problems(frame: pd.DataFrame) -> list[tuple[int, str]]:
    """(row position, problem) for every value of :data:`MEASURED` and order of
    :data:`ORDERS` that a measured row (status ``ok`` or ``implausible``) breaks."""
    measured = frame["status"].isin(MEASURED_STATUSES).to_numpy()
    problems: list[tuple[int, str]] = []
    for col, bound, why in MEASURED:
        if col not in frame.columns:
            continue
        v = numbers(frame, col)
        present = ~np.isnan(v)
        with np.errstate(invalid="ignore"):
            fine = np.isfinite(v) & ((v > 0) if bound.endswith("> 0") else (v >= 0))
            if bound.startswith("int"):
                fine &= np.floor(v) == v
        bad = measured & ~fine & (present | (col == "median_s"))
        must = (f"a whole number {bound.removeprefix('int ')}" if bound.startswith("int")
                else f"finite and {bound}")
        for pos in np.flatnonzero(bad):
            problems.append((int(pos), f"column {col!r} = {_fmt(v[pos])}: must be {must}: "
                                       f"{why}"))
    for chain in ORDERS:
        cols = [c for c in chain if c in frame.columns]
        if len(cols) < 2:
            continue
        vals = np.column_stack([numbers(frame, c) for c in cols])
        vals[~np.isfinite(vals)] = np.nan  # out of bounds already: not ordered as well
        prev = vals[:, 0].copy()
        prev_col = np.zeros(len(frame), dtype=int)
        for j in range(1, len(cols)):
            cur = vals[:, j]
            with np.errstate(invalid="ignore"):
                slack = ORDER_RTOL * np.maximum(np.abs(prev), np.abs(cur))
                wrong = measured & (prev > cur + slack)
            for pos in np.flatnonzero(wrong):
                a = cols[prev_col[pos]]
                problems.append((int(pos), f"{a} = {_fmt(prev[pos])} > {cols[j]} = "
                                           f"{_fmt(cur[pos])}: must be {' <= '.join(cols)}"))
            have = ~np.isnan(cur)
            prev = np.where(have, cur, prev)
            prev_col = np.where(have, j, prev_col)
    return problems


def derived_problems(frame: pd.DataFrame) -> list[tuple[int, str]]:
    """(row position, problem) for each measured row whose :data:`DERIVED` throughput is
    not its count over its time (where all three are there and the count is > 0)."""
    measured = frame["status"].isin(MEASURED_STATUSES).to_numpy()
    problems: list[tuple[int, str]] = []
    for col, count, time, scale in DERIVED:
        rate, n, t = (numbers(frame, c) for c in (col, count, time))
        with np.errstate(invalid="ignore", divide="ignore"):
            expect = n / t / scale
            wrong = (measured & (n > 0) & (t > 0) & np.isfinite(rate) & np.isfinite(expect)
                     & (np.abs(rate - expect) > DERIVED_RTOL * np.abs(expect)))
        for pos in np.flatnonzero(wrong):
            problems.append((int(pos), f"column {col!r} = {_fmt(rate[pos])}, but {count} / "
                                       f"{time} / {scale:g} = {expect[pos]:.6g}: must be "
                                       "that rate"))
    return problems


def row_problems(frame: pd.DataFrame) -> list[tuple[int, str]]:
    """(row position, problem) for each row, whatever its status, with a value of
    :data:`CATEGORIES` outside its set, or a size no case can have
    (:func:`gpubench.spec.size_problem`: a whole number from 1 whose data a 64-bit
    machine can hold)."""
    from gpubench.spec import size_problem

    problems: list[tuple[int, str]] = []
    for col, allowed in CATEGORIES.items():
        values = frame[col].astype(str)
        for pos in np.flatnonzero(~values.isin(allowed).to_numpy()):
            shown = ", ".join(repr(a) for a in allowed)
            problems.append((int(pos), f"column {col!r} = {values.iloc[pos]!r}: must be one "
                                       f"of {shown}"))
    sizes = numbers(frame, "size")
    cases = pd.DataFrame({"kernel": frame["kernel"].astype(str).to_numpy(),
                          "variant": frame["variant"].astype(str).to_numpy(),
                          "dtype": frame["dtype"].astype(str).to_numpy(), "size": sizes})
    for key, rows in cases.groupby(["kernel", "variant", "dtype", "size"], dropna=False,
                                   sort=False).groups.items():
        kernel, variant, dtype, size = key
        why = size_problem(kernel, size, dtype, variant)
        if why:
            shown = "empty" if math.isnan(size) else _fmt(size)
            problems += [(int(pos), f"column 'size' = {shown}: {why}") for pos in rows]
    return problems


def validate(frame: pd.DataFrame, source: str = "results",
             path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Check a timings table against the schema; raise :class:`SchemaError` naming the
    problem: the file (``source``), the row (its line in ``path``, the CSV the frame was
    read from with its row order, or else its row number, and its key), the column and
    the value. Every measured column is checked (:data:`MEASURED`, :data:`ORDERS`): a
    negative, infinite or out-of-order time would turn a verdict without a word."""
    missing = [c for c in COLUMN_NAMES if c not in frame.columns]
    if missing:
        raise SchemaError(f"{source}: missing columns {missing} (schema v{SCHEMA_VERSION})")
    extra = [c for c in frame.columns if c not in COLUMN_NAMES]
    if extra:
        raise SchemaError(f"{source}: unknown columns {extra} (schema v{SCHEMA_VERSION})")
    frame = frame[list(COLUMN_NAMES)].copy()
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 \
            or frame.index.step != 1:
        path = None  # rows reordered or dropped: their lines are not known
    where = _Where(frame.reset_index(drop=True), path)
    for col in COLUMNS:
        try:
            with np.errstate(invalid="ignore"):  # -inf as an int: refused below, quietly
                coerce(frame[[col.name]].copy())
        except (ValueError, TypeError, OverflowError) as exc:  # Overflow: inf as an int
            raise SchemaError(f"{source}: column {col.name!r} is not {col.kind}: "
                              f"{_first_uncoercible(frame[col.name], col.kind, where)}"
                              f"{exc}") from exc
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
    _raise_problems(source, row_problems(frame), where, "row(s)")
    _raise_problems(source, measured_problems(frame) + derived_problems(frame), where,
                    "row(s) of status ok or implausible")
    return frame


def _first_uncoercible(values: pd.Series, kind: str, where: _Where) -> str:
    """Where the first value that is not a number (or not a whole one) is, for a message."""
    raw = values.reset_index(drop=True)
    num = pd.to_numeric(raw, errors="coerce")
    bad = num.isna() & raw.notna() & (raw.astype(str) != "")
    if kind == "int":
        with np.errstate(invalid="ignore"):
            bad |= num.notna() & ~(np.isfinite(num) & (np.floor(num) == num))
    hits = np.flatnonzero(bad.to_numpy())
    if not len(hits):
        return ""
    return f"{where(int(hits[0]))} has {_show(raw.iloc[hits[0]])} ({len(hits)} row(s)); "


def read_csv(path: str | os.PathLike[str], limit: int, what: str = "CSV file",
             **kwargs: Any) -> pd.DataFrame:
    """A CSV (plain, .gz or .xz) read as the results' readers all read one, empty cells
    as NaN; :class:`SchemaError` naming the file where it is not a regular file, holds
    more than ``limit`` bytes of text (the reader stops there: a 200 MB file or an
    endless device costs no more than the limit), is not UTF-8 CSV, or does not end
    with a newline: it was cut short mid-row (a copy or write that stopped), and pandas
    would read the cut row with its missing fields empty, or a number missing its last
    digits, without complaint."""
    try:
        with open_bounded(path, limit, what) as raw:
            frame = pd.read_csv(io.BufferedReader(raw, 1 << 20), encoding="utf-8",
                                keep_default_na=False, na_values=[""], **kwargs)
            cut = raw.total > 0 and raw.last != b"\n"
    except InputError as exc:
        raise SchemaError(str(exc)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError,
            *DECOMPRESS_ERRORS) as exc:
        raise SchemaError(f"{path}: not a readable CSV: {exc}") from exc
    if cut:
        raise SchemaError(f"{path}: ends in the middle of a row (cut short?)")
    return frame


def read_timings(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate one timings CSV; errors name the file."""
    frame = read_csv(path, TIMINGS_MAX_BYTES, "timings file", dtype={"reason": str})
    return validate(frame, str(path), path)


def read_samples(path: str | os.PathLike[str]) -> pd.DataFrame:
    path = Path(path)
    frame = read_csv(path, SAMPLES_MAX_BYTES, "samples file")
    if "clock" not in frame.columns:  # schema 1: device samples only
        frame["clock"] = "device"
    missing = [c for c in SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        raise SchemaError(f"{path}: missing columns {missing}")
    frame = frame[list(SAMPLE_COLUMNS)]
    check_samples(frame, str(path), path=path)
    return frame


def sample_problems(frame: pd.DataFrame) -> list[tuple[int, str]]:
    """(row position, problem) for each sample off its clock, index or time: ``clock`` one
    of :data:`CLOCKS`, ``sample`` a whole number from 0, ``time_s`` finite and > 0."""
    problems: list[tuple[int, str]] = []
    clock = frame["clock"].astype(str)
    for pos in np.flatnonzero(~clock.isin(CLOCKS).to_numpy()):
        problems.append((int(pos), f"column 'clock' = {clock.iloc[pos]!r}: must be one of "
                                   f"{', '.join(CLOCKS)}"))
    index, time = numbers(frame, "sample"), numbers(frame, "time_s")
    with np.errstate(invalid="ignore"):
        bad_index = ~(np.isfinite(index) & (index >= 0) & (np.floor(index) == index))
        bad_time = ~(np.isfinite(time) & (time > 0))
    for pos in np.flatnonzero(bad_index):
        problems.append((int(pos), f"column 'sample' = {_show(frame['sample'].iloc[pos])}: "
                                   "must be a whole number >= 0 (the call's index in its run)"))
    for pos in np.flatnonzero(bad_time):
        problems.append((int(pos), f"column 'time_s' = {_show(frame['time_s'].iloc[pos])}: "
                                   "must be finite and > 0: a call takes time"))
    return problems


def key_frame(frame: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """The key columns in one form whatever the file's dtypes: numbers as floats (NaN
    when empty), the rest as text."""
    kinds = {c.name: c.kind for c in COLUMNS}
    return pd.DataFrame({c: pd.to_numeric(frame[c], errors="coerce").astype(float)
                         if kinds.get(c) == "int"
                         else frame[c].where(frame[c].notna(), "").astype(str)
                         for c in cols}, index=frame.index)


def duplicate_samples(frame: pd.DataFrame, rows: pd.DataFrame,
                      line: Callable[[int], str] | None = None) -> list[tuple[int, str]]:
    """(row position, problem) for each sample that repeats one already given: the same
    key, clock and sample index (and ``mode``, where the file has one) more often than the
    timings have rows of that key.

    The samples' key has no ``mode``, so a case measured hot and cold legitimately gives
    each index twice; a key may appear once per row of it in ``rows``, at least once. More
    is a file concatenated twice or a step collected twice, which would otherwise attach
    as extra runs. (A key with two rows of which one has no samples can hide one doubled
    run; any key with both runs does not.) ``line`` words a row position (default: its
    row number)."""
    line = line or (lambda pos: f"row {pos + 1}")
    keys = [*KEY_NAMES, *(["mode"] if "mode" in frame.columns else [])]
    cols = [*keys, "clock", "sample"]
    # a file's columns have one dtype each, so its own values compare as they are
    dup = frame.duplicated(cols, keep=False).to_numpy()
    if not dup.any():
        return []
    sub = key_frame(frame[dup], keys).reset_index(drop=True)
    sub["clock"] = frame.loc[dup, "clock"].astype(str).to_numpy()
    sub["sample"] = pd.to_numeric(frame.loc[dup, "sample"], errors="coerce").to_numpy(float)
    sub["pos"] = np.flatnonzero(dup)
    known = [k for k in keys if k in rows.columns]
    allowed = key_frame(rows, known).groupby(known, dropna=False).size().rename("allowed")
    sub = sub.join(allowed, on=known)
    sub["allowed"] = sub["allowed"].fillna(1).clip(lower=1).astype(int)
    groups = sub.groupby(cols, dropna=False, sort=False)
    sub["rank"] = groups.cumcount()
    sub["count"] = groups["pos"].transform("size")
    sub["first"] = groups["pos"].transform("min")
    over = sub[sub["rank"] >= sub["allowed"]]
    # one problem per run that repeats (key and clock), at its first repeated sample
    runs = over.groupby([*keys, "clock"], dropna=False, sort=False).agg(
        pos=("pos", "min"), first=("first", "min"), n=("sample", "nunique"),
        lo=("sample", "min"), hi=("sample", "max"), most=("count", "max"),
        allowed=("allowed", "first"))
    return [(int(r.pos), f"clock {clock!r}: {r.n} sample index(es) ({r.lo:.0f} to {r.hi:.0f}) "
                         f"given up to {r.most} times, where the timings have {r.allowed} "
                         f"row(s) of this key (first given on {line(int(r.first))}): "
                         "doubled samples (a file concatenated twice, a step collected "
                         "twice?)")
            for (*_, clock), r in zip(runs.index, runs.itertuples(index=False), strict=True)]


def check_samples(frame: pd.DataFrame, source: str, rows: pd.DataFrame | None = None,
                  path: str | os.PathLike[str] | None = None) -> None:
    """Raise :class:`SchemaError` for samples the report must not use: off their clock,
    index or time (:func:`sample_problems`), or, given the timings ``rows``, doubled
    (:func:`duplicate_samples`). Errors name ``source``, the line in ``path`` (or the row
    number) and the key, like :func:`validate`'s."""
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 \
            or frame.index.step != 1:
        path = None
    where = _Where(frame.reset_index(drop=True), path)
    problems = sample_problems(frame)
    if rows is not None:
        problems += duplicate_samples(frame, rows, where.line)
    _raise_problems(source, problems, where, "sample row(s)")


def schema_markdown() -> str:
    """The column table of docs/measurement.md."""
    lines = ["| column | type | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.kind} | {c.doc} |" for c in COLUMNS]
    return "\n".join(lines) + "\n"
