"""The measurement loop: check first, then warm up, then time until the noise is low.

Order for each case: skip if it cannot fit; build; poison the outputs; time the first
call alone (JIT compilation lands there); check against the float64 reference; warm up;
poison again; time calls one by one until the relative spread (IQR / median) is under
the target, or the time cap or sample cap is hit; check the outputs again. A wrong
result is recorded as ``wrong_result`` and is not timed further.

Two clocks. The samples above are the backend's own clock (its ``facts.timer``): on a
GPU, device time on the caller's stream, which is what % of ceiling and the roofline
need but not what a Python caller waits for. On GPUs (hot mode) the harness then times
the *caller's clock*: host ``perf_counter`` around calls followed by the framework's
device-wide wait (:meth:`Backend.device_sync`), in two forms: ``sync`` (one call, then
wait) and ``pipelined`` (k calls back to back, one wait, divided by k). A CPU row's
caller clock is its wall time: the samples themselves.

The caller's clock is taken in rounds (:class:`CallerClock`), each a sync part and a
pipelined part; the device clock's samples fall between the first two rounds, and a
round's pipelined part starts at least ``caller_round_gap_s`` after the one before
ended. So a row's pipelined samples span its time instead of ~15 ms in one piece, and a
transient of the host or the device (in which every sample of a row could read 3x)
hits one round of it. A row whose pipelined median still disagrees with its own sync
median, or with its device time and its implementation's smaller sizes, gets more
rounds, further apart (:func:`recheck_reason`). Every sample of every round is kept
(calls that only fill a gap are not samples, as warm-up calls are not).
"""

from __future__ import annotations

import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpubench import energy as energy_meter
from gpubench import memory as memory_meter
from gpubench import occupancy
from gpubench.backends.base import Backend
from gpubench.hostpar import blas_in_caller
from gpubench.ledger import Ledger
from gpubench.spec import (
    BuildContext,
    Case,
    Implementation,
    KernelSpec,
    NotOffered,
    WrongResult,
)
from gpubench.timing import Rule, Settings, host_time, sample_until, warm_up
from gpubench.workloads import workload_class

__all__ = [
    "CallerClock",
    "Measurement",
    "Settings",
    "cache_snapshot",
    "cache_state",
    "caller_clocks",
    "caller_sample",
    "caller_stats",
    "measure",
    "measure_energy",
    "measure_energy_again",
    "memory_short",
    "pipeline_depth",
    "recheck_reason",
    "skip_reason",
    "summarize",
    "time_samples",
]


@dataclass
class Measurement:
    """What the harness learned about one (case, implementation): row fields + samples.

    ``samples`` are on the backend's own clock; ``caller`` holds the caller clocks'
    samples by name (``sync``, ``pipelined``) where they were taken."""

    fields: dict[str, Any]
    samples: list[float]
    caller: dict[str, list[float]] = field(default_factory=dict)
    #: what the step's log should say about the row beyond its fields (a re-measurement)
    notes: list[str] = field(default_factory=list)
    #: an ok row's call, its inputs alive (the worker's spread rounds may sample it
    #: again, :mod:`gpubench.spread`; dropped otherwise)
    call: Callable[[], Any] | None = None
    #: ... and its build context: the inputs and outputs the call may reach only through
    #: raw pointers (CUDA Python), which must live as long as the call is kept
    context: Any = None


def summarize(samples: list[float]) -> dict[str, float]:
    arr = np.asarray(samples, dtype=np.float64)
    q1, med, q3 = np.percentile(arr, [25, 50, 75])
    return {
        "samples": len(arr),
        "median_s": float(med),
        "min_s": float(arr.min()),
        "max_s": float(arr.max()),
        "q1_s": float(q1),
        "q3_s": float(q3),
        "iqr_s": float(q3 - q1),
        "mean_s": float(arr.mean()),
        "rel_spread": float((q3 - q1) / med) if med > 0 else math.inf,
    }


def before_sample(backend: Backend, cold: bool) -> None:
    """Prepare the device for one timed sample, outside the timed region: a cold sample
    starts from an evicted cache (:meth:`Backend.flush_cache`), a hot one behind a busy
    kernel that hides the launch (:meth:`Backend.hide_launch`)."""
    if cold:
        backend.flush_cache()
    else:
        backend.hide_launch()


