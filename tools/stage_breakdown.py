"""Where a run's time went: each step's wall time (from Snakemake's log) and each
worker's time by stage (the last line of its step's log, gpubench.ledger), grouped as
the full suite's breakdown was (evidence/suite-wall-time/README.md): timed samples (device
and caller clocks, warm-up, spread rounds), energy, first call and building, checks,
references, inputs and placing them, the rest.

    python tools/stage_breakdown.py SNAKEMAKE_LOG LOGS_DIR [NAME]

SNAKEMAKE_LOG: the run's Snakemake output (plain or .gz); LOGS_DIR: its logs_dir.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from steps_table import steps  # the suite's step table, shared

#: the breakdown's groups of the ledger's stages (gpubench.worker)
GROUPS = {
    "timed samples": ("device clock", "caller clocks", "warm-up", "spread rounds"),
    "energy": ("energy", "energy of the fastest"),
    "first call + building": ("first call", "building", "cache scans"),
    "checks, reference, inputs, placing": ("checks", "reference", "inputs",
                                           "placing inputs"),
}
LINE = re.compile(r"^(\[\S+ t=\d+\]) time by stage, ([\d.]+) s after the start: (.*)$")
PART = re.compile(r"(.+?) ([\d.]+) s \(\d+ %\)")


def stages(logs: Path) -> list[tuple[str, float, dict[str, float]]]:
    """(worker, total seconds, {stage: seconds}) of every worker in the run's logs."""
    out = []
    for log in sorted((logs / "run_backend").glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            m = LINE.match(line)
            if m:
                parts = dict((n.strip(), float(s)) for n, s in
                             (PART.match(p.strip()).groups() for p in m.group(3).split(", ")))
                out.append((m.group(1).strip("[]"), float(m.group(2)), parts))
    return out


def main(argv: list[str]) -> int:
    log, logs = Path(argv[0]), Path(argv[1])
    name = argv[2] if len(argv) > 2 else logs.parent.name
    per_step, whole = steps(log)
    print(f"## {name}: the run's steps (Snakemake's log)\n")
    print("| step | wall time |\n|---|---:|")
    for step, secs in per_step.items():
        print(f"| {step} | {secs:.0f} s |")
    print(f"| **whole run** (first to last log stamp) | **{whole:.0f} s** "
          f"({whole / 60:.1f} min) |\n")
    found = stages(logs)
    print(f"## {name}: each worker's time by stage (seconds)\n")
    print("| worker | total | " + " | ".join(GROUPS) + " | rest |")
    print("|---|---:|" + "---:|" * (len(GROUPS) + 1))
    sums = [0.0] * (len(GROUPS) + 2)
    for worker, total, parts in found:
        cells = [sum(parts.get(s, 0.0) for s in group) for group in GROUPS.values()]
        row = [total, *cells, total - sum(cells)]
        sums = [a + b for a, b in zip(sums, row, strict=True)]
        print(f"| {worker} | " + " | ".join(f"{x:.1f}" for x in row) + " |")
    print("| **sum** | " + " | ".join(f"**{x:.1f}**" for x in sums) + " |\n")
    print("Each worker's line as it logged it:\n")
    for log_file in sorted((logs / "run_backend").glob("*.log")):
        for line in log_file.read_text(errors="replace").splitlines():
            if LINE.match(line):
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
