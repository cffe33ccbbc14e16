"""Why an implementation stays under its target: Nsight Compute's counters.

The report's targets table says which GPU framework's best implementation misses its
share of the copy ceiling; this module says why, from a profile. ``python -m
gpubench.ncu --cell FRAMEWORK IMPLEMENTATION KERNEL VARIANT DTYPE ... --out FILE``
runs each cell at 2^26 elements (``--size``) in a child process under ``ncu``: the
child builds the implementation through the project's own code, makes three untimed
calls, then three between ``cudaProfilerStart`` and ``cudaProfilerStop`` (ncu's
``--profile-from-start off``), at the GPU's own clocks (``--clock-control none``, as the
benchmark runs; ncu flushes the caches before each profiled kernel, so these are cold-L2
readings). Each cell becomes one row of ``FILE`` (:data:`COLUMNS`): the DRAM throughput
as % of peak, the bytes DRAM moved against the bytes the kernel must move, achieved
occupancy, instructions per element, the largest warp stall, and a fingerprint of the
implementation's source.

The report reads the profiles packaged with gpubench (``report/profiles.csv``, where
present) and shows a profile beside a missed target only for the same GPU model and the
same source fingerprint: a profile of code that has since changed explains nothing.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

PACKAGE = Path(__file__).resolve().parent
#: the profiles made on the project's GPU machines, read by the report
SHIPPED = PACKAGE / "report" / "profiles.csv"
SIZE = 1 << 26
CALLS = 3
METRICS = (
    "gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
    "smsp__inst_executed.sum", "lts__t_sector_hit_rate.pct")
SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
            "MemoryWorkloadAnalysis")
STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio")
#: one profile per row
COLUMNS = ["gpu_name", "framework", "implementation", "kernel", "variant", "dtype", "size",
           "fingerprint", "kernels_per_call", "us_per_call", "dram_pct_of_peak",
           "bytes_ratio", "l2_hit_pct", "occupancy_pct", "registers",
           "instructions_per_element", "top_stall", "top_stall_per_issue", "ncu_version",
           "commit"]
#: what names a cell: one profile per cell and GPU model
KEY = ["gpu_name", "framework", "implementation", "kernel", "variant", "dtype"]


class Cell(NamedTuple):
    framework: str
    implementation: str
    kernel: str
    variant: str
    dtype: str


def fingerprint(framework: str, implementation: str, kernel: str) -> str:
    """A hash of the code a profile of this implementation depends on: the builder's
    module, the kernel's CUDA sources, the shared headers, the CUDA launch helpers and
    the framework's GPU backend. '' when the implementation is not registered."""
    from gpubench.plugins import load_plugins
    from gpubench.spec import implementations

    load_plugins()
    impl = next((i for i in implementations(kernel, framework, "gpu")
                 if i.name == implementation), None)
    if impl is None:
        return ""
    module = sys.modules.get(impl.source_file)
    files = [Path(module.__file__)] if module is not None and module.__file__ else []
    folder = PACKAGE / "kernels" / kernel
    files += sorted(folder.glob("*.cu")) + sorted((PACKAGE / "kernels").glob("*.cuh"))
    files.append(PACKAGE / "cuda_launch.py")
    try:
        from gpubench.backends import backend_id, load_backend

        adapter = type(load_backend(backend_id(framework, "gpu")))
        backend = sys.modules[adapter.__module__].__file__
    except Exception:  # noqa: BLE001 - a framework without a GPU backend has none to hash
        backend = None
    if backend:
        files.append(Path(backend))
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def child(cell: Cell, size: int) -> int:
    """Build the cell's implementation and make the profiled calls (runs under ncu)."""
    import numpy as np

    from gpubench.backends import backend_id, load_backend
    from gpubench.backends.cuda_common import capture_profile
    from gpubench.harness import build_context
    from gpubench.spec import get_kernel, implementations
    from gpubench.timing import Settings

    backend = load_backend(backend_id(cell.framework, "gpu"))
    backend.start(os.cpu_count() or 1)
    spec = get_kernel(cell.kernel)
    impl = next(i for i in implementations(cell.kernel, cell.framework, "gpu")
                if i.name == cell.implementation)
    case = spec.cases([size], [cell.dtype], [cell.variant])[0]
    settings = Settings()
    inputs = spec.make_inputs(case, np.random.default_rng(case.seed(settings.seed)))
    # keep the context: its device buffers are freed with it, and builders that pass
    # raw pointers (CUDA Python's) hold nothing that keeps them alive
    ctx = build_context(spec, case, backend, settings, inputs)
    call = impl.builder(ctx)
    for _ in range(CALLS):
        backend.device_sync(call())
    capture_profile(True)
    for _ in range(CALLS):
        backend.device_sync(call())
    capture_profile(False)
    del ctx
    print(marker(spec.bytes_moved(case), backend.device_name()), file=sys.stderr)
    return 0