def time_samples(
    call: Callable[[], Any], backend: Backend, settings: Settings,
    clock: Callable[[], float] | None = None, cold: bool = False, hide_launch: bool = True,
    host_timed: bool = False,
    timer: Callable[[Callable[[], Any]], tuple[Any, float]] | None = None,
) -> tuple[list[float], str, Any]:
    """Time ``call`` until converged; return (samples, stop reason, last result).

    ``cold`` flushes the device cache before every sample (outside the timed region);
    otherwise a busy kernel hides the launch latency, unless ``hide_launch`` is False
    (the launch_overhead kernel, which measures exactly that latency). ``host_timed``
    times on the host clock and a wait (:func:`gpubench.timing.host_time`)
    for calls that are host work, such as a hand-off between frameworks. ``timer``:
    the backend's timer for this kernel (:meth:`Backend.device_timer`; default
    :meth:`Backend.time_call`).
    """
    device = timer or backend.time_call

    def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
        # host work is timed on the host clock whatever the backend's own clock is
        return host_time(fn, backend.block) if host_timed else device(fn)

    def sample() -> tuple[Any, float]:
        if cold or hide_launch:
            before_sample(backend, cold)
        return timed(call)

    got = sample_until(sample, settings.rule(), clock)
    return got.samples, got.stop, got.result


def caller_sample(call: Callable[[], Any], backend: Backend, k: int = 1,
                  waits: list[float] | None = None,
                  clock: Callable[[], float] = time.perf_counter) -> tuple[Any, float]:
    """One sample of the caller's clock: ``k`` calls back to back, then the framework's
    device-wide wait, on the host clock; seconds per call.

    Nothing is queued before the calls (no busy kernel, no flush): the launch, the
    dispatch and the wait are what a caller pays. With ``k`` = 1 this is the ``sync``
    clock; with more, ``pipelined``: the host queues call i+1 while the device runs
    call i, as a loop that does not look at its results does. ``waits`` gets the part
    of it spent in the wait after the calls had returned, per call: the device was busy
    at least that long, so it bounds the device's work from below."""
    t0 = clock()
    result = None
    for _ in range(k):
        result = call()
    t1 = clock()
    backend.device_sync(result)
    t2 = clock()
    if waits is not None:
        waits.append((t2 - t1) / k)
    return result, (t2 - t0) / k


def pipeline_depth(sync_median_s: float, settings: Settings) -> int:
    """Calls per pipelined sample: enough for one sample to last ``pipeline_batch_s``.

    A call that alone lasts that long gets k = 1: its dispatch and wait are already a
    small part of it, and the pipelined clock is then the sync clock's samples."""
    if not sync_median_s > 0:
        return 1
    k = math.ceil(settings.pipeline_batch_s / sync_median_s)
    return int(min(max(k, 1), settings.pipeline_max_k))


def recheck_reason(pipelined_s: float, sync_s: float, device_s: float | None,
                   floor_s: float | None, factor: float) -> str:
    """Why a row's pipelined median is far off what it should be near ('' if it is not).

    Pipelining can only hide a call's wait, so the pipelined median should not exceed
    the sync one; and a call costs about the larger of its device work and the dispatch
    floor of its implementation (``floor_s``: the least pipelined median of the
    implementation's earlier sizes of the same kernel, variant and dtype; None at its
    first size), with the two overlapping when pipelined, so at most twice that. A
    median more than ``factor`` times either bound met a transient in most of its
    samples (or the call does work neither bound sees: then more rounds change
    nothing and cost a little)."""
    if not (factor > 0 and math.isfinite(factor) and pipelined_s > 0):
        return ""
    if sync_s > 0 and pipelined_s > factor * sync_s:
        return (f"pipelined median {pipelined_s * 1e6:.4g} us > {factor:g} x its sync "
                f"median {sync_s * 1e6:.4g} us")
    if floor_s is not None and floor_s > 0:
        device = device_s if device_s is not None and device_s > 0 else 0.0
        bound = max(device, floor_s)
        if pipelined_s > factor * bound:
            return (f"pipelined median {pipelined_s * 1e6:.4g} us > {factor:g} x "
                    f"max(device median {device * 1e6:.4g} us, the implementation's "
                    f"floor {floor_s * 1e6:.4g} us at smaller sizes)")
    return ""


