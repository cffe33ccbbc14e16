"""Per-kernel figures: for each variant and dtype a figure of the ok rows (every mode),
drawn as PNGs for summary.md; the page shows the same rows on demand (:mod:`.details`).
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
    """One kernel's figures, per variant and dtype with ok rows (every mode), in the
    report's order: the PNGs of summary.md (the page draws the same data on demand,
    :mod:`.details`)."""
    spec = _kernel_spec(kernel)
    k = df[df["kernel"] == kernel]
    unit = str(k["unit"].iloc[0])
    size_meaning = spec.size_meaning if spec else ""
    out = []
    for variant in _ordered(k["variant"], spec.variants if spec else ()):
        kv = k[k["variant"] == variant]
        for dtype in _ordered(kv["dtype"], spec.dtypes if spec else ()):
            ok = kv[(kv["dtype"] == dtype) & (kv["status"] == "ok")]
            if not ok.empty:  # its legend is the interactive twin's (plots.scaling_figure)
                title = f"{kernel} · {variant} · {dtype}"
                out.append(Figure(_alt_text(ok, title, size_meaning, unit), scaling_figure,
                                  (_plot_frame(ok), title, size_meaning, unit), "scaling"))
    return out