def marker(need_bytes: float, gpu: str) -> str:
    """The child's line to the parent: the bytes the cell must move, and the GPU."""
    return f"gpubench-ncu bytes={float(need_bytes)!r} gpu={gpu}"


def read_marker(text: str) -> tuple[float, str] | None:
    """(bytes, GPU name) from the child's :func:`marker` line in ``text``, or None."""
    found = re.search(r"gpubench-ncu bytes=(\S+) gpu=(.*)", text)
    if found is None:
        return None
    try:
        return float(found.group(1)), found.group(2).strip()
    except ValueError:
        return None


def parse_raw(text: str) -> list[dict[str, str]]:
    """The kernel rows of ``ncu --csv --page raw`` output (a header, a units row, one
    row per profiled kernel); ncu's own messages, not CSV, are skipped."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    return rows[1:] if rows and rows[0].get("ID", "") == "" else rows


def _num(row: Mapping[str, str], key: str) -> float:
    try:
        return float(str(row.get(key, "")).replace(",", ""))
    except ValueError:
        return math.nan


def summarise(rows: Sequence[Mapping[str, str]], need_bytes: float, size: int,
              calls: int = CALLS) -> dict[str, Any]:
    """One profile from the profiled kernels of ``calls`` calls: per call the time,
    kernels and instructions, DRAM bytes against ``need_bytes``; the longest kernel's
    DRAM throughput, L2 hit rate, occupancy, registers and largest warp stall."""
    if not rows or calls < 1:
        raise ValueError("no profiled kernels")
    main = max(rows, key=lambda r: _num(r, "gpu__time_duration.sum"))
    stalls = sorted(((_num(main, k), m.group(1)) for k in main
                     if (m := STALL.match(k)) and math.isfinite(_num(main, k))), reverse=True)
    moved = sum(_num(r, "dram__bytes_read.sum") + _num(r, "dram__bytes_write.sum")
                for r in rows) / calls
    return {
        "size": size,
        "kernels_per_call": len(rows) / calls,
        "us_per_call": sum(_num(r, "gpu__time_duration.sum") for r in rows) / calls / 1e3,
        "dram_pct_of_peak": _num(main, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "bytes_ratio": moved / need_bytes if need_bytes > 0 else math.nan,
        "l2_hit_pct": _num(main, "lts__t_sector_hit_rate.pct"),
        "occupancy_pct": _num(main, "sm__warps_active.avg.pct_of_peak_sustained_active"),
        "registers": _num(main, "launch__registers_per_thread"),
        "instructions_per_element": sum(_num(r, "smsp__inst_executed.sum")
                                        for r in rows) / calls * 32 / size,
        "top_stall": stalls[0][1] if stalls else "",
        "top_stall_per_issue": stalls[0][0] if stalls else math.nan,
    }


#: warp stalls that mean waiting on memory; the rest mean the SMs are busy issuing
MEMORY_STALLS = frozenset({"long_scoreboard", "lg_throttle", "drain", "mio_throttle"})
#: instructions per element above which a memory-bound kernel is issue-bound instead
ISSUE_BOUND_IPE = 60.0


def explain(p: Mapping[str, Any]) -> str:
    """One sentence from a profile: what holds the kernel under the copy ceiling."""
    ratio, dram = float(p["bytes_ratio"]), float(p["dram_pct_of_peak"])
    ipe, occ = float(p["instructions_per_element"]), float(p["occupancy_pct"])
    stall = str(p.get("top_stall") or "")
    head = f"DRAM at {dram:.0f} % of peak"
    if math.isfinite(ratio) and ratio > 1.05:
        why = f"moves {ratio:.2f}x the bytes it must (uncoalesced or repeated accesses)"
    elif ipe > ISSUE_BOUND_IPE or (stall and stall not in MEMORY_STALLS):
        why = (f"issue-bound: {ipe:.0f} instructions per element, largest stall "
               f"{stall or 'none'}")
    else:
        why = (f"latency-bound: its warps wait on global memory "
               f"({stall or 'no stall recorded'}), too few bytes in flight to fill DRAM")
    extra = f"; occupancy {occ:.0f} %" if math.isfinite(occ) and occ < 50 else ""
    return (f"{head}, {ratio:.2f}x the bytes needed: {why}{extra} "
            f"(Nsight Compute {p.get('ncu_version') or '?'}, commit "
            f"{p.get('commit') or '?'})")


def read_profiles(path: str | os.PathLike[str]) -> pd.DataFrame:
    """One profiles CSV, its names and hashes read as text (a fingerprint of digits
    only must not become a number)."""
    return pd.read_csv(path, dtype={c: str for c in (*KEY, "fingerprint", "commit",
                                                     "top_stall", "ncu_version")})


def load_profiles(paths: Iterable[str | os.PathLike[str]] = ()) -> pd.DataFrame:
    """The shipped profiles and those in ``paths`` (later files win for a cell)."""
    frames = []
    for path in [SHIPPED, *map(Path, paths)]:
        if not Path(path).is_file():
            continue
        frame = read_profiles(path)
        missing = [c for c in COLUMNS if c not in frame.columns]
        if missing:  # each file alone: concatenating would fill another's columns
            raise ValueError(f"profiles {path} lack columns {missing}")
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    return out.drop_duplicates(KEY, keep="last").reset_index(drop=True)


def why(profiles: pd.DataFrame, gpu: str | None, framework: str, implementation: str,
        kernel: str, variant: str, dtype: str) -> str:
    """The profile's sentence for a cell on ``gpu``, or why there is none."""
    if not gpu:
        return "no GPU name in the environment record"
    hit = profiles[(profiles["gpu_name"] == gpu) & (profiles["framework"] == framework)
                   & (profiles["implementation"] == implementation)
                   & (profiles["kernel"] == kernel) & (profiles["variant"] == variant)
                   & (profiles["dtype"] == dtype)]
    if hit.empty:
        return "not profiled on this GPU (python -m gpubench.ncu, docs/results.md)"
    p = hit.iloc[-1]
    if str(p["fingerprint"]) != fingerprint(framework, implementation, kernel):
        return (f"the profile on this GPU (commit {p['commit']}) predates a change to "
                f"{implementation}'s code")
    return explain(p)