def _take(sample: Callable[[], tuple[Any, float]], samples: list[float], least: int,
          most_s: float, target: float, max_samples: int,
          clock: Callable[[], float]) -> Any:
    """One part of a round: append at least ``least`` samples, then stop once this
    clock's samples so far meet the spread target or the part has lasted ``most_s`` (or
    the clock holds ``max_samples``, though never before its ``least``). Returns the
    last call's result. The one loop (:func:`gpubench.timing.sample_until`)."""
    cap = max(int(max_samples), len(samples) + max(1, int(least)))
    return sample_until(sample, Rule(least, cap, target, most_s), clock,
                        into=samples).result


class CallerClock:
    """The caller's clocks of one row, sync and pipelined, taken in rounds.

    A round is a sync part (at least ``least`` samples, then until the spread target or
    ``caller_max_time_s / caller_rounds``), then, from the second round on, untimed
    calls and waits until ``gap`` seconds have passed since the last round's samples
    ended (the caller's loop keeps running, so the GPU does not idle and clock down),
    then a pipelined part (at least ``least`` samples, then until the spread target or
    the same time). k is fixed from the first round's sync samples, after which one
    untimed batch of k calls runs (k calls in flight may need what one did not: an
    allocator's blocks for k sets of temporaries). With k = 1 the pipelined samples are
    the sync ones, and the gap comes before them. Every sample is kept, in the order
    taken; the row's statistics are those of all of them."""

    def __init__(self, call: Callable[[], Any], backend: Backend, settings: Settings,
                 clock: Callable[[], float] | None = None) -> None:
        self.call, self.backend, self.settings = call, backend, settings
        self.clock = clock or time.perf_counter
        self.planned = max(1, int(settings.caller_rounds))
        self.least = max(1, math.ceil(settings.caller_min_samples / self.planned))
        self.part_s = settings.caller_max_time_s / self.planned
        self.rounds = 0
        self.k = 0
        self.sync: list[float] = []
        self.pipe: list[float] = []
        self.sync_waits: list[float] = []
        self.pipe_waits: list[float] = []
        self.result: Any = None
        #: when the last round's samples ended (the next keeps its gap from there)
        self.last_end: float | None = None
        #: why the row got rounds beyond the planned ones ('' if it did not)
        self.recheck = ""
        #: ... and why it still looked off after them ('' if it did not)
        self.still = ""

    def settle(self) -> None:
        """Undo what the device clock set up (JAX's CUPTI), then one untimed call and
        wait, and more for as long as the backend asks: what that left behind is not
        the next sample's to pay."""
        settle_s = self.backend.before_caller_clock() or 0.0

        def untimed() -> None:
            self.result, _ = caller_sample(self.call, self.backend, clock=self.clock)

        warm_up(untimed, 1, float(settle_s), self.clock)

    def fill(self, gap_s: float) -> None:
        """Untimed calls and waits until ``gap_s`` has passed since the last round; none
        where one call lasts that long (k = 1 calls of ``gap_s`` or more: their samples
        already span that much time each)."""
        if self.last_end is None or (self.k == 1 and np.median(self.sync) >= gap_s):
            return
        while self.clock() - self.last_end < gap_s:
            self.result, _ = caller_sample(self.call, self.backend, clock=self.clock)

    def warm_sync(self) -> None:
        """Untimed sync calls for ``caller_settle_s``: what the last part (k calls in
        flight, the device clock) left the host and the framework in is not the sync
        samples' to pay (warm-up, not samples: none is dropped). None once a call is
        known to last that long by itself (k = 1 and a sync median of ``caller_settle_s``
        or more: each of its samples is settled by the one before)."""
        if self.k == 1 and self.sync and np.median(self.sync) >= self.settings.caller_settle_s:
            return
        def settle() -> None:
            self.result, _ = caller_sample(self.call, self.backend, clock=self.clock)

        warm_up(settle, 0, self.settings.caller_settle_s, self.clock)

    def take_round(self, gap_s: float) -> None:
        s = self.settings

        def sync() -> tuple[Any, float]:
            return caller_sample(self.call, self.backend, 1, self.sync_waits, self.clock)

        self.warm_sync()

        if self.k == 1:
            # the sync samples are the pipelined ones: the gap goes before them
            self.fill(gap_s)
        self.result = _take(sync, self.sync, self.least, self.part_s,
                            s.target_rel_spread, s.max_samples, self.clock)
        if not self.k:
            self.k = pipeline_depth(float(np.median(self.sync)), s)
            if self.k > 1:
                caller_sample(self.call, self.backend, self.k, clock=self.clock)
        if self.k > 1:
            def pipelined() -> tuple[Any, float]:
                return caller_sample(self.call, self.backend, self.k, self.pipe_waits,
                                     self.clock)

            self.fill(gap_s)
            self.result = _take(pipelined, self.pipe, self.least, self.part_s,
                                s.target_rel_spread, s.max_samples, self.clock)
        self.rounds += 1
        self.last_end = self.clock()

    @property
    def pipelined(self) -> list[float]:
        return self.pipe if self.k > 1 else self.sync

    def run(self, interlude: Callable[[], None] | None = None,
            device_s: Callable[[], float | None] | float | None = None,
            floor_s: float | None = None) -> None:
        """Every round: the planned ones (``interlude``, the device clock's sampling,
        between the first two), then extra ones, ``caller_recheck_gap_s`` apart, while
        :func:`recheck_reason` finds the pipelined median off and ``caller_max_rounds``
        allows. ``device_s``: the row's device median (or a function giving it once
        the interlude has run); ``floor_s``: see :func:`recheck_reason`."""
        s = self.settings
        self.settle()
        self.take_round(s.caller_round_gap_s)
        if interlude is not None:
            interlude()
            self.settle()
        while self.rounds < self.planned:
            self.take_round(s.caller_round_gap_s)
        device = device_s() if callable(device_s) else device_s

        def off() -> str:
            return recheck_reason(float(np.median(self.pipelined)),
                                  float(np.median(self.sync)), device, floor_s,
                                  s.caller_recheck_factor)

        why = off()
        while why and self.rounds < s.caller_max_rounds:
            self.recheck = self.recheck or why
            self.take_round(s.caller_recheck_gap_s)
            why = off()
        self.still = why if self.recheck else ""

    def fields(self) -> dict[str, Any]:
        waits = self.pipe_waits if self.k > 1 else self.sync_waits
        out: dict[str, Any] = {"caller_timer": self.backend.facts.caller_timer,
                               "pipelined_k": self.k,
                               "pipelined_wait_s": float(np.median(waits)),
                               "caller_rounds": self.rounds}
        out.update(caller_stats("sync", self.sync))
        out.update(caller_stats("pipelined", self.pipelined))
        return out

    def samples(self) -> dict[str, list[float]]:
        return {"sync": list(self.sync), "pipelined": list(self.pipelined)}

    def note(self) -> str:
        """The log's line on a re-measured row ('' if it was not)."""
        if not self.recheck:
            return ""
        return (f"caller's clock re-measured, {self.rounds} rounds: {self.recheck}"
                + (f"; after them {self.still}" if self.still else "; not after them"))


