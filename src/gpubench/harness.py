"""The measurement loop: check first, then warm up, then time until the noise is low.

Order for each case: skip if it cannot fit; build; poison the outputs; time the first
call alone (JIT compilation lands there); check against the float64 reference; warm up;
poison again; time calls one by one until the relative spread (IQR / median) is under
the target, or the time cap or sample cap is hit; check the outputs again. A wrong
result is recorded as ``wrong_result`` and is not timed further.

Two clocks. The samples above are the backend's own clock (:attr:`Backend.timer`): on a
GPU, device time on the caller's stream, which is what % of ceiling and the roofline
need but not what a Python caller waits for. On GPUs (hot mode) the harness then times
the *caller's clock*: host ``perf_counter`` around calls followed by the framework's
device-wide wait (:meth:`Backend.device_sync`), in two forms: ``sync`` (one call, then
wait) and ``pipelined`` (k calls back to back, one wait, divided by k). A CPU row's
caller clock is its wall time: the samples themselves.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpubench import energy as energy_meter
from gpubench.backends.base import Backend
from gpubench.spec import BuildContext, Case, Implementation, KernelSpec, WrongResult


@dataclass(frozen=True)
class Settings:
    """How hard to measure; every field is a config key under ``harness``."""

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
    #: energy per call (cases the plan marks): the window between two updates of the
    #: energy counter lasts at least this long, calls running back to back throughout
    energy_min_time_s: float = 0.45
    #: give up (``not measured``) when the counter does not move for this long
    energy_max_wait_s: float = 1.0


@dataclass
class Measurement:
    """What the harness learned about one (case, implementation): row fields + samples.

    ``samples`` are on the backend's own clock; ``caller`` holds the caller clocks'
    samples by name (``sync``, ``pipelined``) where they were taken."""

    fields: dict[str, Any]
    samples: list[float]
    caller: dict[str, list[float]] = field(default_factory=dict)


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


def time_samples(
    call: Callable[[], Any], backend: Backend, settings: Settings,
    clock: Callable[[], float] | None = None, cold: bool = False, hide_launch: bool = True,
    host_timed: bool = False,
) -> tuple[list[float], str, Any]:
    """Time ``call`` until converged; return (samples, stop reason, last result).

    ``cold`` flushes the device cache before every sample (outside the timed region);
    otherwise a busy kernel hides the launch latency, unless ``hide_launch`` is False
    (the launch_overhead kernel, which measures exactly that latency). ``host_timed``
    times on the host clock and a wait (:meth:`Backend.time_call` of the base class)
    for calls that are host work, such as a hand-off between frameworks.
    """
    timed = (lambda fn: Backend.time_call(backend, fn)) if host_timed else backend.time_call

    def sample() -> tuple[Any, float]:
        if cold or hide_launch:
            backend.before_sample(cold)
        return timed(call)

    return converge(sample, settings.min_samples, settings.max_samples,
                    settings.target_rel_spread, settings.max_time_s, clock)


def converge(sample: Callable[[], tuple[Any, float]], min_samples: int, max_samples: int,
             target_rel_spread: float, max_time_s: float,
             clock: Callable[[], float] | None = None) -> tuple[list[float], str, Any]:
    """Take samples until IQR / median <= the target, or the time or sample cap is hit.

    Returns (samples, stop reason, the last call's result). Every sample is kept."""
    import time

    clock = clock or time.perf_counter
    samples: list[float] = []
    started = clock()
    next_check = min_samples
    result = None
    while True:
        result, seconds = sample()
        samples.append(seconds)
        n = len(samples)
        if n >= max_samples:
            return samples, "max_samples", result
        if n >= next_check:
            # Checking every sample would cost more than tiny kernels: check at ~10% steps.
            next_check = n + max(1, n // 10)
            q1, med, q3 = np.percentile(samples, [25, 50, 75])
            if med > 0 and (q3 - q1) / med <= target_rel_spread:
                return samples, "converged", result
        if n >= min_samples and clock() - started >= max_time_s:
            return samples, "time_cap", result


def caller_sample(call: Callable[[], Any], backend: Backend, k: int = 1,
                  waits: list[float] | None = None) -> tuple[Any, float]:
    """One sample of the caller's clock: ``k`` calls back to back, then the framework's
    device-wide wait, on the host clock; seconds per call.

    Nothing is queued before the calls (no busy kernel, no flush): the launch, the
    dispatch and the wait are what a caller pays. With ``k`` = 1 this is the ``sync``
    clock; with more, ``pipelined``: the host queues call i+1 while the device runs
    call i, as a loop that does not look at its results does. ``waits`` gets the part
    of it spent in the wait after the calls had returned, per call: the device was busy
    at least that long, so it bounds the device's work from below."""
    import time

    t0 = time.perf_counter()
    result = None
    for _ in range(k):
        result = call()
    t1 = time.perf_counter()
    backend.device_sync(result)
    t2 = time.perf_counter()
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


def caller_clocks(call: Callable[[], Any], backend: Backend,
                  settings: Settings) -> tuple[dict[str, Any], dict[str, list[float]], Any]:
    """Time ``call`` on the caller's clock, sync then pipelined: (row fields, samples by
    clock, last result). The result is checked by the caller of this function."""
    backend.before_caller_clock()
    # one untimed call and wait first: whatever the device clock's set-up left behind
    # (JAX's CUPTI detached just now) is not the first sample's to pay
    caller_sample(call, backend)
    sync_waits: list[float] = []

    def sync() -> tuple[Any, float]:
        return caller_sample(call, backend, 1, sync_waits)

    sync_s, _, result = converge(sync, settings.caller_min_samples, settings.max_samples,
                                 settings.target_rel_spread, settings.caller_max_time_s)
    k = pipeline_depth(float(np.median(sync_s)), settings)
    if k == 1:
        pipe_s, waits = list(sync_s), sync_waits
    else:
        waits = []
        # one untimed batch first: k calls in flight may need what one call did not (an
        # allocator's blocks for k sets of temporaries), and a loop pays that once
        caller_sample(call, backend, k)

        def pipelined() -> tuple[Any, float]:
            return caller_sample(call, backend, k, waits)

        pipe_s, _, result = converge(pipelined, settings.caller_min_samples,
                                     settings.max_samples, settings.target_rel_spread,
                                     settings.caller_max_time_s)
    fields: dict[str, Any] = {"caller_timer": backend.caller_timer, "pipelined_k": k,
                              "pipelined_wait_s": float(np.median(waits))}
    for name, s in (("sync", sync_s), ("pipelined", pipe_s)):
        fields.update(caller_stats(name, s))
    return fields, {"sync": sync_s, "pipelined": pipe_s}, result


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

    return energy_meter.energy_window(batch, k, energy_meter.meter_for(backend.device),
                                      settings.energy_min_time_s, settings.energy_max_wait_s)


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
    """Why a case must not run (too big for the implementation or for memory), or ''."""
    if impl.max_size is not None and case.size > impl.max_size:
        return (f"{impl.name} is capped at size {impl.max_size} "
                f"(hand-written loop; see the implementation's max_size)")
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
) -> Measurement:
    """Measure one implementation on one case; never raises for the implementation's faults.

    ``energy``: read the energy per call too (after the clocks; the plan marks the
    largest size of each case)."""
    import time

    timer = backend.select_timer(spec)
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
    caller: dict[str, list[float]] = {}
    try:
        inputs = ({k: backend.to_device(v) for k, v in host_inputs.items()}
                  if spec.place_inputs else dict(host_inputs))
        outputs = {name: backend.empty(shape, dtype)
                   for name, (shape, dtype) in spec.outputs(case).items()}
        outputs = {k: v for k, v in outputs.items() if v is not None}
        ctx = BuildContext(case, backend, inputs, outputs, case.seed(settings.seed),
                           host_inputs)
        stage = "building"
        t0 = time.perf_counter()
        call = impl.builder(ctx)
        fields["setup_s"] = time.perf_counter() - t0
        for buf in outputs.values():
            backend.poison(buf)
        stage = "first call"
        # The wait a user sees (compilation, autotuning, the run) on the host clock,
        # whatever times the samples: a device timer would miss the host-side work.
        result, fields["first_call_s"] = Backend.time_call(backend, call)
        check = spec.check(case, _result_on_host(backend, result, outputs), ref)
        fields["rel_err"] = check.rel_err
        if not check.passed:
            return Measurement({**fields, "status": "wrong_result",
                                "reason": f"first call: {check.reason}"}, [])
        stage = "warm-up"
        warm_t0, warm_calls = time.perf_counter(), 0
        while warm_calls < settings.warmup or (
                time.perf_counter() - warm_t0 < settings.warmup_s):
            backend.block(call())
            warm_calls += 1
        for buf in outputs.values():
            backend.poison(buf)
        stage = "timed calls"
        samples, stop, result = time_samples(call, backend, settings, cold=mode == "cold",
                                             hide_launch=spec.hide_launch,
                                             host_timed=spec.host_timed)
        progress(f"{len(samples)} samples ({stop})")
        if backend.device == "gpu" and mode == "hot" and settings.caller_clocks:
            stage = "caller clocks"
            caller_fields, caller, result = caller_clocks(call, backend, settings)
            fields.update(caller_fields)
        if energy:
            stage = "energy"
            k = int(fields.get("pipelined_k") or
                    pipeline_depth(float(np.median(samples)), settings))
            energy_fields, last = measure_energy(call, backend, settings, k)
            fields.update(energy_fields)
            result = result if last is None else last
        # the last call of the last clock is checked: a result that only goes wrong when
        # calls run back to back (a buffer reused too early) fails here
        check = spec.check(case, _result_on_host(backend, result, outputs), ref)
        fields["rel_err"] = max(fields["rel_err"], check.rel_err) if check.passed else check.rel_err
        if not check.passed:
            return Measurement({**fields, "status": "wrong_result",
                                "reason": f"after timed calls: {check.reason}"}, samples,
                               caller)
    except MemoryError as exc:
        return Measurement({**fields, "status": "skipped",
                            "reason": f"out of memory while {stage}: {exc}"}, [])
    except WrongResult as exc:
        return Measurement({**fields, "status": "wrong_result", "reason": f"{stage}: {exc}"}, [])
    except ImportError as exc:
        # a helper framework the implementation needs (interop's producer) is absent here
        return Measurement({**fields, "status": "unavailable",
                            "reason": f"{stage}: {type(exc).__name__}: {exc}"[:500]}, [])
    except Exception as exc:  # noqa: BLE001 - one failing implementation must not stop the rest
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        status = "skipped" if _is_oom(exc) else "error"
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
    return Measurement(fields, samples, caller)


def _is_oom(exc: BaseException) -> bool:
    # "out_of_memory": Numba CUDA's CudaAPIError names only CUDA_ERROR_OUT_OF_MEMORY
    text = f"{type(exc).__name__} {exc}".lower()
    return any(s in text for s in ("out of memory", "outofmemory", "out_of_memory",
                                   "resource_exhausted"))
