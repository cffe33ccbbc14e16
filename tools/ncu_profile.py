"""Nsight Compute's view of the cells under 95 % of the copy ceiling.

For each cell (framework, implementation, kernel, variant, dtype) at 2^26 elements this
runs one child process under ``ncu``: the child builds the implementation through the
project's own code (backend start, inputs, ``build_context``, the builder), makes three
untimed calls, then three more between ``cudaProfilerStart`` and ``cudaProfilerStop``
(``ncu --profile-from-start off``), so only those launches are profiled, at the GPU's
own clocks (``--clock-control none``, as the benchmark runs). Per cell it prints, over
the profiled launches' kernels: their time, DRAM throughput as % of peak, the bytes
DRAM moved against the bytes the kernel must move, L2 hit rate, achieved occupancy,
registers per thread, instructions per element and the two largest warp-stall reasons.
The raw ``ncu --csv --page raw`` output of each cell is written to ``--out``.

    python tools/ncu_profile.py --out /tmp/ncu           # the default cells
    python tools/ncu_profile.py --cell numba cuda_jit reduction sumsq float32
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = 1 << 26

#: the cells under 95 % in evidence/copy-ceiling-targets (README), and two at ~100 % to read
#: them against
CELLS = [
    ("cupy", "array_ops", "vector_add", "default", "float32"),
    ("jax", "jit", "vector_add", "default", "float32"),
    ("numba", "vectorize_cuda", "vector_add", "default", "float32"),
    ("cuda_python", "nvrtc", "elementwise", "sigmoid", "float32"),
    ("cuda_python", "nvrtc", "elementwise", "sigmoid", "float64"),
    ("cuda_python", "nvrtc", "elementwise", "rational", "float32"),
    ("cupy", "raw_kernel", "elementwise", "sigmoid", "float32"),
    ("numba", "cuda_jit", "elementwise", "sigmoid", "float32"),
    ("numba", "cuda_jit", "elementwise", "hypot", "float32"),
    ("numba", "cuda_jit", "reduction", "sumsq", "float32"),
    ("cuda_python", "nvrtc_sliding", "moving_average", "default", "float32"),
    ("cuda_python", "nvrtc_sliding", "moving_average", "default", "float64"),
    ("cupy", "raw_kernel_sliding", "moving_average", "default", "float32"),
    ("numba", "cuda_jit", "moving_average", "default", "float32"),
    ("numba", "cuda_jit", "moving_average", "default", "float64"),
    ("torch", "triton", "moving_average", "default", "float32"),
]

sys.path.insert(0, str(ROOT / "src"))
from gpubench.ncu import STALL, Cell, parse_raw  # noqa: E402 - the project's own
from gpubench.ncu import child as ncu_child  # noqa: E402

#: gpubench.ncu's metrics and, for this table, the SM throughput and the launch shape
METRICS = ",".join([
    "gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
    "launch__grid_size", "launch__block_size", "smsp__inst_executed.sum",
    "lts__t_sector_hit_rate.pct"])


def child(framework: str, impl_name: str, kernel: str, variant: str, dtype: str) -> int:
    """Build the cell's implementation and make the profiled calls."""
    return ncu_child(Cell(framework, impl_name, kernel, variant, dtype), SIZE)


parse = parse_raw


def num(row: dict[str, str], key: str) -> float:
    try:
        return float(row.get(key, "").replace(",", ""))
    except ValueError:
        return float("nan")


def summary(cell: tuple[str, ...], rows: list[dict[str, str]], need_bytes: float) -> str:
    """One Markdown row: the three calls' kernels, per call."""
    calls = 3
    t = sum(num(r, "gpu__time_duration.sum") for r in rows) / calls
    rd = sum(num(r, "dram__bytes_read.sum") for r in rows) / calls
    wr = sum(num(r, "dram__bytes_write.sum") for r in rows) / calls
    main = max(rows, key=lambda r: num(r, "gpu__time_duration.sum"))
    stalls = sorted(((num(main, k), STALL.match(k).group(1)) for k in main
                     if STALL.match(k)), reverse=True)[:2]
    names = sorted({r.get("Kernel Name", "?")[:40] for r in rows})
    return (f"| {' '.join(cell)} | {len(rows) // calls} | {t / 1e3:.1f} | "
            f"{num(main, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} | "
            f"{(rd + wr) / need_bytes:.3f} | {num(main, 'lts__t_sector_hit_rate.pct'):.1f} | "
            f"{num(main, 'sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} | "
            f"{num(main, 'launch__registers_per_thread'):.0f} | "
            f"{sum(num(r, 'smsp__inst_executed.sum') for r in rows) / calls * 32 / SIZE:.1f} | "
            + ", ".join(f"{n} {v:.2f}" for v, n in stalls) + f" | {'; '.join(names)} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--child", nargs=5, metavar=("FRAMEWORK", "IMPL", "KERNEL", "VARIANT",
                                                "DTYPE"))
    p.add_argument("--cell", nargs=5, action="append", metavar=("FRAMEWORK", "IMPL",
                                                                "KERNEL", "VARIANT", "DTYPE"))
    p.add_argument("--out", type=Path, default=Path("ncu_out"))
    p.add_argument("--ncu", default=shutil.which("ncu") or "/usr/local/cuda/bin/ncu")
    args = p.parse_args(argv)
    if args.child:
        return child(*args.child)
    if not Path(args.ncu).exists():
        print(f"ncu not found ({args.ncu}): Nsight Compute is needed", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    print("| cell | kernels per call | µs per call | DRAM % of peak (longest kernel) | "
          "DRAM bytes / bytes needed | L2 hit % | achieved occupancy % | registers | "
          "warp instructions x 32 per element | top warp stalls (per issue) | kernels |")
    print("|" + " --- |" * 11)
    bad = 0
    for cell in args.cell or CELLS:
        name = "_".join(cell)
        cmd = [args.ncu, "--profile-from-start", "off", "--clock-control", "none",
               "--target-processes", "all", "--csv", "--page", "raw", "--print-units",
               "base", "--section", "SpeedOfLight", "--section", "Occupancy",
               "--section", "LaunchStats", "--section", "WarpStateStats",
               "--section", "MemoryWorkloadAnalysis", "--metrics", METRICS,
               sys.executable, __file__, "--child", *cell]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        (args.out / f"{name}.csv").write_text(done.stdout)
        (args.out / f"{name}.err").write_text(done.stderr)
        rows = parse(done.stdout)
        need = re.search(r"bytes=(\d+)", done.stderr)
        if done.returncode or not rows or not need:
            bad += 1
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
            print(f"| {' '.join(cell)} | failed (exit {done.returncode}): {tail} |")
            continue
        print(summary(cell, rows, float(need.group(1))), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
