"""Allocating inside a loop: per backend and size, the cost of one allocate-and-free
from the framework's pool or cache, from the raw driver allocation and as managed
memory (the ``allocation`` kernel), and a sentence per backend on what a loop that
allocates its buffer every iteration loses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from gpubench.kernels.allocation import SPEC as ALLOCATION
from gpubench.report.base import fmt_bytes, fmt_speedup, fmt_time
from gpubench.report.render import text_table
from gpubench.report.sections.common import best_per, primary_mode

KERNEL = ALLOCATION.name
#: the kinds of allocator (:data:`gpubench.kernels.allocation.ALLOCATORS`), as columns
KIND_LABELS = {"pool": "pool or cache", "driver": "driver, no pool", "managed": "managed",
               "host": "host allocator"}


def _kind(row: pd.Series) -> str:
    from gpubench.kernels.allocation import allocator_kind

    return allocator_kind(str(row["framework"]), str(row["implementation"]),
                          str(row["device"]))


def allocation_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The allocation kernel's ok rows of the primary mode with a caller's clock, each
    with its allocator ``kind``; the fastest row per (backend, size, kind)."""
    ok = df[(df["kernel"] == KERNEL) & (df["status"] == "ok")
            & (df["mode"] == primary_mode(df)) & (df["caller_s"] > 0)]
    if ok.empty:
        return ok.assign(kind=pd.Series(dtype=object))
    ok = ok.assign(kind=ok.apply(_kind, axis=1))
    ok = ok[ok["kind"] != ""]
    return best_per(ok, ["backend", "size_key", "kind"], by="caller_s")


def allocation_table(rows: pd.DataFrame) -> pd.DataFrame | None:
    """Per backend and size: each kind's fastest row (implementation and time per
    allocate-and-free, pipelined caller's clock; CPU: wall) and driver ÷ pool."""
    if rows.empty:
        return None
    kinds = [k for k in KIND_LABELS if (rows["kind"] == k).any()]
    out = []
    for (backend, size), g in rows.groupby(["backend", "size_key"], sort=True):
        by_kind = {r["kind"]: r for _, r in g.iterrows()}
        cells = [backend, fmt_bytes(size)]
        for k in kinds:
            r = by_kind.get(k)
            cells.append("—" if r is None else f"{fmt_time(r['caller_s'])} ({r['implementation']})")
        pool, driver = by_kind.get("pool"), by_kind.get("driver")
        cells.append(fmt_speedup(driver["caller_s"] / pool["caller_s"])
                     if pool is not None and driver is not None else "—")
        out.append(cells)
    headers = ["backend", "size", *(KIND_LABELS[k] for k in kinds), "driver ÷ pool"]
    return text_table(headers, out, frozenset(headers[1:]))


def loop_sentences(rows: pd.DataFrame) -> list[str]:
    """Per backend with a pool and a driver row: what an allocation inside a loop costs
    at the largest size both measured, with the pool and without it."""
    out = []
    for backend, g in rows.groupby("backend", sort=True):
        pool, driver = g[g["kind"] == "pool"], g[g["kind"] == "driver"]
        sizes = sorted(set(pool["size_key"]) & set(driver["size_key"]))
        if not sizes:
            continue
        size = sizes[-1]
        p = pool[pool["size_key"] == size].iloc[0]
        d = driver[driver["size_key"] == size].iloc[0]
        ratio = d["caller_s"] / p["caller_s"]
        text = (f"{backend}: one {fmt_bytes(size)} allocate-and-free costs "
                f"{fmt_time(p['caller_s'])} from {p['implementation']} and "
                f"{fmt_time(d['caller_s'])} from {d['implementation']}: ")
        if ratio >= 1:
            text += (f"a loop that allocates without the pool pays {fmt_speedup(ratio)} "
                     f"the pooled cost, {fmt_time(d['caller_s'] - p['caller_s'])} more "
                     "per iteration")
        else:
            # the pool can lose (CUDA's stream-ordered pool at 1 GiB on the H100)
            text += (f"here the pool is the slower, by {fmt_speedup(1 / ratio)} "
                     f"({fmt_time(p['caller_s'] - d['caller_s'])} more per iteration)")
        managed = g[(g["kind"] == "managed") & (g["size_key"] == size)]
        if not managed.empty:
            m = managed.iloc[0]
            text += (f"; managed memory ({m['implementation']}) "
                     f"{fmt_time(m['caller_s'])}")
        out.append(text)
    return out


@dataclass
class AllocationLoop:
    """The section's data: its table (None: no allocation rows) and sentences."""

    table: pd.DataFrame | None
    sentences: list[str] = field(default_factory=list)


def build(df: pd.DataFrame) -> AllocationLoop:
    rows = allocation_rows(df)
    return AllocationLoop(allocation_table(rows), loop_sentences(rows))
