"""Per-kernel figures: one per kernel, its first case's ok rows (every mode), drawn as
PNGs for summary.md; the page shows every case's rows on demand (:mod:`.details`).
"""

from __future__ import annotations

import pandas as pd

from gpubench.report.base import (
    _kernel_spec,
    _ordered,
    _series_order,
    _sort_rows,
    fmt_time,
    scaling_figure,
)
from gpubench.report.render import Figure


def _alt_text(rows: pd.DataFrame, title: str, size_meaning: str, unit: str) -> str:
    series = _series_order(rows)
    largest = rows["size_key"].max()
    best = _sort_rows(rows[rows["size_key"] == largest]).iloc[0]
    modes = sorted(set(rows["mode"]))
    mode_txt = f" Modes: {', '.join(modes)} (cold dotted)." if len(modes) > 1 else ""
    return (f"Log-log plots for {title}: median time per call in seconds and throughput in "
            f"{unit} versus problem size{f' in {size_meaning}' if size_meaning else ''}, "
            f"{len(series)} line(s): "
            f"{'; '.join(series)}. Fastest at the largest size {largest:,}: "
            f"{best['series']} ({best['mode']}) at {fmt_time(best['median_s'])}.{mode_txt}")


def _plot_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Only the columns a figure reads: less to copy into the drawing processes."""
    cols = ["series", "backend", "implementation", "threads_key", "mode", "size_key",
            "caller_s", "caller_q1", "caller_q3", "throughput", "device"]
    return rows[cols].reset_index(drop=True)




def figures(df: pd.DataFrame, kernel: str) -> list[Figure]:
    """One kernel's figure for summary.md: its first variant and dtype (in the spec's
    order) with ok rows, every mode. One PNG per kernel, not per case: drawing them was
    most of a report's first build, and every case's numbers are in summary.md's tables
    and in the page's detail view (:mod:`.details`), which draws any case on demand."""
    spec = _kernel_spec(kernel)
    k = df[df["kernel"] == kernel]
    unit = str(k["unit"].iloc[0])
    size_meaning = spec.size_meaning if spec else ""
    cases = []
    for variant in _ordered(k["variant"], spec.variants if spec else ()):
        kv = k[k["variant"] == variant]
        for dtype in _ordered(kv["dtype"], spec.dtypes if spec else ()):
            ok = kv[(kv["dtype"] == dtype) & (kv["status"] == "ok")]
            if not ok.empty:
                cases.append((variant, dtype, ok))
    if not cases:
        return []
    variant, dtype, ok = cases[0]
    title = f"{kernel} · {variant} · {dtype}"
    alt = _alt_text(ok, title, size_meaning, unit)
    if len(cases) > 1:
        others = ", ".join(f"{v} {d}" for v, d, _ in cases[1:])
        alt += (f" The kernel's other {len(cases) - 1} case(s) ({others}) are in the "
                "tables above and the HTML page's per-kernel results.")
    # its legend is the interactive twin's (plots.scaling_figure)
    return [Figure(alt, scaling_figure, (_plot_frame(ok), title, size_meaning, unit),
                   "scaling")]
