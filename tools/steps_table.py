"""Each step's wall time in one or more Snakemake runs, from their logs (the
suite's wall time, step by step), side by side.

    python tools/steps_table.py run1_cold/suite.log.gz run2_warm/suite.log.gz ...
"""

from __future__ import annotations

import datetime
import gzip
import re
import sys
from pathlib import Path

STAMP = re.compile(r"\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]")


def steps(path: Path) -> tuple[dict[str, float], float]:
    """{step: seconds} (a job's start stamp to its "Finished" stamp) and the run's
    first-to-last stamp."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        lines = fh.read().splitlines()
    ts = first = None
    out: dict[str, float] = {}
    cur: list | None = None
    for line in lines:
        m = STAMP.match(line)
        if m:
            ts = datetime.datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
            first = first or ts
            continue
        m = re.match(r"\s*(?:local)?rule (\w+):", line)
        if m:
            cur = [m.group(1), ts]
        m = re.match(r"\s*wildcards: backend=(\S+)", line)
        if m and cur:
            cur[0] = m.group(1)
        if line.startswith("Finished jobid") and cur and cur[0] != "all":
            out[cur[0]] = (ts - cur[1]).total_seconds()
            cur = None
    return out, (ts - first).total_seconds()


def main(paths: list[str]) -> int:
    runs = [steps(Path(p)) for p in paths]
    names = [Path(p).parent.name for p in paths]
    order = list(dict.fromkeys(k for r, _ in runs for k in r))
    print("| step | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for k in order:
        print(f"| {k} | " + " | ".join(f"{r.get(k, float('nan')):.0f} s" for r, _ in runs) + " |")
    print("| **whole run** (first to last log stamp) | "
          + " | ".join(f"**{t:.0f} s** ({t / 60:.1f} min)" for _, t in runs) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
