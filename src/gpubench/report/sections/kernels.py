"""Per-kernel sections: for each variant and dtype a figure of the ok rows (every mode),
and a table of every row per mode (each time column names its clock).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from gpubench.report.base import (
    _finite,
    _kernel_spec,
    _ordered,
    _series_order,
    _sort_rows,
    fmt_int,
    fmt_relerr,
    fmt_sig,
    fmt_speedup,
    fmt_threads,
    fmt_time,
    scaling_figure,
)
from gpubench.report.render import Figure, text_table


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


def _pct_cell(pct: float) -> str:
    """% of ceiling; above :data:`gpubench.devices.FLAG_ABOVE_PCT` marked, pointing at
    the ceilings section's flagged rows, where the reason is."""
    from gpubench.devices import FLAG_ABOVE_PCT

    text = f"{float(pct):.1f}"
    return f"{text} ⚑ flagged (see Flagged)" if float(pct) > FLAG_ABOVE_PCT else text


def kernel_table(rows: pd.DataFrame, unit: str) -> pd.DataFrame:
    """Every row of a kernel; each time column names its clock."""
    headers = ["backend", "implementation", "threads", "size",
               "caller: pipelined", "caller: sync", "own timer: median", "timer", "spread, %",
               "samples", "first call", f"{unit} (own timer)", "% of ceiling",
               "speedup vs NumPy (caller), ×", "rel_err", "status"]
    used = ["backend", "implementation", "device", "threads_key", "size_key", "caller_s",
            "sync_s", "median_s", "timer", "rel_spread", "samples", "first_call_s",
            "throughput", "pct_of_ceiling", "speedup", "rel_err", "status"]
    out, classes = [], []
    for r in _sort_rows(rows)[used].to_dict("records"):
        ok = r["status"] == "ok"
        gpu = r["device"] == "gpu"
        out.append([
            r["backend"], r["implementation"], fmt_threads(r["threads_key"]),
            fmt_int(r["size_key"]), fmt_time(r["caller_s"]),
            fmt_time(r["sync_s"]) if gpu else "= wall", fmt_time(r["median_s"]),
            str(r["timer"]) or "—",
            f"{100 * float(r['rel_spread']):.1f}" if _finite(r["rel_spread"]) else "—",
            fmt_int(r["samples"]), fmt_time(r["first_call_s"]),
            fmt_sig(r["throughput"]) if ok else "—",
            _pct_cell(r["pct_of_ceiling"]) if ok and _finite(r["pct_of_ceiling"]) else "—",
            fmt_speedup(r["speedup"]).removesuffix("×"), fmt_relerr(r["rel_err"]),
            r["status"]])
        classes.append("" if ok else "bad")
    return text_table(headers, out, frozenset({"threads", "size", "caller: pipelined",
                                          "caller: sync", "own timer: median", "spread, %",
                                          "samples", "first call", f"{unit} (own timer)",
                                          "% of ceiling", "speedup vs NumPy (caller), ×",
                                          "rel_err"}),
                 classes)


def _plot_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Only the columns a figure reads: less to copy into the drawing processes."""
    cols = ["series", "backend", "implementation", "threads_key", "mode", "size_key",
            "caller_s", "caller_q1", "caller_q3", "throughput", "device"]
    return rows[cols].reset_index(drop=True)




@dataclass
class Case:
    """One variant and dtype of a kernel: its figure (None: no ok rows), and its rows per
    mode (``tables``: (mode, table))."""

    title: str
    figure: Figure | None
    tables: list[tuple[str, pd.DataFrame]]
    several_modes: bool


@dataclass
class Kernel:
    """A kernel's section."""

    name: str
    anchor: str
    description: str
    size_meaning: str
    known: bool
    n_not_run: int
    cases: list[Case] = field(default_factory=list)


def build(df: pd.DataFrame, kernel: str, anchor: str, with_tables: bool = True) -> Kernel:
    """One kernel: per variant and dtype a figure of the ok rows (every mode), and a table
    per mode (none with ``with_tables=False``: the figures alone, to draw them ahead)."""
    spec = _kernel_spec(kernel)
    k = df[df["kernel"] == kernel]
    unit = str(k["unit"].iloc[0])
    size_meaning = spec.size_meaning if spec else ""
    measured = k[k["status"].isin(["ok", "wrong_result"])]
    out = Kernel(kernel, anchor, spec.description.rstrip(".") if spec and spec.description
                 else "", size_meaning, spec is not None, len(k) - len(measured))
    for variant in _ordered(k["variant"], spec.variants if spec else ()):
        kv = k[k["variant"] == variant]
        for dtype in _ordered(kv["dtype"], spec.dtypes if spec else ()):
            g = kv[kv["dtype"] == dtype]
            title = f"{kernel} · {variant} · {dtype}"
            ok = g[g["status"] == "ok"]
            fig = None
            if not ok.empty:  # its legend is the interactive twin's (plots.scaling_figure)
                fig = Figure(_alt_text(ok, title, size_meaning, unit), scaling_figure,
                             (_plot_frame(ok), title, size_meaning, unit), "scaling")
            modes = sorted(set(g["mode"]))
            tables = []
            for mode in modes if with_tables else ():
                shown = g[g["status"].isin(["ok", "wrong_result"]) & (g["mode"] == mode)]
                if not shown.empty:
                    tables.append((mode, kernel_table(shown, unit)))
            out.cases.append(Case(title, fig, tables,
                                  len(modes) > 1))
    return out
