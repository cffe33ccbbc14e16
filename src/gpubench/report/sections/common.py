"""What the comparison sections share: the clocks, the size classes, the cases in the
report's order, and the fastest row per group (:func:`best_per`, which runs a thousand
times per report).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpubench.report import figures
from gpubench.report.base import (
    _kernel_spec,
    _ordered,
    consolidate,
    img,
)
from gpubench.report.render import Figure, Markup
from gpubench.spec import kernel_names

#: the workshop book's rule of thumb (§1.3.4, §1.8.3): small datasets, "< 10,000 elements",
#: are not good for the GPU
BOOK_CROSSOVER = 10_000
#: the old name, kept for code written against it
TRANSFERS_SUFFIX = "+transfers"
CLASS_NAMES = ("small", "medium", "large")


@dataclass
class Judged:
    """A section that judges a statement of the source documents (threads, block sizes,
    reduced precision): its table (None: nothing measured for it), the sentences that sum
    it up, the verdict and the evidence the claims table quotes beside the statement."""

    table: pd.DataFrame | None
    sentences: list[str] = field(default_factory=list)
    verdict: str = ""
    evidence: str = ""
    statement: str = ""


def swept(rows: pd.DataFrame, column: str
          ) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray] | None:
    """One case-size's rows over a swept setting (``threads``, ``block``), in its order:
    the settings and their medians, first and third quartiles; None unless two or more
    distinct settings, each with a positive median."""
    rows = rows.sort_values(column)
    values = [int(v) for v in rows[column]]
    if len(values) < 2 or len(set(values)) != len(values):
        return None
    med = rows["median_s"].to_numpy(float)
    q1, q3 = rows["q1_s"].to_numpy(float), rows["q3_s"].to_numpy(float)
    if not (np.isfinite(med).all() and (med > 0).all()):
        return None
    return values, med, q1, q3


def primary_mode(df: pd.DataFrame) -> str:
    """The mode the cross-framework sections use: ``hot`` (the CPU rows' mode) if present."""
    modes = sorted(set(df["mode"]))
    return "hot" if "hot" in modes else (modes[0] if modes else "")


def _group(rows: pd.DataFrame) -> pd.Series:
    """The competitor a row belongs to: its backend, with end-to-end (+transfers)
    implementations as a competitor of their own."""
    extra = rows["implementation"].map(lambda s: " +transfers" if str(s).endswith(
        TRANSFERS_SUFFIX) else "")
    return rows["backend"] + extra


def best_per(rows: pd.DataFrame, keys: Sequence[str], by: str = "median_s") -> pd.DataFrame:
    """The fastest ok row per ``keys`` on the clock column ``by`` (ties broken by name,
    so the choice is stable); rows without a time on that clock do not compete.

    Rows come in :func:`canonical_order` (fastest on the device clock first), so for
    ``median_s`` the first of each group wins without sorting again: this runs a thousand
    times per report, so it works on positions and takes the rows once. Other clocks sort
    first (stable, so names still break ties)."""
    t = rows[by].to_numpy(dtype=float, na_value=np.nan)
    pos = np.flatnonzero((rows["status"].to_numpy() == "ok") & (t > 0))
    if by != "median_s":
        pos = pos[np.argsort(t[pos], kind="stable")]
    # positions, not boolean masks and sorts of the frame: one take of the rows at the end
    return rows.iloc[pos[first_of_each(rows, keys, pos)]]


def first_of_each(rows: pd.DataFrame, keys: Sequence[str], pos: np.ndarray) -> np.ndarray:
    """Indices into ``pos`` of the first row of each distinct ``keys`` value, in order
    (``DataFrame.duplicated`` on positions, without copying the frame)."""
    if not len(pos):
        return np.zeros(0, dtype=np.int64)
    combined = np.zeros(len(pos), dtype=np.int64)
    for key in keys:
        codes, uniques = pd.factorize(rows[key].to_numpy()[pos], use_na_sentinel=False)
        combined = pd.factorize(combined * max(len(uniques), 1) + codes)[0]
    return np.sort(np.unique(combined, return_index=True)[1])


#: the columns the verdicts, crossovers and the launch floor read
ANALYSIS_COLUMNS = ("framework", "device", "backend", "implementation", "kernel", "variant",
                    "size_key", "dtype", "mode", "status", "timer", "median_s", "q1_s", "q3_s",
                    "caller_s", "caller_q1", "caller_q3", "sync_s", "bytes", "threads_key")


def narrow(df: pd.DataFrame) -> pd.DataFrame:
    """Only :data:`ANALYSIS_COLUMNS` (same index): every filter of the thousand the
    analyses make then copies 19 columns, not 75. Text columns become one object block
    (:func:`~gpubench.report.base.consolidate`): a filter then copies three blocks, not
    nineteen."""
    return consolidate(df[[c for c in ANALYSIS_COLUMNS if c in df.columns]])


def canonical_order(df: pd.DataFrame) -> pd.DataFrame:
    """Fastest first, then every key column: a total order the sections can rely on."""
    keys = ["median_s", "backend", "implementation", "threads_key", "kernel", "variant",
            "dtype", "size_key", "mode", "framework", "device"]
    return df.sort_values(keys, kind="mergesort", na_position="last")


def _cases(df: pd.DataFrame) -> list[tuple[str, str, str, pd.DataFrame]]:
    """(kernel, variant, dtype, rows) in the report's order."""
    if df.empty:
        return []
    groups = {key: g for key, g in df.groupby(["kernel", "variant", "dtype"], sort=True)}
    out = []
    for kernel in _ordered({k for k, _, _ in groups}, kernel_names()):
        spec = _kernel_spec(kernel)
        variants = _ordered({v for k, v, _ in groups if k == kernel},
                            spec.variants if spec else ())
        for variant in variants:
            dtypes = _ordered({d for k, v, d in groups if k == kernel and v == variant},
                              spec.dtypes if spec else ())
            out.extend((kernel, variant, d, groups[(kernel, variant, d)]) for d in dtypes)
    return out


def size_classes(sizes: Sequence[int]) -> list[tuple[str, int]]:
    """Small, medium and large: the smallest, middle and largest size measured."""
    s = sorted(set(int(x) for x in sizes))
    if not s:
        return []
    if len(s) == 1:
        return [("large", s[0])]
    if len(s) == 2:
        return [("small", s[0]), ("large", s[1])]
    return [("small", s[0]), ("medium", s[(len(s) - 1) // 2]), ("large", s[-1])]




def figure_queuer(figs: figures.FigureQueue) -> Callable[[Figure], str]:
    """The templates' ``queue(f)``: queue ``f`` on ``figs`` for its PNG (summary.md) and
    put nothing on the page, where the figure is drawn on demand instead."""

    def queue(f: Figure) -> str:
        img(figs, f.alt, f.fn, *f.args, cls=f.cls)
        return ""

    return queue


def figure_drawer(figs: figures.FigureQueue,
                  static: bool = False) -> Callable[[Figure], Markup]:
    """The templates' ``figure(f)``: queue ``f`` on ``figs`` through :func:`base.img`
    (the one place every figure goes through) and return its placeholder. ``static``:
    drawn as inline SVG (the first screen's figures, shown before any script runs)."""

    def figure(f: Figure) -> Markup:
        return Markup(img(figs, f.alt, f.fn, *f.args, cls=f.cls, static=static))

    return figure


def figure_picker(figs: figures.FigureQueue
                  ) -> Callable[[Sequence[Figure], str, Sequence[str]], Markup]:
    """The templates' ``figure_pick(fs, what, choices)``: a set of figures (one per
    kernel, say) shown one at a time in one place behind a selector of ``what``, each
    named by its choice; every one still gets its PNG in summary.md."""

    def pick(fs: Sequence[Figure], what: str, choices: Sequence[str]) -> Markup:
        sid = f"gpubench-pick-{len(figs.jobs):03d}"
        return Markup("".join(img(figs, f.alt, f.fn, *f.args, cls=f.cls,
                                  pick=(sid, what, choice))
                              for f, choice in zip(fs, choices, strict=True)))

    return pick
