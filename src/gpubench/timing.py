"""How everything in gpubench is timed: one settings class, one sampling loop with one
stopping rule, and the few primitives a measurement is built from.

As nvbench builds a measurement from simple parts (a GPU timer, a CPU timer, an L2 flush,
a blocking kernel) with a single stopping rule, so does gpubench:

* :class:`Settings`: how hard to measure. The single-device harness reads it from the
  config's ``harness`` (merged with ``gpu_harness`` for GPU steps), the MPI jobs from
  ``mpi.harness`` over the MPI defaults :data:`MPI` (fewer samples, a shorter cap):
  two configurations of one class.
* :class:`Rule` and :func:`sample_until`: the sampling loop. Take samples until
  IQR / median is at most the target (checked at ~10% steps past the fewest samples),
  or ``max_time_s`` of *wall time* has passed in the loop (after the fewest samples),
  or the most samples are held. The cap is the time spent measuring, never the sum of
  the samples: a microsecond call whose loop costs a barrier and a reduction a pass
  would otherwise loop for hours. Every sample is kept.
* :func:`warm_up`: untimed calls, a count then a time (agreed across ranks too).
* ``agree``: the hook that makes ranks stop together. It is given each pass's (sample,
  time measuring so far) and returns the values the decision is taken on; the MPI jobs
  pass :func:`mpi_agree` (the maximum over ranks in one reduction), so every rank sees
  the same samples and takes the same decision.
* Primitives a backend provides: :func:`host_time` (the host clock around a call and a
  wait), :class:`EventPair` (a device's start and end events on the caller's stream,
  written once and parametrised by CuPy, PyTorch, Numba and CUDA Python), plus the
  backend's device-wide wait and L2 flush (:class:`~gpubench.backends.base.Backend`);
  each framework's pair is made in its own package (``gpubench.backends.<framework>``),
  which its backend and its ceiling measurements share; :func:`median_time` is the
  ceilings' fixed-count timer (the loop with min = max).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

#: a sample function: run once, return (result, seconds)
Sample = Callable[[], tuple[Any, float]]
#: the agreement hook: (seconds, seconds measuring so far) -> the values to decide on
Agree = Callable[[float, float], tuple[float, float]]


@dataclass(frozen=True)
class Settings:
    """How hard to measure; every field is a config key under ``harness`` (and the first
    six, with :data:`MPI`'s defaults, under ``mpi.harness``)."""

    warmup: int = 2
    #: and keep warming up until this long has passed (clocks of a GPU left idle)
    warmup_s: float = 0.0
    min_samples: int = 5
    max_samples: int = 1000
    target_rel_spread: float = 0.05
    max_time_s: float = 1.0
    seed: int = 20261122
    #: a case runs only if memory_bytes * this <= free memory
    memory_headroom: float = 1.5
    #: time GPU cases on the caller's clock too (sync and pipelined; hot mode only)
    caller_clocks: bool = True
    #: fewest samples of each caller clock: a two-sided Mann-Whitney test at p < 0.01
    #: cannot tell two rows of 5 samples apart however far apart they are; 6 can
    caller_min_samples: int = 6
    #: stop a caller clock once this many seconds have passed (after the fewest samples)
    caller_max_time_s: float = 0.015
    #: a pipelined sample is k calls lasting about this long (k = 1 for longer calls)
    pipeline_batch_s: float = 0.002
    #: most calls in one pipelined sample
    pipeline_max_k: int = 256
    #: the caller's clocks come in this many rounds (a sync part, then a pipelined
    #: part), each with ceil(caller_min_samples / rounds) samples or more and at most
    #: caller_max_time_s / rounds of pipelined sampling; the device clock's samples are
    #: taken between the first two rounds
    caller_rounds: int = 3
    #: least time between two rounds' pipelined parts: the next round's sync samples,
    #: then untimed calls and waits if those took less (the GPU never idles)
    caller_round_gap_s: float = 0.005
    #: a row whose pipelined median is more than this many times its sync median, or
    #: (past its implementation's first size here) the larger of its device median and
    #: the least pipelined median of the implementation's earlier sizes, gets more rounds
    caller_recheck_factor: float = 1.5
    #: ... up to this many rounds in all (then it stands as measured)
    caller_max_rounds: int = 7
    #: ... with at least this long between their pipelined parts: further from the
    #: state the first rounds met
    caller_recheck_gap_s: float = 0.03
    #: untimed sync calls (call, then wait) for at least this long before each round's
    #: sync samples: on the H100 the first 10-15 sync calls after the pipelined part or
    #: the device clock took 1.5-2x the later ones (JAX: 110-145 against 63-70 µs)
    caller_settle_s: float = 0.002
    #: after a worker's items: its short rows sampled again in caller_spread_rounds
    #: rounds spread evenly over this many seconds (0: off). The host's speed changes
    #: in regimes of seconds; samples within one row's ~30 ms read one regime
    #: (gpubench.spread)
    caller_spread_s: float = 0.0
    caller_spread_rounds: int = 24
    #: ... taken between the step's items too, one round of every kept row each time
    #: this many seconds have passed (0: only after the items), so a row's rounds span
    #: the rest of its step; the host's slower regimes lasted 30 s and more
    caller_spread_interval_s: float = 5.0
    #: ... rows whose caller median is at most this long (longer calls are device-bound,
    #: and their samples span time already)
    caller_spread_max_call_s: float = 0.001
    #: ... and whose bytes moved are at most this many (their inputs stay resident until
    #: the rounds)
    caller_spread_max_bytes: int = 256 * 2**20
    #: ... while the kept rows' bytes stay within this share of the memory free where
    #: the backend's arrays live (read at the first row kept; 4 x caller_spread_max_bytes
    #: where the backend cannot tell). A fixed 1 GiB left most host-bound GPU rows of
    #: 2^20 elements and more unspread, and those moved 2-3x more between runs
    caller_spread_held_fraction: float = 0.25
    #: energy per call (cases the plan marks): the window between two updates of the
    #: energy counter lasts at least this long, calls running back to back throughout
    energy_min_time_s: float = 0.45
    #: give up (``not measured``) when the counter does not move for this long
    energy_max_wait_s: float = 1.0

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None,
                    defaults: Mapping[str, Any] | None = None) -> Settings:
        """Settings from a config mapping over ``defaults`` (e.g. :data:`MPI`); keys
        that are not settings (``case_timeout_s``, ...) are someone else's and ignored."""
        known = {f.name for f in fields(cls)}
        merged = {**(defaults or {}), **(cfg or {})}
        return cls(**{k: v for k, v in merged.items() if k in known})

    @classmethod
    def mpi(cls, **overrides: Any) -> Settings:
        """The MPI jobs' configuration: :data:`MPI`'s defaults, then ``overrides``."""
        return cls.from_config(overrides, MPI)

    def rule(self) -> Rule:
        """The stopping rule of the backend's clock (device samples, MPI samples)."""
        return Rule(self.min_samples, self.max_samples, self.target_rel_spread,
                    self.max_time_s)