def caller_clocks(call: Callable[[], Any], backend: Backend, settings: Settings,
                  device_s: float | None = None, floor_s: float | None = None,
                  clock: Callable[[], float] | None = None,
                  ) -> tuple[dict[str, Any], dict[str, list[float]], Any]:
    """Time ``call`` on the caller's clock, sync and pipelined, in rounds back to back
    (:class:`CallerClock`; :func:`measure` puts the device clock between the first two):
    (row fields, samples by clock, last result). The result is checked by the caller of
    this function."""
    cc = CallerClock(call, backend, settings, clock)
    cc.run(device_s=device_s, floor_s=floor_s)
    return cc.fields(), cc.samples(), cc.result


def caller_stats(clock: str, samples: list[float]) -> dict[str, float]:
    """``<clock>_samples``, ``_median_s``, ``_q1_s``, ``_q3_s`` of one caller clock."""
    q1, med, q3 = np.percentile(np.asarray(samples, dtype=np.float64), [25, 50, 75])
    return {f"{clock}_samples": len(samples), f"{clock}_median_s": float(med),
            f"{clock}_q1_s": float(q1), f"{clock}_q3_s": float(q3)}


def measure_energy(call: Callable[[], Any], backend: Backend, settings: Settings,
                   k: int) -> tuple[dict[str, Any], Any]:
    """Energy per call on the device's counter (:mod:`gpubench.energy`): batches of
    ``k`` calls, each batch then the device-wide wait, as a caller's loop runs them.
    Returns (row fields, last result or None)."""
    def batch() -> Any:
        result = None
        for _ in range(k):
            result = call()
        backend.device_sync(result)
        return result

    # a caller's loop runs without the device clock's profiler (JAX's CUPTI, left
    # attached by a row timed on the device only)
    warm_up(batch, 0, float(backend.before_caller_clock() or 0.0))
    return energy_meter.energy_reading(batch, k, energy_meter.meter_for(backend.device),
                                       settings.energy_min_time_s, settings.energy_max_wait_s)