def ncu_version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    found = re.search(r"Version (\S+)", out.stdout)
    return found.group(1) if found else ""


def profile(cell: Cell, ncu: str, size: int, raw_dir: Path | None = None
            ) -> dict[str, Any]:
    """Profile one cell under ``ncu``: a row of :data:`COLUMNS` (raises on failure)."""
    cmd = [ncu, "--profile-from-start", "off", "--clock-control", "none",
           "--target-processes", "all", "--csv", "--page", "raw", "--print-units", "base",
           *[a for s in SECTIONS for a in ("--section", s)], "--metrics", ",".join(METRICS),
           sys.executable, "-m", "gpubench.ncu", "--child", *cell, "--size", str(size)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        (raw_dir / ("_".join(cell) + ".csv")).write_text(done.stdout)
        (raw_dir / ("_".join(cell) + ".err")).write_text(done.stderr)
    info = read_marker(done.stderr)
    rows = parse_raw(done.stdout)
    if done.returncode or not rows or info is None:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise RuntimeError(f"exit {done.returncode}: {tail}")
    return {"gpu_name": info[1], **cell._asdict(),
            "fingerprint": fingerprint(cell.framework, cell.implementation, cell.kernel),
            **summarise(rows, info[0], size)}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: profile cells under ncu and append their rows to ``--out``."""
    p = argparse.ArgumentParser(prog="python -m gpubench.ncu",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--cell", nargs=5, action="append", default=[],
                   metavar=("FRAMEWORK", "IMPLEMENTATION", "KERNEL", "VARIANT", "DTYPE"))
    p.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, default=SIZE, help="elements (default 2^26)")
    p.add_argument("--out", type=Path, help="profiles CSV to write (rows replace a "
                   "cell's earlier row on the same GPU)")
    p.add_argument("--raw", type=Path, help="folder for ncu's raw CSV of each cell")
    p.add_argument("--ncu", default=shutil.which("ncu") or "/usr/local/cuda/bin/ncu")
    p.add_argument("--commit", default=os.environ.get("GPUBENCH_GIT_COMMIT", ""),
                   help="the code's commit, recorded with each row")
    args = p.parse_args(argv)
    if args.child:
        return child(Cell(*args.child), args.size)
    if not args.cell or args.out is None:
        p.error("--cell (one or more) and --out are needed")
    if not Path(args.ncu).exists():
        p.exit(2, f"ncu not found ({args.ncu}): Nsight Compute is needed\n")
    version, failed = ncu_version(args.ncu), 0
    for cell in map(Cell._make, args.cell):
        try:
            row = profile(cell, args.ncu, args.size, args.raw)
        except (RuntimeError, subprocess.SubprocessError, ValueError) as exc:
            failed += 1
            print(f"{' '.join(cell)}: failed: {exc}", file=sys.stderr, flush=True)
            continue
        row.update(ncu_version=version, commit=args.commit)
        write_rows(args.out, [row])  # after each cell: a run cut short keeps its rows
        print(f"{' '.join(cell)}: {explain(row)}", flush=True)
    if not args.out.is_file():
        write_rows(args.out, [])
    return 1 if failed else 0


def write_rows(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add ``rows`` to the profiles CSV at ``path``; a row replaces the same cell's
    earlier one on the same GPU."""
    from gpubench.files import atomic_write_text

    frame = pd.DataFrame(list(rows), columns=COLUMNS)
    if path.is_file():
        frame = pd.concat([read_profiles(path), frame], ignore_index=True)
        frame = frame.drop_duplicates(KEY, keep="last")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.6g"))


if __name__ == "__main__":
    sys.exit(main())