#: the MPI jobs' defaults (config ``mpi.harness`` overrides them): every sample costs a
#: barrier and a reduction, and a step runs every job at several rank counts
MPI: dict[str, Any] = {"max_samples": 200, "max_time_s": 0.5}


@dataclass(frozen=True)
class Rule:
    """When :func:`sample_until` stops: ``min_samples`` new samples at least; then at
    ``max_samples`` held (a hard cap, counting samples passed in), once IQR / median <=
    ``target_rel_spread``, or once ``max_time_s`` of wall time has passed in the loop."""

    min_samples: int
    max_samples: int
    target_rel_spread: float
    max_time_s: float


@dataclass
class Sampled:
    """What :func:`sample_until` took: every sample (in order), why it stopped
    (``converged``, ``time_cap`` or ``max_samples``) and the last call's result."""

    samples: list[float]
    stop: str
    result: Any


def rel_spread(samples: list[float]) -> float:
    """IQR / median (inf where the median is not positive)."""
    q1, med, q3 = np.percentile(samples, [25, 50, 75])
    return float((q3 - q1) / med) if med > 0 else math.inf


def sample_until(sample: Sample, rule: Rule, clock: Callable[[], float] | None = None,
                 agree: Agree | None = None, into: list[float] | None = None) -> Sampled:
    """Call ``sample`` until ``rule`` says stop (the one sampling loop of gpubench).

    ``clock`` measures the loop's wall time (default ``time.perf_counter``; the MPI
    jobs pass ``MPI.Wtime``). ``agree`` turns each pass's (sample, seconds measuring)
    into the values kept and decided on (:func:`mpi_agree`: the slowest rank's).
    ``into``: samples taken earlier, which count towards the spread and the most
    samples and are appended to in place (the caller's clock's rounds)."""
    clock = clock or time.perf_counter
    samples = [] if into is None else into
    n0 = len(samples)
    least = n0 + max(1, int(rule.min_samples))
    started = clock()
    next_check = least
    while True:
        result, seconds = sample()
        elapsed = clock() - started
        if agree is not None:
            seconds, elapsed = agree(seconds, elapsed)
        samples.append(float(seconds))
        n = len(samples)
        if n >= rule.max_samples:
            return Sampled(samples, "max_samples", result)
        if n < least:
            continue
        if n >= next_check:
            # checking every sample would cost more than tiny calls: at ~10% steps
            next_check = n + max(1, n // 10)
            if rel_spread(samples) <= rule.target_rel_spread:
                return Sampled(samples, "converged", result)
        if elapsed >= rule.max_time_s:
            return Sampled(samples, "time_cap", result)


def warm_up(call: Callable[[], Any], count: int, least_s: float = 0.0,
            clock: Callable[[], float] | None = None,
            agree: Callable[[float], float] | None = None) -> int:
    """Untimed calls: ``count`` of them, then more until ``least_s`` seconds have passed
    since the first began (a GPU left idle needs time, not a call count, to reach its
    clocks). The clock is read once before the calls and once after each call past
    ``count`` (never with ``least_s`` <= 0). ``agree`` turns this process's seconds into
    the ones decided on (MPI: the slowest rank's, so collectives inside ``call`` match).
    Returns the number of calls."""
    clock = clock or time.perf_counter
    calls = 0
    t0 = clock()

    def short() -> bool:
        elapsed = clock() - t0
        return (agree(elapsed) if agree is not None else elapsed) < least_s

    while calls < count or (least_s > 0 and short()):
        call()
        calls += 1
    return calls


def mpi_agree(comm: Any, op: Any) -> Agree:
    """The MPI hook of :func:`sample_until`: one ``Allreduce`` (``op``, the maximum)
    carries (sample, seconds measuring) to every rank, so all keep the slowest rank's
    sample and stop together."""
    mine, reduced = np.zeros(2), np.zeros(2)

    def agree(seconds: float, elapsed: float) -> tuple[float, float]:
        mine[0], mine[1] = seconds, elapsed
        comm.Allreduce(mine, reduced, op=op)
        return float(reduced[0]), float(reduced[1])

    return agree


# -- primitives -----------------------------------------------------------------------

def host_time(fn: Callable[[], Any], wait: Callable[[Any], None],
              clock: Callable[[], float] = time.perf_counter) -> tuple[Any, float]:
    """The host clock around one call and ``wait`` on its result: (result, seconds).
    The CPU timer, and on GPUs the timer of host work (a first call's compile, a
    hand-off between frameworks)."""
    t0 = clock()
    result = fn()
    wait(result)
    return result, clock() - t0


def _record(ev: Any) -> None:
    ev.record()


def _synchronize(ev: Any) -> None:
    ev.synchronize()


@dataclass
class EventPair:
    """A device's two timing events on the caller's stream, and how this framework
    records one, waits for one, reads the seconds between them and asks whether one has
    been reached. CuPy's and PyTorch's events take the defaults (``ev.record()``,
    ``ev.synchronize()``); Numba's and CUDA Python's pass their own."""

    start: Any
    end: Any
    elapsed_s: Callable[[Any, Any], float]
    done: Callable[[Any], bool] = lambda ev: False
    record: Callable[[Any], None] = _record
    wait: Callable[[Any], None] = _synchronize

    def time(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """Events around one call, wait on the end event: (result, device seconds)."""
        self.record(self.start)
        result = fn()
        self.record(self.end)
        self.wait(self.end)
        return result, self.elapsed_s(self.start, self.end)


def median_time(timed: Callable[[Callable[[], Any]], tuple[Any, float]],
                fn: Callable[[], Any], repeats: int) -> float:
    """One untimed call, then the median of ``repeats`` samples of ``timed(fn)``
    (:func:`host_time` or :meth:`EventPair.time`): the ceilings' fixed-count timer."""
    timed(fn)
    sampled = sample_until(lambda: timed(fn), Rule(repeats, repeats, 0.0, math.inf))
    return float(np.median(sampled.samples))