def build_context(spec: KernelSpec, case: Case, backend: Backend, settings: Settings,
                  host_inputs: dict[str, np.ndarray]) -> BuildContext:
    """What an implementation's builder gets: the inputs placed on the device (where the
    kernel places them), its empty outputs and the case's seed. Shared by the measurement
    and the energy reading that builds the fastest implementation again."""
    inputs = ({k: backend.to_device(v) for k, v in host_inputs.items()}
              if spec.place_inputs else dict(host_inputs))
    outputs = {name: backend.empty(shape, dtype)
               for name, (shape, dtype) in spec.outputs(case).items()}
    outputs = {k: v for k, v in outputs.items() if v is not None}
    return BuildContext(case, backend, inputs, outputs, case.seed(settings.seed), host_inputs)


def measure_energy_again(spec: KernelSpec, impl: Implementation, case: Case,
                         backend: Backend, settings: Settings,
                         host_inputs: dict[str, np.ndarray], ref: Any,
                         k: int) -> dict[str, Any]:
    """The energy per call of an implementation measured earlier (``energy: best``: the
    fastest of a case, known only once all were measured): build it again, warm it up,
    read the energy in batches of ``k`` calls (:func:`measure_energy`) and check the last
    result. Returns the energy fields; a failure is ``not measured`` with the reason,
    never an exception (the row's timings stand)."""
    stage = "placing inputs on the device"
    try:
        ctx = build_context(spec, case, backend, settings, host_inputs)
        outputs = ctx.outputs
        stage = "building"
        call = impl.builder(ctx)
        stage = "warm-up"
        warm_up(lambda: backend.block(call()), max(1, settings.warmup), settings.warmup_s)
        for buf in outputs.values():
            backend.poison(buf)
        stage = "energy"
        fields, last = measure_energy(call, backend, settings, max(1, int(k)))
        if last is not None:
            check = _check(spec, case, _result_on_host(backend, last, outputs), ref)
            if not check.passed:
                return energy_meter.not_measured(
                    f"the call built again for the energy reading failed its check: "
                    f"{check.reason}")
        return fields
    except Exception as exc:  # noqa: BLE001 - the row's timings stand without energy
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return energy_meter.not_measured(
            f"{stage} again for the energy reading: {tb}"[:300])


def cache_snapshot(dirs: Iterable[Path | str]) -> tuple[int, int] | None:
    """(files, newest modification of a folder in ns) under those of ``dirs`` that
    exist, or None if none does. A cache adds a file by creating it, or a temporary
    one renamed into place, which changes its folder's modification time too; no file
    is opened or stat'ed, only listed (about 4 ms for 5,000 files in 50 folders on this
    project's CI machine). Taken before a row's build and after its first call, outside
    every timed region."""
    found = False
    files = newest = 0
    stack = [os.fspath(d) for d in dirs]
    while stack:
        path = stack.pop()
        try:
            newest = max(newest, os.stat(path).st_mtime_ns)
            listing = os.scandir(path)
        except OSError:  # absent, not a folder, unreadable, removed meanwhile
            continue
        found = True
        with listing:
            for entry in listing:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        files += 1
                except OSError:
                    continue
    return (files, newest) if found else None


