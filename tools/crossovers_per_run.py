"""Each run's crossovers: per GPU backend and class the report's one
crossover figure (the median over the class's cases), and vector_add float32's alone,
for every timings file given, with max/min over the runs.

    python tools/crossovers_per_run.py HOST_JSON RUN1 RUN2 RUN3
"""

from __future__ import annotations

import sys

from gpubench.report import load_inputs, verdicts
from gpubench.report.sections.crossover import crossings


def main(argv: list[str]) -> int:
    host, runs = argv[0], argv[1:]
    out: dict[tuple[str, str], list[float | None]] = {}
    for i, path in enumerate(runs):
        inp = load_inputs(path, host)
        found = crossings(inp.df, inp.env.data)
        for (backend, cls), summary in verdicts.class_crossovers(found).items():
            out.setdefault((backend, cls), [None] * len(runs))[i] = summary.median
        for c in found:
            if c.kernel == "vector_add" and c.dtype == "float32":
                out.setdefault((c.backend, "vector_add f32"), [None] * len(runs))[i] = \
                    c.device_resident[1]
    print(f"{'backend':18s} {'class':16s} " + " ".join(f"{'run ' + str(i + 1):>12}"
                                                      for i in range(len(runs))) + "  max/min")
    for (backend, cls), vals in sorted(out.items()):
        nums = [v for v in vals if isinstance(v, (int, float)) and v > 0]
        ratio = f"{max(nums) / min(nums):.2f}" if len(nums) == len(vals) else "-"
        cells = " ".join(f"{v:>12,.0f}" if isinstance(v, (int, float)) else f"{v!s:>12}"
                         for v in vals)
        print(f"{backend:18s} {cls:16s} {cells}  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
