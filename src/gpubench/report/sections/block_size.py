"""Block size: for each hand-written GPU kernel swept over threads per block, which block
size was fastest at each size, each one's theoretical occupancy, and how much the
framework's default block size (what its own kernels launch with) loses to the fastest.

Why. The workshop book teaches choosing the threads per block (§2.8, §4.11.1); the
suite's hand-written kernels all launch 256. Kernels that declare a block sweep
(:attr:`gpubench.spec.KernelSpec.block_sweep`: variant -> computation, threads per block)
run one computation at several block sizes, and the framework's default comes from the
spec too (:attr:`~gpubench.spec.KernelSpec.default_blocks`), so no kernel or framework
is named here.

One rule for "fastest", as in the Threads section: the block size with the lowest median
device time; the default loses *surely* only where the fastest block size's
interquartile range lies wholly below the default's, and is *too close to call*
otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpubench.backends import reader_name
from gpubench.report.base import fmt_int, fmt_time
from gpubench.report.render import text_table
from gpubench.report.sections.common import Judged, primary_mode, swept
from gpubench.spec import find_kernel

#: what identifies one computation swept over block sizes at one size
CASE = ["backend", "framework", "implementation", "kernel", "work", "dtype", "size_key"]

#: the book's statement these rows judge
STATEMENT = ("choose the threads per block: the block size a kernel is launched with "
             "changes how fast it runs (§2.8, §4.11.1)")

#: how a case-size's default compares with its fastest block size
SURELY = "surely"
CLOSE = "too close to call"
DEFAULT_FASTEST = "the default is fastest"
NO_DEFAULT = "default not measured"


@dataclass
class SizeResult:
    """One computation, framework and dtype at one size: its block sizes and their rows."""

    backend: str
    implementation: str
    kernel: str
    work: str
    dtype: str
    size: int
    threads: list[int]
    medians: list[float]
    q1: list[float]
    q3: list[float]
    occupancy: list[float]
    best: int
    #: the framework's default block size (None: the spec names none for it)
    default: int | None
    #: the default's median over the fastest's, less one (0: the default is fastest;
    #: NaN: the default was not measured)
    loss: float
    #: :data:`SURELY`, :data:`CLOSE`, :data:`DEFAULT_FASTEST` or :data:`NO_DEFAULT`
    call: str

    @property
    def what(self) -> str:
        return f"{reader_name(self.backend)} {self.implementation} {self.work} {self.dtype}"


@dataclass
class BlockSize(Judged):
    """The section (table None: no computation measured at two or more block sizes)
    and the block sizes it compares."""

    statement: str = STATEMENT
    block_sizes: list[int] = field(default_factory=list)


def _sweep_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The ``ok`` rows of block-sweep kernels in the primary mode, with ``work`` and
    ``block`` (threads per block) and the framework's ``default`` block size."""
    needed = {"kernel", "variant", "framework", "backend", "implementation", "dtype",
              "status", "mode", "size_key", "median_s", "q1_s", "q3_s"}
    if df.empty or not needed <= set(df.columns):
        return df.iloc[0:0]
    specs = {k: find_kernel(k) for k in df["kernel"].astype(str).unique()}
    sweeps = {k: s for k, s in specs.items() if s is not None and s.block_sweep}
    if not sweeps:
        return df.iloc[0:0]
    mode = primary_mode(df)
    rows = df[(df["status"] == "ok") & (df["mode"] == mode)
              & df["kernel"].astype(str).isin(list(sweeps))].copy()
    if rows.empty:
        return rows
    parts = [sweeps[str(k)].block_sweep.get(str(v)) for k, v in
             zip(rows["kernel"], rows["variant"], strict=True)]
    rows["work"] = [p[0] if p else "" for p in parts]
    rows["block"] = [p[1] if p else 0 for p in parts]
    rows["default"] = [sweeps[str(k)].default_blocks.get(str(f), 0) for k, f in
                       zip(rows["kernel"], rows["framework"], strict=True)]
    if "occupancy" not in rows.columns:
        rows["occupancy"] = math.nan
    return rows[rows["block"] > 0]


def size_result(rows: pd.DataFrame) -> SizeResult | None:
    """One case-size; None unless measured at two or more block sizes with positive
    medians."""
    found = swept(rows, "block")
    if found is None:
        return None
    threads, med, q1, q3 = found
    i = int(np.argmin(med))
    default = int(rows["default"].iloc[0]) or None
    if default is None or default not in threads:
        loss, call = math.nan, NO_DEFAULT
    elif threads[i] == default:
        loss, call = 0.0, DEFAULT_FASTEST
    else:
        d = threads.index(default)
        loss = float(med[d] / med[i] - 1.0)
        apart = bool(np.isfinite(q3[i]) and np.isfinite(q1[d]) and q3[i] < q1[d])
        call = SURELY if apart else CLOSE
    first = rows.iloc[0]
    return SizeResult(
        backend=str(first["backend"]), implementation=str(first["implementation"]),
        kernel=str(first["kernel"]), work=str(first["work"]), dtype=str(first["dtype"]),
        size=int(first["size_key"]), threads=threads, medians=[float(m) for m in med],
        q1=[float(x) for x in q1], q3=[float(x) for x in q3],
        occupancy=[float(x) for x in pd.to_numeric(rows["occupancy"], errors="coerce")],
        best=threads[i], default=default, loss=loss, call=call)