def cache_state(before: tuple[int, int] | None, after: tuple[int, int] | None) -> str:
    """The ``cache_state`` of a row from :func:`cache_snapshot` before its build and
    after its first call: ``cold`` (the cache gained files, or a folder of it changed:
    the row compiled and stored), ``warm`` (it existed and gained nothing: a compile, if
    any, was served from it, or not stored), ``none`` (no cache folder, or one that
    stayed empty)."""
    if after is None or (before is None and after[0] == 0):
        return "none"
    if before is None or after[0] > before[0] or after[1] > before[1]:
        return "cold"
    return "warm"


#: the error reasons whose tracebacks this process has logged
_TRACEBACKS_LOGGED: set[str] = set()


def log_traceback(reason: str, exc: BaseException) -> None:
    """The whole traceback of an ``error`` row on stderr (the step's log), once per
    distinct reason in a process: the row keeps one line, and a failure inside a
    framework (a cache folder it could not make) needs the frames to
    be traced."""
    if reason in _TRACEBACKS_LOGGED:
        return
    _TRACEBACKS_LOGGED.add(reason)
    uid = getattr(os, "getuid", lambda: "?")()
    frames = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    print(f"traceback of the error '{reason[:200]}' (uid {uid}):\n{frames.rstrip()}",
          file=sys.stderr, flush=True)


def _cache_dirs(backend: Backend, implementation: str) -> list[Path]:
    """The cache folders to watch for a row: none where the implementation never
    touches them (:meth:`~gpubench.backends.facts.Facts.uses_compile_cache`); a backend
    that cannot say whether it does is watched, one that cannot name its folders has
    none."""
    try:
        uses = bool(backend.facts.uses_compile_cache(implementation))
    except Exception:  # noqa: BLE001 - cannot say: watch its folders
        uses = True
    try:
        return [Path(d) for d in backend.compile_cache_dirs()] if uses else []
    except Exception:  # noqa: BLE001 - a framework that cannot say has none we can watch
        return []


def _check(spec: Any, case: Any, got: Any, ref: Any) -> Any:
    """``spec.check``, its host BLAS kept in this thread (no BLAS threads left spinning
    on the cores of the samples that follow: :func:`gpubench.hostpar.blas_in_caller`)."""
    with blas_in_caller():
        return spec.check(case, got, ref)


def _result_on_host(backend: Backend, result: Any, outputs: dict[str, Any]) -> Any:
    # the whole device first: work a call sent to another stream must be finished
    # before its output is read (the timing gates judge such a call, not the check)
    backend.device_sync(result)
    if result is None:
        if len(outputs) != 1:
            raise RuntimeError("implementation returned nothing and the kernel has "
                               f"{len(outputs)} output buffers")
        result = next(iter(outputs.values()))
    return backend.to_host_for_check(result)


def skip_reason(spec: KernelSpec, impl: Implementation, case: Case, backend: Backend,
                settings: Settings) -> str:
    """Why a case must not run (no path on this device, too big for the implementation
    or for memory), or ''."""
    unoffered = spec.unoffered(case, backend.device)
    if unoffered:
        return unoffered
    if impl.max_size is not None and case.size > impl.max_size:
        return (f"{impl.name} is capped at size {impl.max_size} "
                f"(hand-written loop; see the implementation's max_size)")
    return memory_short(spec, case, backend, settings)


def memory_short(spec: KernelSpec, case: Case, backend: Backend, settings: Settings) -> str:
    """Why the case does not fit the memory free where the backend's arrays live, or
    ''. Apart from :func:`skip_reason` because memory is what a worker can free."""
    need = spec.memory_bytes(case) * settings.memory_headroom
    free = backend.free_memory()
    if free is not None and need > free:
        return (f"needs about {need / 2**30:.2f} GiB with headroom, "
                f"{free / 2**30:.2f} GiB free on {backend.device}")
    return ""


