"""Spread rounds: every short row's caller-clock samples spread over seconds of its step.

Why. On the H100 machine the host's speed changes in regimes lasting
0.5-4 s (``tools/host_regimes.py``): one process timed NumPy ``add`` on
1,024 elements at 0.55-0.65 µs and 1.0-1.2 µs by turns, and CuPy's launch floor at 7.5-8
and 10.5-11.5 µs, with no steal time and whether pinned to a core or not. A row whose
samples all fall within ~30 ms (its rounds) reads one regime, so three runs of the same
configuration disagreed by up to 3x on host-bound rows while their device times agreed.

So after a worker has measured its items, the rows it kept (ok, hot, a call of at most
``caller_spread_max_call_s``, inputs of at most ``caller_spread_max_bytes``, all of them
within ``caller_spread_held_fraction`` of the free memory) are sampled again in
``caller_spread_rounds`` rounds spread evenly over ``caller_spread_s`` seconds: row i of
n in round r is sampled at ``t0 + (r * n + i) * slot``, untimed calls of the row filling
any time before (the device never idles and clocks down), one untimed call settling what
the row before left. Each round adds ``ceil(4 * first / rounds)`` samples (``first``:
the row's samples before), as many as fit in its slot and at least one, so the spread
samples weigh up to four fifths of the row's statistic. GPU rows add sync samples (one
call, then the wait; in the first half of the slot, right after its untimed sync calls)
and pipelined samples (k calls, one wait, the row's k); CPU rows add samples of their
own clock.
All of a step's kept rows share the window, so rows compared within a step met the same
regimes. Every sample is kept; the row's statistics are those of all of them.

Between the items too (:meth:`Spread.tick`, every ``caller_spread_interval_s``): one
round of every row kept so far, so an early row's rounds span the rest of its step; a
row with all its rounds is done there and lets its inputs go, and the window after the
items takes only the rounds the rows still lack, slot after slot (it lasts
``caller_spread_s`` times the share of rounds they lack on average). A step's rows kept
in its last 30 s of items met regimes 14-23 % faster than the same rows in other runs
on the H100 machine (evidence/caller-clock-repeatability), longer than a 20 s window rides out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpubench.backends.base import Backend
from gpubench.harness import caller_sample
from gpubench.timing import Settings, host_time

#: the spread samples' share of a row's samples: 4 -> four fifths (the first ones,
#: taken within ~30 ms, read one regime: with a third of the weight they can still
#: carry the median where the slow regime lasts two thirds of the time)
WEIGHT = 4
#: the phase stops taking rounds once it has lasted this many times caller_spread_s
#: (rows whose own samples take longer than their slots; what was taken is kept)
OVERRUN = 3.0


@dataclass
class Kept:
    """A row kept for the spread rounds: its call (with its inputs alive), its clock."""

    index: int
    call: Callable[[], Any]
    #: calls per sample: the row's pipelined k on a GPU, 1 on a CPU
    k: int
    gpu: bool
    #: the samples the row's caller statistic is taken over: a GPU row's pipelined
    #: samples (its sync ones where k = 1), a CPU row's own (wall-clock) samples
    first: list[float]
    nbytes: int
    new: list[float] = field(default_factory=list)
    rounds: int = 0
    #: a GPU row's sync samples before (k > 1; where k = 1 they are ``first``) and from
    #: the rounds: one call, then the wait, right after the untimed sync calls of its slot
    first_sync: list[float] = field(default_factory=list)
    new_sync: list[float] = field(default_factory=list)
    #: what keeps the call's buffers alive (its build context: CUDA Python's calls hold
    #: raw device pointers, freed with the context's allocations)
    alive: Any = None
    #: why the row's rounds stopped ('' if they did not): its spread samples are dropped
    error: str = ""
    #: the clock at its first spread round's start and at its last round's end
    span: tuple[float | None, float] = (None, 0.0)


def keep_reason(fields: dict[str, Any], mode: str, nbytes: int, settings: Settings) -> str:
    """Why a measured row is not spread ('' if it is): only ok hot rows whose call is
    short (host-bound work, where regimes show; a long call's samples span time
    already) and whose inputs can stay resident."""
    if settings.caller_spread_s <= 0 or settings.caller_spread_rounds < 1:
        return "spread rounds off"
    if fields.get("status") != "ok" or mode != "hot":
        return "not an ok hot row"
    med = fields.get("pipelined_median_s", fields.get("median_s"))
    if not isinstance(med, float) or not med > 0:
        return "no caller median"
    if med > settings.caller_spread_max_call_s:
        return "call longer than caller_spread_max_call_s"
    if nbytes > settings.caller_spread_max_bytes:
        return "inputs larger than caller_spread_max_bytes"
    return ""


class Spread:
    """The rows a worker keeps for its spread rounds, and the rounds themselves."""

    def __init__(self, backend: Backend, settings: Settings,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.backend, self.settings, self.clock = backend, settings, clock
        self.kept: list[Kept] = []
        #: bytes of inputs held for the kept rows; a row that would pass :attr:`cap`
        #: in all is not kept
        self.held = 0
        #: the most bytes held (:meth:`held_cap`, read at the first row offered)
        self.cap: int | None = None
        #: when :meth:`tick` last took a round (None: it has not yet)
        self.last_tick: float | None = None

    def held_cap(self) -> int:
        """The bytes the kept rows may hold in all: ``caller_spread_held_fraction`` of
        the memory free where the backend's arrays live when first asked (the H100's
        80 GB, not a fixed 1 GiB that the first kernel's rows filled), or
        4 x ``caller_spread_max_bytes`` where the backend cannot tell."""
        if self.cap is None:
            s = self.settings
            try:
                free = self.backend.free_memory()
            except Exception:  # noqa: BLE001 - unknown free memory: the fixed cap
                free = None
            self.cap = (int(s.caller_spread_held_fraction * free) if free
                        else 4 * s.caller_spread_max_bytes)
        return self.cap

    def release(self, done: Callable[[Kept], None]) -> int:
        """Let every kept row go, ``done(row)`` for each with the rounds it had: a later
        item needs the memory their inputs hold. Returns how many were let go."""
        rows = list(self.kept)
        for row in rows:
            self._finish(row, done)
        return len(rows)

    def keep(self, index: int, call: Callable[[], Any], fields: dict[str, Any],
             first: list[float], mode: str, nbytes: int,
             first_sync: list[float] | None = None, alive: Any = None) -> bool:
        """Keep a measured row for the rounds if :func:`keep_reason` allows and the
        inputs held stay within bounds. ``first_sync``: a GPU row's sync samples (k > 1);
        ``alive``: what must live as long as the call (its build context)."""
        s = self.settings
        if keep_reason(fields, mode, nbytes, s) or not first:
            return False
        if self.held + nbytes > self.held_cap():
            return False
        gpu = self.backend.device == "gpu"
        k = int(fields.get("pipelined_k") or 1) if gpu else 1
        self.kept.append(Kept(index, call, max(1, k), gpu, list(first), nbytes,
                              first_sync=list(first_sync or []) if gpu and k > 1 else [],
                              alive=alive))
        self.held += nbytes
        return True

    def _sample(self, row: Kept, k: int | None = None) -> float:
        """One sample of the row on its clock: the caller's, k calls (the row's, or
        ``k``) then the device-wide wait, per call (GPU, :func:`caller_sample`); one call
        on the backend's own clock (CPU)."""
        if row.gpu:
            return caller_sample(row.call, self.backend, row.k if k is None else k,
                                 clock=self.clock)[1]
        return self.backend.time_call(row.call)[1]

    def _part(self, row: Kept, into: list[float], per: int, end: float,
              k: int | None = None) -> None:
        """At least one sample, then up to ``per`` while the clock is before ``end``."""
        into.append(self._sample(row, k))
        for _ in range(per - 1):
            if self.clock() >= end:
                break
            into.append(self._sample(row, k))

    def _untimed(self, row: Kept) -> None:
        if row.gpu:
            caller_sample(row.call, self.backend, clock=self.clock)
        else:
            host_time(row.call, self.backend.block)

    def _settle(self) -> None:
        """Whatever the last item's device clock left set up (JAX's CUPTI after a cold
        row) goes before the first spread sample, with the untimed calls it asks for."""
        settle_s = float(self.backend.before_caller_clock() or 0.0)
        if settle_s > 0 and self.kept:
            end = self.clock() + settle_s
            while self.clock() < end:
                self._untimed(self.kept[0])

    def _round(self, row: Kept, at: float, slot: float) -> None:
        """One round of a row: untimed calls until ``at``, then its samples within
        ``slot`` (at least one of each clock): the sync ones first, settled by the
        untimed sync calls just made. A call that raises ends the row's rounds: its
        spread samples are dropped and it keeps what it had."""
        s = self.settings
        try:
            self._untimed(row)
            while self.clock() < at:
                self._untimed(row)
            begin = max(at, self.clock())
            if row.first_sync:
                self._part(row, row.new_sync,
                           math.ceil(WEIGHT * len(row.first_sync) / s.caller_spread_rounds),
                           begin + slot / 2, k=1)
            self._part(row, row.new, math.ceil(WEIGHT * len(row.first) / s.caller_spread_rounds),
                       begin + slot)
            row.rounds += 1
            row.span = (row.span[0] if row.span[0] is not None else begin, self.clock())
        except Exception as exc:  # noqa: BLE001 - a failing row keeps its first samples
            row.error = f"{type(exc).__name__}: {exc}"[:300]
            row.new.clear()
            row.new_sync.clear()
            row.rounds = 0

    def _finish(self, row: Kept, done: Callable[[Kept], None]) -> None:
        self.kept.remove(row)
        self.held -= row.nbytes
        done(row)

    def due(self) -> bool:
        """Whether :meth:`tick` would take a round now (the first call with rows kept
        starts the interval)."""
        if self.settings.caller_spread_interval_s <= 0 or not self.kept:
            return False
        now = self.clock()
        if self.last_tick is None:
            self.last_tick = now
        return now - self.last_tick >= self.settings.caller_spread_interval_s

    def tick(self, done: Callable[[Kept], None]) -> float:
        """Between a step's items: once ``caller_spread_interval_s`` has passed since the
        last round (or the first row was kept), one round of every kept row; a row that
        has its ``caller_spread_rounds`` (or failed) is done, ``done(row)``, and lets its
        inputs go. So an early row's rounds span minutes of its step, not only the
        window after it, through the host's slower regimes (one lasted 30 s and more on
        the H100). Returns the seconds taken (0 when no round was due)."""
        s = self.settings
        if not self.due():
            return 0.0
        t0 = self.clock()
        self._settle()
        rows = list(self.kept)
        slot = s.caller_spread_s / (s.caller_spread_rounds * len(rows))
        for row in rows:
            self._round(row, self.clock(), slot)
            if row.error or row.rounds >= s.caller_spread_rounds:
                self._finish(row, done)
        self.last_tick = self.clock()
        return self.last_tick - t0

    def run(self, done: Callable[[Kept], None]) -> float:
        """The rounds the kept rows still lack, after the step's items; ``done(row)`` for
        each at the end (``row.new`` holds its spread samples). Returns the phase's
        seconds. A row whose call raises is left with what it had (its ``new`` samples
        so far are dropped).

        Each row's round gets the slot it gets between the items
        (``caller_spread_s / (caller_spread_rounds * rows)``), and the slots follow each
        other: round r holds the rows that still lack that many rounds, so a row lacking
        every round has them spread over the whole window, one lacking a few joins its
        last rounds. The window lasts ``caller_spread_s`` times the share of rounds the
        rows lack on average, not at most: one row kept in the step's last seconds no
        longer costs the whole ``caller_spread_s`` (20 s a GPU step)."""
        s = self.settings
        if not self.kept:
            return 0.0
        self._settle()
        rows, t0 = list(self.kept), self.clock()
        total = int(s.caller_spread_rounds)
        lacking = [max(0, total - row.rounds) for row in rows]
        rounds = max(lacking)
        slot = s.caller_spread_s / (total * len(rows))
        window = slot * sum(lacking)
        at = t0
        for r in range(rounds):
            if self.clock() - t0 > OVERRUN * window:
                break
            for row, lacks in zip(rows, lacking, strict=True):
                if row.error or r < rounds - lacks:
                    continue
                self._round(row, at, slot)
                at += slot
        for row in rows:
            self._finish(row, done)
        return self.clock() - t0
