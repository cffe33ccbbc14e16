"""Comparisons the host's conditions may have decided: steps measured on a busy host.

Every row records the host's load, CPU steal and the other processes' CPU while its
worker ran (:mod:`gpubench.hostload`). A step measured while other work competed for
the CPUs can be several times slower than on a quiet host, and every verdict,
speedup and crossover between it and another step then shows the host, not the
frameworks. The rule (docs/report.md, "Host conditions"): a step is *busy* when any of
its measured rows was taken while

- other processes used more than :data:`OTHER_CPU_PCT` % of all CPUs' time, or
- the 1-minute load average, at the worker's start or end, exceeded
  :data:`LOAD_PER_CORE` times the host's cores, or
- a hypervisor stole more than :data:`STEAL_PCT` % of the CPUs' time;

and every comparison between a busy step and another step (busy or not: two busy
periods are not known to be alike) is flagged, in one notice naming the busy steps and
the command that measures them again. GPU steps follow the same rule: the verdicts rank the caller's
clock, which on a GPU includes the Python dispatch on the host, and small GPU calls are
dispatch-bound. Rows without the columns (files of schema 6 and older) are never busy.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpubench.results import numbers

#: other processes' share of all CPUs' time above which a row's host was busy: half a
#: core on a 2-core machine, one spinning process on a 4-core one
OTHER_CPU_PCT = 25.0
#: the 1-minute load average, per core, above which a row's host was busy (the load at
#: the worker's end counts its own threads, up to one per core)
LOAD_PER_CORE = 2.0
#: the share of CPU time a hypervisor took above which a row's host was busy
STEAL_PCT = 10.0

#: the command that measures steps again (docs/running.md, "Re-running one framework"),
#: followed by each step's :data:`RAW` file; ``results`` is the run's results_dir
RERUN = ".venv/bin/gpubench run -- --forcerun"
RAW = "results/raw/{backend}.csv"

#: a backend name that can go into a command as it is
_PLAIN = re.compile(r"^[A-Za-z0-9_.+-]+$")


@dataclass(frozen=True)
class BusyStep:
    """A step measured on a busy host: what exceeded the rule, and the steps its rows
    are compared with (those that measured a case it measured)."""

    backend: str
    why: str
    compared: tuple[str, ...]
    busy_too: tuple[str, ...]

    def text(self) -> str:
        """The step's part of the notice."""
        quiet = [b for b in self.compared if b not in self.busy_too]
        parts = []
        if quiet:
            parts.append(f"{', '.join(quiet)} (measured on a quiet host)")
        if self.busy_too:
            parts.append(f"{', '.join(self.busy_too)} (busy too)")
        return f"{self.backend} ({self.why}), compared with {' and '.join(parts)}"


@dataclass(frozen=True)
class Notice:
    """The one notice near the top of the page and summary.md: every busy step, what
    it is compared with, and one command that measures them all again."""

    steps: tuple[BusyStep, ...]

    @property
    def text(self) -> str:
        differ = any(set(s.compared) - set(s.busy_too) for s in self.steps)
        names = [s.backend for s in self.steps]
        them = names[0] if len(names) == 1 else "them"
        return (f"Host conditions{' differ' if differ else ''}: measured on a busy host: "
                f"{'; '.join(s.text() for s in self.steps)}. These comparisons may show "
                f"the host, not the frameworks; re-run {them} on a quiet host")

    @property
    def command(self) -> str:
        """The command that measures the busy steps again; a name a shell would not
        take as it is is left out of it (it is named in :attr:`text`)."""
        plain = [s.backend for s in self.steps if _PLAIN.match(s.backend)]
        return f"{RERUN} " + " ".join(RAW.format(backend=b) for b in plain) if plain else ""


def busy_rows(df: pd.DataFrame) -> pd.Series:
    """Per measured row (status ok), whether its host was busy by the rule; rows
    without the host columns are not."""
    if df.empty or "host_other_cpu_pct" not in df.columns:
        return pd.Series(False, index=df.index)
    other, steal = numbers(df, "host_other_cpu_pct"), numbers(df, "host_steal_pct")
    load = np.fmax(numbers(df, "host_load_start"), numbers(df, "host_load_end"))
    cores = numbers(df, "cpu_cores")
    with np.errstate(invalid="ignore"):
        busy = (other > OTHER_CPU_PCT) | (steal > STEAL_PCT) | (load > LOAD_PER_CORE * cores)
    return pd.Series(busy & (df["status"] == "ok").to_numpy(), index=df.index)


def _why(rows: pd.DataFrame) -> str:
    """What the worst of a step's busy rows exceeded, in words."""
    out = []
    other = np.nanmax(numbers(rows, "host_other_cpu_pct"), initial=-math.inf)
    if other > OTHER_CPU_PCT:
        out.append(f"other processes used up to {other:.0f} % of the CPUs' time")
    load = np.nanmax(np.fmax(numbers(rows, "host_load_start"),
                             numbers(rows, "host_load_end")), initial=-math.inf)
    cores = np.nanmax(numbers(rows, "cpu_cores"), initial=-math.inf)
    if cores > 0 and load > LOAD_PER_CORE * cores:
        out.append(f"load average up to {load:.1f} on {cores:.0f} cores")
    steal = np.nanmax(numbers(rows, "host_steal_pct"), initial=-math.inf)
    if steal > STEAL_PCT:
        out.append(f"the hypervisor stole up to {steal:.0f} % of the CPUs' time")
    return "; ".join(out)


def busy_steps(df: pd.DataFrame) -> list[BusyStep]:
    """The steps measured on a busy host, each with the steps it is compared with,
    in backend order; empty where no step was busy."""
    busy = busy_rows(df)
    if not busy.any():
        return []
    ok = df[df["status"] == "ok"]
    cases = ok.groupby("backend")[["kernel", "variant", "dtype", "size"]].apply(
        lambda g: set(map(tuple, g.astype(str).to_numpy())))
    names = sorted(set(df.loc[busy, "backend"]))
    out = []
    for backend in names:
        mine = cases.get(backend, set())
        compared = tuple(b for b in sorted(cases.index) if b != backend and mine & cases[b])
        if not compared:
            continue
        out.append(BusyStep(backend, _why(df[busy & (df["backend"] == backend)]), compared,
                            tuple(b for b in compared if b in names)))
    return out


def notice(df: pd.DataFrame) -> Notice | None:
    """The notice on the steps measured on a busy host (:func:`busy_steps`), or None."""
    steps = busy_steps(df)
    return Notice(tuple(steps)) if steps else None