def sweep_results(df: pd.DataFrame) -> list[SizeResult]:
    """Every case-size of the run's block sweeps, by framework, computation, dtype, size."""
    rows = _sweep_rows(df)
    if rows.empty:
        return []
    out = [size_result(r) for _, r in rows.groupby(CASE, dropna=False, sort=True)]
    return [r for r in out if r is not None]


def _cell(r: SizeResult, block: int) -> str:
    """'412 µs · 100%': the median device time at ``block`` and its occupancy."""
    if block not in r.threads:
        return "—"
    i = r.threads.index(block)
    occ, time = r.occupancy[i], fmt_time(r.medians[i])
    return f"{time} · {occ:.0%}" if math.isfinite(occ) else time


def _loss_words(r: SizeResult) -> str:
    if r.call == NO_DEFAULT:
        return NO_DEFAULT
    if r.call == DEFAULT_FASTEST:
        return DEFAULT_FASTEST
    return f"{r.loss:.1%}, {r.call}"


def build(df: pd.DataFrame) -> BlockSize:
    """The section from the run's rows."""
    found = sweep_results(df)
    if not found:
        return BlockSize(None)
    blocks = sorted({t for r in found for t in r.threads})
    rows = [[reader_name(r.backend), r.implementation, f"{r.work}, {r.dtype}",
             fmt_int(r.size), *(_cell(r, b) for b in blocks), str(r.best),
             str(r.default) if r.default else "—", _loss_words(r)] for r in found]
    table = text_table(
        ["framework", "implementation", "computation", "size",
         *(f"{b} threads" for b in blocks), "fastest", "default", "the default loses"],
        rows, frozenset({"size", *(f"{b} threads" for b in blocks)}))
    surely = [r for r in found if r.call == SURELY]
    close = [r for r in found if r.call == CLOSE]
    fastest = [r for r in found if r.call == DEFAULT_FASTEST]
    judged = len(surely) + len(close) + len(fastest)
    sentences = [
        f"{len(found)} case-size(s) (framework, computation, dtype, size) measured at "
        f"{len(blocks)} block sizes ({', '.join(map(str, blocks))} threads).",
        f"The framework's default block size was fastest in {len(fastest)} of {judged}; "
        f"another block size was surely faster (interquartile ranges apart) in "
        f"{len(surely)} and faster by median but too close to call in {len(close)}.",
    ]
    sentences += _best_sentences(found)
    unmeasured = _occupancy_reasons(df)
    if unmeasured:
        why = unmeasured[1].removeprefix("not measured: ")
        sentences.append(f"Occupancy not measured in {unmeasured[0]} row(s): {why}.")
    if surely:
        verdict = "holds"
        worst = max(surely, key=lambda r: r.loss)
        evidence = (f"the default block size was surely slower than the fastest in "
                    f"{len(surely)} of {judged} case-sizes; most at {worst.what} at "
                    f"{fmt_int(worst.size)}: {worst.best} threads, the default "
                    f"{worst.default} {worst.loss:.1%} slower")
    elif judged:
        verdict = "does not hold here"
        evidence = (f"the default block size was fastest, or too close to call, in all "
                    f"{judged} case-sizes")
    else:
        verdict = "not judged"
        evidence = "no case-size measured its framework's default block size"
    return BlockSize(table, sentences, verdict, evidence, block_sizes=blocks)


def _best_sentences(found: Sequence[SizeResult]) -> list[str]:
    """Per framework and computation, the fastest block size at each size measured:
    'Fastest block size, CuPy raw_kernel add: 512 (float32, 1,048,576), ...'."""
    groups: dict[tuple[str, str, str], list[SizeResult]] = {}
    for r in found:
        groups.setdefault((r.backend, r.implementation, r.work), []).append(r)
    out = []
    for (backend, impl, work), rs in groups.items():
        marks = {SURELY: "*", CLOSE: "~"}
        parts = [f"{r.best}{marks.get(r.call, '')} ({r.dtype}, {fmt_int(r.size)})"
                 for r in rs]
        out.append(f"Fastest block size, {reader_name(backend)} {impl} {work}: "
                   f"{', '.join(parts)}.")
    return out


def _occupancy_reasons(df: pd.DataFrame) -> tuple[int, str] | None:
    """(rows, the most common reason) of the sweep rows without an occupancy."""
    rows = _sweep_rows(df)
    if rows.empty or "occupancy_reason" not in rows.columns:
        return None
    reasons = rows["occupancy_reason"].astype(str)
    missing = reasons[reasons.str.len() > 0]
    if missing.empty:
        return None
    return len(missing), str(missing.value_counts().index[0])