def measure(
    spec: KernelSpec,
    impl: Implementation,
    case: Case,
    backend: Backend,
    settings: Settings,
    host_inputs: dict[str, np.ndarray],
    ref: Any,
    progress: Callable[[str], None] = lambda msg: None,
    mode: str = "hot",
    energy: bool = False,
    caller_floor: float | None = None,
    ledger: Ledger | None = None,
) -> Measurement:
    """Measure one implementation on one case; never raises for the implementation's faults.

    ``energy``: read the energy per call too (after the clocks; the plan marks the
    largest size of each case, with ``energy: largest`` or ``all``; ``best`` reads one
    implementation per case later, :func:`measure_energy_again`). ``caller_floor``: the
    least pipelined median of this implementation's earlier sizes of the same kernel,
    variant and dtype (the worker keeps it), which the caller's clock is rechecked
    against (:func:`recheck_reason`). ``ledger``: gets the row's seconds by stage."""
    ledger = ledger if ledger is not None else Ledger()
    timer, timed = backend.device_timer(spec)
    fields: dict[str, Any] = {
        "bytes": spec.bytes_moved(case),
        "flops": spec.flops(case),
        "tolerance": spec.tolerance(case),
        "timer": "perf_counter+sync" if spec.host_timed else timer,
        "mode": mode,
    }
    reason = skip_reason(spec, impl, case, backend, settings)
    if reason:
        return Measurement({**fields, "status": "skipped", "reason": reason}, [])
    stage = "placing inputs on the device"
    ledger.enter("placing inputs")
    caller: dict[str, list[float]] = {}
    notes: list[str] = []
    try:
        # what the framework holds before the inputs are placed (gpubench.memory)
        memory_base = memory_meter.baseline(backend)
        ctx = build_context(spec, case, backend, settings, host_inputs)
        outputs = ctx.outputs
        # whether the framework's persistent compilation cache served this row's build
        # and first call or gained from them; read outside the timed regions
        cache_dirs = _cache_dirs(backend, impl.name)
        ledger.enter("cache scans")
        cache_before = cache_snapshot(cache_dirs)
        try:
            stage = "building"
            ledger.enter("building")
            t0 = time.perf_counter()
            call = impl.builder(ctx)
            fields["setup_s"] = time.perf_counter() - t0
            for buf in outputs.values():
                backend.poison(buf)
            stage = "first call"
            ledger.enter("first call")
            # The wait a user sees (compilation, autotuning, the run) on the host clock,
            # whatever times the samples: a device timer would miss the host-side work.
            result, fields["first_call_s"] = host_time(call, backend.block)
        finally:
            ledger.enter("cache scans")
            fields["cache_state"] = ("none" if not cache_dirs else
                                     cache_state(cache_before, cache_snapshot(cache_dirs)))
        fields.update(occupancy.fields(ctx))
        if spec.report_class and workload_class(spec.report_class).precision:
            fields["matmul_precision"] = backend.matmul_precision(case.dtype)
        ledger.enter("checks")
        check = _check(spec, case, _result_on_host(backend, result, outputs), ref)
        fields["rel_err"] = check.rel_err
        if not check.passed:
            return Measurement({**fields, "status": "wrong_result",
                                "reason": f"first call: {check.reason}"}, [])
        stage = "warm-up"
        ledger.enter("warm-up")
        warm_up(lambda: backend.block(call()), settings.warmup, settings.warmup_s)
        for buf in outputs.values():
            backend.poison(buf)
        device: dict[str, Any] = {}

        def device_clock(then: str = "timed calls") -> None:
            nonlocal stage
            stage = "timed calls"
            ledger.enter("device clock")
            device["samples"], device["stop"], device["result"] = time_samples(
                call, backend, settings, cold=mode == "cold", hide_launch=spec.hide_launch,
                host_timed=spec.host_timed, timer=timed)
            progress(f"{len(device['samples'])} samples ({device['stop']})")
            stage = then
            ledger.enter(then if then != "timed calls" else "device clock")

        if backend.device == "gpu" and mode == "hot" and settings.caller_clocks:
            # the device clock's samples between the caller's first two rounds (with one
            # round, before it, as they always were)
            cc = CallerClock(call, backend, settings)
            spread = cc.planned > 1 and not backend.facts.device_clock_apart
            if not spread:
                device_clock()
            stage = "caller clocks"
            ledger.enter("caller clocks")
            cc.run(interlude=(lambda: device_clock("caller clocks")) if spread else None,
                   device_s=lambda: float(np.median(device["samples"])),
                   floor_s=caller_floor)
            fields.update(cc.fields())
            caller, result = cc.samples(), cc.result
            if cc.note():
                notes.append(cc.note())
        else:
            device_clock()
            result = device["result"]
        samples, stop = device["samples"], device["stop"]
        if energy:
            stage = "energy"
            ledger.enter("energy")
            k = int(fields.get("pipelined_k") or
                    pipeline_depth(float(np.median(samples)), settings))
            energy_fields, last = measure_energy(call, backend, settings, k)
            fields.update(energy_fields)
            result = result if last is None else last
        # the last call of the last clock is checked: a result that only goes wrong when
        # calls run back to back (a buffer reused too early) fails here
        ledger.enter("checks")
        check = _check(spec, case, _result_on_host(backend, result, outputs), ref)
        fields["rel_err"] = max(fields["rel_err"], check.rel_err) if check.passed else check.rel_err
        if not check.passed:
            return Measurement({**fields, "status": "wrong_result",
                                "reason": f"after timed calls: {check.reason}"}, samples,
                               caller, notes)
        # peak device memory: one more call, untimed; the last result let go first, so
        # a call that returns a new array does not count it twice
        stage = "memory"
        ledger.enter("memory")
        data = memory_meter.row_data(spec.place_inputs, host_inputs, outputs, result)
        result = None
        fields.update(memory_meter.peak_fields(call, backend, data, memory_base))
    except MemoryError as exc:
        return Measurement({**fields, "status": "skipped",
                            "reason": f"out of memory while {stage}: {exc}"}, [])
    except WrongResult as exc:
        return Measurement({**fields, "status": "wrong_result", "reason": f"{stage}: {exc}"}, [])
    except NotOffered as exc:
        return Measurement({**fields, "status": "skipped", "reason": f"{stage}: {exc}"}, [])
    except ImportError as exc:
        # a helper framework the implementation needs (interop's producer) is absent here
        return Measurement({**fields, "status": "unavailable",
                            "reason": f"{stage}: {type(exc).__name__}: {exc}"[:500]}, [])
    except Exception as exc:  # noqa: BLE001 - one failing implementation must not stop the rest
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        status = "skipped" if _is_oom(exc) else "error"
        if status == "error":
            log_traceback(f"{stage}: {tb}", exc)
        return Measurement({**fields, "status": status, "reason": f"{stage}: {tb}"[:500]}, [])
    stats = summarize(samples)
    med = stats["median_s"]
    fields.update(stats)
    if backend.device == "cpu":
        # a CPU row's caller clock is its wall time: the samples themselves
        fields.update(caller_stats("sync", samples), **caller_stats("pipelined", samples),
                      pipelined_k=1, caller_timer=fields["timer"])
    fields.update({
        "status": "ok",
        "reason": "",
        "stop_reason": stop,
        "gbps": fields["bytes"] / med / 1e9 if med > 0 and fields["bytes"] else math.nan,
        "gflops": fields["flops"] / med / 1e9 if med > 0 and fields["flops"] else math.nan,
    })
    return Measurement(fields, samples, caller, notes, call, ctx)


def _is_oom(exc: BaseException) -> bool:
    # "out_of_memory": Numba CUDA's CudaAPIError names only CUDA_ERROR_OUT_OF_MEMORY
    text = f"{type(exc).__name__} {exc}".lower()
    return any(s in text for s in ("out of memory", "outofmemory", "out_of_memory",
                                   "resource_exhausted"))
