"""Run one backend's benchmarks in watched worker processes.

The parent never imports a framework. It plans every (implementation, case, threads)
item, starts a worker process per thread count (pinned to that many cores), and reads
the worker's results line by line. A worker that crashes, is killed for memory or hangs
past the case time-out costs exactly one ``error`` row: the parent records it and starts
a fresh worker at the next item. So every planned item ends as exactly one row.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gpubench import hostload, provenance, results
from gpubench.backends import (
    BASELINE_FRAMEWORK,
    backend_classes,
    load_backend,
    load_plugins,
    split_backend_id,
)
from gpubench.backends.base import pin_threads_env
from gpubench.energy import nvml_handle
from gpubench.procs import describe_exit
from gpubench.progress import StepProgress, progress_path
from gpubench.spec import get_kernel, implementations, kernel_names
from gpubench.worker import case_key

SRC_DIR = Path(__file__).resolve().parents[1]
#: what every framework's own environment holds besides its framework
#: (workflow/envs/pip/common.txt)
COMMON_FRAMEWORKS = frozenset({"numpy"})

def compile_cache_vars() -> dict[str, str]:
    """Where each framework keeps its persistent compilation cache, as a subfolder of the
    step's compile cache folder (config key ``compile_cache_dir``): every registered
    backend's :attr:`~gpubench.backends.facts.Facts.compile_cache_vars`."""
    out: dict[str, str] = {}
    for cls in backend_classes().values():
        out.update(cls.facts.compile_cache_vars)
    return out


def step_environment(compile_cache: str | os.PathLike[str] | None,
                     environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a step's workers get on top of ``environ`` (default: this process's
    environment): each framework's persistent compilation cache in a subfolder of
    ``compile_cache`` (None: the frameworks' own defaults) with the settings that go
    with it, and the settings every step of a framework gets (its backend classes'
    ``compile_cache_vars``, ``compile_cache_settings``, ``step_settings``). A variable
    already set in ``environ`` is the user's choice and is left as it is."""
    environ = os.environ if environ is None else environ
    classes = backend_classes().values()
    wanted = {k: v for cls in classes for k, v in cls.facts.step_settings.items()}
    if compile_cache is not None:
        root = Path(compile_cache).resolve()
        wanted.update({var: str(root / sub) for var, sub in compile_cache_vars().items()})
        wanted.update({k: v for cls in classes
                       for k, v in cls.facts.compile_cache_settings.items()})
    return {k: v for k, v in wanted.items() if k not in environ}


def worker_environment(step_env: Mapping[str, str], threads: int,
                       environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A worker's variables: ``environ`` (default: this process's), the step's
    (:func:`step_environment`), the thread caps, the package on PYTHONPATH. Without
    ``$GPUBENCH_UNROLL``: a step's CUDA C rows launch the unroll factors in the code,
    which is what their rows stand for (the variable is for scripts comparing them)."""
    from gpubench.cuda_launch import UNROLL_ENV

    environ = os.environ if environ is None else environ
    env = {**environ, **step_env, **pin_threads_env(threads),
           "PYTHONPATH": os.pathsep.join(
               [str(SRC_DIR)] + [p for p in [environ.get("PYTHONPATH")] if p])}
    env.pop(UNROLL_ENV, None)
    return env


@dataclass(frozen=True)
class PlanItem:
    """One future row: an implementation on a case at a thread count."""

    kernel: str
    variant: str
    size: int
    dtype: str
    implementation: str
    threads: int
    params: dict[str, Any] = field(default_factory=dict)
    mode: str = "hot"
    #: read the energy per call too (see :func:`mark_energy`)
    energy: bool = False
    #: one of a case's implementations at its largest size, of which the worker reads
    #: the fastest one's energy once all are measured (``energy: best``)
    energy_best: bool = False


#: a step stops its timed work this share of its job's runtime before SLURM would end
#: the job, and at least MIN_MARGIN_S before (at most half the runtime)
MARGIN_SHARE = 0.1
MIN_MARGIN_S = 30.0


def time_limit_margin_s(limit_s: float) -> float:
    """Seconds a step keeps, before its job's time limit ``limit_s``, to stop its
    workers and write every row: the larger of 10 % and 30 s, scaled to the runtime
    because planning and writing the rows of a bigger step take longer, and a loaded
    node is slower at both (a 6 s margin was seen to leave too little: writing took
    5 s). At most half the runtime, so a 1-minute job still measures. 0 without a
    limit."""
    if limit_s <= 0:
        return 0.0
    return min(max(MARGIN_SHARE * limit_s, MIN_MARGIN_S), 0.5 * limit_s)


def thread_counts(spec: list[Any], cores: int) -> list[int]:
    """Resolve the config's thread list (ints, 'max', or 'sweep' = powers of two) to ints."""
    counts: set[int] = set()
    for item in spec:
        if item == "max":
            counts.add(cores)
        elif item == "sweep":
            t = 1
            while t < cores:
                counts.add(t)
                t *= 2
            counts.add(cores)
        else:
            counts.add(min(int(item), cores))
    return sorted(counts)


def plan(backend_id: str, config: Mapping[str, Any], cores: int) -> list[PlanItem]:
    """Every item the backend's step must produce a row for, in run order."""
    load_plugins()
    framework, device = split_backend_id(backend_id)
    sweep = thread_counts(config.get("threads", [1, "max"]), cores)
    cold_ok = device == "gpu" and load_backend(backend_id).facts.supports_cold
    items: list[PlanItem] = []
    for name, kcfg, impls in configured_implementations(backend_id, config):
        spec = get_kernel(name)
        impls = [impl for impl in impls if not missing_needs(impl, config)]
        modes = ["hot"]
        if cold_ok:
            modes = list(kcfg.get("gpu_modes") or config.get("gpu_modes", ["hot", "cold"]))
        sizes = kcfg.get("gpu_sizes") if device == "gpu" else None
        sizes = list(sizes or kcfg.get("sizes") or spec.default_sizes)
        # the baseline's extra sizes (where GPU sizes would otherwise meet no NumPy row)
        # run at the step's full thread count only: the fastest NumPy row is the baseline
        extra = ({int(s) for s in kcfg.get("baseline_sizes") or ()} - set(sizes)
                 if framework == BASELINE_FRAMEWORK else set())
        cases = spec.cases(sorted({*sizes, *extra}), kcfg.get("dtypes"),
                           kcfg.get("variants"), kcfg.get("params"))
        for case in cases:
            for impl in impls:
                if not impl.supports(case)[0]:
                    continue
                counts = sweep if (device == "cpu" and impl.parallel) else (
                    [1] if device == "cpu" else [cores])
                if case.size in extra or spec.unoffered(case, device):
                    # a case with no path here is one skipped row, not one per count
                    counts = [max(counts)]
                cold_max = config.get("gpu_cold_max_bytes")
                case_modes = [m for m in modes if m != "cold" or cold_max is None
                              or spec.bytes_moved(case) <= cold_max]
                for t in counts:
                    for mode in case_modes:
                        items.append(PlanItem(case.kernel, case.variant, case.size,
                                              case.dtype, impl.name, t, dict(case.params),
                                              mode))
    items = mark_energy(items, str(config.get("energy", DEFAULT_ENERGY)))
    # One worker per thread count: group by threads, keep run order inside a group.
    return sorted(items, key=lambda it: it.threads)


def missing_needs(impl: Any, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The other frameworks ``impl`` imports that its step's environment cannot hold:
    with ``environments: {mode: venv}`` each framework's venv holds that framework and
    NumPy alone, so such an implementation could only give ``unavailable`` rows and the
    plan leaves it out (:func:`left_out` says which); system and conda environments
    may hold them all, and a missing one there is a real ``unavailable`` row."""
    if (config.get("environments") or {}).get("mode") != "venv":
        return ()
    return tuple(n for n in impl.needs if n != impl.framework and n not in COMMON_FRAMEWORKS)


def configured_implementations(backend_id: str, config: Mapping[str, Any]
                               ) -> list[tuple[str, Mapping[str, Any], list[Any]]]:
    """(kernel, its config, the backend's implementations the config chooses) of each
    enabled kernel, in run order: what :func:`plan` and :func:`left_out` walk."""
    load_plugins()
    framework, device = split_backend_id(backend_id)
    out = []
    for name in kernel_names():
        kcfg = config.get("kernels", {}).get(name)
        if kcfg is None or not kcfg.get("enabled", True):
            continue
        impls = implementations(name, framework, device)
        chosen = (kcfg.get("implementations") or {}).get(backend_id)
        if chosen:
            impls = [impl for impl in impls if impl.name in chosen]
        out.append((name, kcfg, impls))
    return out


def left_out(backend_id: str, config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(kernel, implementation, missing frameworks) of each configured implementation
    the plan leaves out for :func:`missing_needs`, for the suite record."""
    return [(name, impl.name, ", ".join(missing))
            for name, _kcfg, impls in configured_implementations(backend_id, config)
            for impl in impls if (missing := missing_needs(impl, config))]


#: the config key ``energy`` where it is not set
DEFAULT_ENERGY = "best"


def mark_energy(items: list[PlanItem], which: str) -> list[PlanItem]:
    """Mark the hot items whose energy per call is read.

    ``best`` (the default): at the largest size of each kernel, variant, dtype,
    parameters and thread count, every hot implementation is a candidate
    (``energy_best``) and the worker reads the energy of the one with the lowest device
    median once it has measured them all (:mod:`gpubench.worker`): the figure the report
    uses, for a fraction of the time. A case with one candidate has it read as it is
    measured (``energy``), as ``largest`` would. ``largest``: every implementation at the largest
    size of each kernel, variant, dtype, implementation and thread count (where the
    device is busiest and a window of calls costs least per row). ``all``: every hot
    item. ``off``: none."""
    if which == "off":
        return items
    if which == "best":
        def case(it: PlanItem) -> tuple[Any, ...]:
            return (*case_key(it)[:2], *case_key(it)[3:], it.threads)
    else:
        def case(it: PlanItem) -> tuple[Any, ...]:
            return it.kernel, it.variant, it.dtype, it.implementation, it.threads

    top: dict[tuple[Any, ...], int] = {}
    for it in items:
        top[case(it)] = max(top.get(case(it), it.size), it.size)
    if which == "best":
        def candidate(it: PlanItem) -> bool:
            return it.mode == "hot" and it.size == top[case(it)]

        count: dict[tuple[Any, ...], int] = {}
        for it in items:
            if candidate(it):
                count[case(it)] = count.get(case(it), 0) + 1
        # a case's only candidate is read as it is measured: nothing to compare it with
        return [replace(it, energy=count[case(it)] == 1, energy_best=count[case(it)] > 1)
                if candidate(it) else it for it in items]
    return [replace(it, energy=it.mode == "hot" and (
        which == "all" or it.size == top[case(it)])) for it in items]


def gpu_telemetry() -> dict[str, Any]:
    """SM clock, temperature and throttle reasons of the step's GPU through NVML.

    Keys contain ``@`` where the caller puts ``start`` or ``end``. Empty without NVML.
    The GPU is the first one in CUDA_VISIBLE_DEVICES (by index or UUID), else index 0.
    """
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no telemetry
        return {}
    try:
        handle = nvml_handle(pynvml)
        reasons = pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle)
        names = [name[len("nvmlClocksEventReason"):] for name in dir(pynvml)
                 if name.startswith("nvmlClocksEventReason")
                 and name not in ("nvmlClocksEventReasonNone", "nvmlClocksEventReasonAll")
                 and isinstance(getattr(pynvml, name), int)
                 and reasons & getattr(pynvml, name)]
        return {
            "gpu_sm_clock_mhz_@": float(pynvml.nvmlDeviceGetClockInfo(
                handle, pynvml.NVML_CLOCK_SM)),
            "gpu_temp_c_@": float(pynvml.nvmlDeviceGetTemperature(
                handle, pynvml.NVML_TEMPERATURE_GPU)),
            "gpu_throttle_@": "+".join(sorted(set(names))) or "none",
        }
    except Exception as exc:  # noqa: BLE001 - older drivers lack some queries
        return {"gpu_throttle_@": f"unreadable: {exc}"}
    finally:
        pynvml.nvmlShutdown()


def _reader(stream: Any, q: queue.Queue[str | None]) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


class BackendRun:
    """Drives workers for one backend and turns their messages into schema rows."""

    def __init__(self, backend_id: str, config: Mapping[str, Any], cores: int,
                 log: Any = None, ref_cache: str | None = None,
                 compile_cache: str | os.PathLike[str] | None = None) -> None:
        self.backend_id = backend_id
        #: folder of float64 references shared with the other steps (gpubench.refcache)
        self.ref_cache = ref_cache
        #: what the workers get on top of this environment (:func:`step_environment`)
        self.step_env = step_environment(compile_cache)
        self.framework, self.device = split_backend_id(backend_id)
        self.config = config
        self.cores = cores
        self.log = log or sys.stderr
        harness = dict(config.get("harness", {}))
        if self.device == "gpu":
            # GPU samples are cheap and steady: GPU steps may measure on a tighter budget.
            harness.update(config.get("gpu_harness", {}))
        self.harness = harness
        self.case_timeout = float(harness.get("case_timeout_s", 600))
        self.start_timeout = float(harness.get("start_timeout_s", 300))
        self.items = plan(backend_id, config, cores)
        self.rows: list[dict[str, Any]] = []
        #: each row's samples by clock, in the rows' order (the spread rounds extend a
        #: row's runs after later rows have come; :meth:`write` lays them out contiguously)
        self.samples: list[tuple[dict[str, Any], dict[str, list[float]]]] = []
        #: where each finished row goes at once (:meth:`keep`), set by :func:`run_backend`
        self.partial: Path | None = None
        #: rows an earlier attempt of this step measured ({:func:`row_key`: (row,
        #: samples)}, :func:`resumable_rows`): kept, not measured again
        self.resumed: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, list[float]]]] = {}
        self.telemetry: dict[str, Any] = {}
        #: the step's count of its rows (gpubench.progress), set by :func:`run_backend`
        self.progress: StepProgress | None = None
        self.common = {**provenance.host_info(),
                       "config_hash": provenance.config_hash(dict(config)),
                       "schema_version": results.SCHEMA_VERSION}

    def say(self, msg: str) -> None:
        print(f"[{self.backend_id}] {msg}", file=self.log, flush=True)

    def row(self, item: PlanItem, fields: Mapping[str, Any], hello: Mapping[str, Any],
            clocks: dict[str, list[float]] | None = None) -> None:
        """Record an item's row (with its samples by clock, for a measured row) and keep
        it in the partial file at once."""
        row = results.empty_row()
        row.update(self.common)
        row.update({
            "framework": self.framework, "device": self.device, "backend": self.backend_id,
            "implementation": item.implementation, "kernel": item.kernel,
            "variant": item.variant, "size": item.size, "dtype": item.dtype,
            "threads": item.threads, "timestamp": provenance.utc_now(),
            "device_name": hello.get("device_name", ""),
            "framework_version": ";".join(f"{k}={v}" for k, v in
                                          sorted(hello.get("versions", {}).items())),
            "timer": hello.get("timer", ""), "mode": item.mode,
        })
        row.update({k: v for k, v in fields.items() if k in results.COLUMN_NAMES})
        self.rows.append(row)
        if clocks is not None:
            self.samples.append(({k: row[k] for k in results.KEY_NAMES}, clocks))
        self.keep(row, clocks or {})
        if self.progress is not None:
            self.progress.update(len(self.rows))

    def run(self) -> None:
        groups: dict[int, list[int]] = {}
        resumed = []
        for i, item in enumerate(self.items):
            if (found := self.resumed.get(item_key(item))) is not None:
                resumed.append(found)
            else:
                groups.setdefault(item.threads, []).append(i)
        kept = len(resumed)
        if kept:
            self.say(f"{kept} measurements kept from an earlier attempt of this step "
                     "(its partial file, same configuration and environment)")
        for row, clocks in resumed:
            self.rows.append(row)
            if clocks:
                self.samples.append(({k: row[k] for k in results.KEY_NAMES}, clocks))
            self.keep(row, clocks)
        if kept and self.progress is not None:
            self.progress.update(len(self.rows))
        self.say(f"{len(self.items) - kept} measurements planned, thread counts "
                 f"{sorted(groups)}")
        start = gpu_telemetry() if self.device == "gpu" else {}
        for threads, indices in groups.items():
            self._run_group(threads, indices)
        if kept:  # in plan order, as a step measuring everything writes them
            order = {item_key(item): i for i, item in enumerate(self.items)}
            self.rows.sort(key=lambda row: order.get(row_key(row), len(order)))
        end = gpu_telemetry() if self.device == "gpu" else {}
        # Clocks, temperature and throttling around the whole step: a throttled GPU
        # explains a slow step, so every row of the step carries both readings.
        self.telemetry = {}
        for key, value in start.items():
            self.telemetry[key.replace("@", "start")] = value
        for key, value in end.items():
            self.telemetry[key.replace("@", "end")] = value
        for row in self.rows:
            row.update(self.telemetry)
        if start or end:
            self.say(f"GPU telemetry {self.telemetry}")

    def _run_group(self, threads: int, indices: list[int]) -> None:
        """Run workers until every item has a row; each worker's rows carry the host's
        conditions over that worker (:mod:`gpubench.hostload`): the load at its start
        and end, the steal and the other processes' CPU while it ran."""
        pending = list(indices)
        while pending:
            first = len(self.rows)
            start = hostload.snapshot()
            done = self._worker(threads, pending)
            got = hostload.conditions(start, hostload.snapshot())
            for row in self.rows[first:]:
                row.update(got)
            self.say(f"host while the worker ran (threads={threads}): {hostload.describe(got)}")
            pending = pending[done:]

    def _worker(self, threads: int, indices: list[int]) -> int:
        """Run a worker over ``indices``; return how many of them now have rows."""
        job = {"backend": self.backend_id, "threads": threads,
               "harness": self.harness, "ref_cache": self.ref_cache,
               "items": [asdict(self.items[i]) for i in indices]}
        env = worker_environment(self.step_env, threads)
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpubench.worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.log if hasattr(self.log, "fileno") else None,
            text=True, env=env,
        )
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(job))
        proc.stdin.close()
        q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
        hello: dict[str, Any] = {}
        done = 0
        current: int | None = None
        #: the rows of this worker's items by their index in its job
        rows: dict[int, dict[str, Any]] = {}
        #: their samples by clock
        by_clock: dict[int, dict[str, list[float]]] = {}
        #: the item whose energy the worker is reading again (``energy: best``)
        energy_of: int | None = None
        #: whether the worker is in its spread rounds (between items or after them)
        spreading = False
        timeout = self.start_timeout
        while True:
            try:
                line = q.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                proc.wait()
                if energy_of is not None:
                    return self._energy_failed(
                        rows[energy_of], done, f"timed out after {timeout:.0f} s")
                if spreading:
                    return self._spread_failed(done, f"timed out after {timeout:.0f} s")
                what = "starting the framework" if current is None else "this case"
                reason = f"timed out after {timeout:.0f} s while {what} (harness.case_timeout_s)"
                return self._fail_from(indices, done, current, hello, reason)
            if line is None:
                code = proc.wait()
                if energy_of is not None:
                    return self._energy_failed(rows[energy_of], done,
                                               f"worker {describe_exit(code)}")
                if spreading:
                    return self._spread_failed(done, f"worker {describe_exit(code)}")
                if done == len(indices):
                    return done
                reason = f"worker {describe_exit(code)}; see the step's log"
                return self._fail_from(indices, done, current, hello, reason)
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                self.say(f"worker said: {line.rstrip()}")
                continue
            event = msg.get("event")
            if event == "hello":
                hello = msg
                if not msg.get("available", False):
                    proc.wait()
                    for i in indices:
                        self.row(self.items[i], {"status": "unavailable",
                                                 "reason": msg.get("reason", "")}, hello)
                    self.say(f"unavailable: {msg.get('reason')}")
                    return len(indices)
                timeout = self.case_timeout
            elif event == "start":
                current, spreading = msg["index"], False
            elif event in ("spread_start", "spread_end"):
                current, spreading = None, event == "spread_start"
            elif event == "energy_start":
                energy_of = msg["index"]
            elif event == "energy":
                # a reading made after the row (energy: best), or why none was
                energy_of = None
                rows[msg["index"]].update({k: v for k, v in msg["fields"].items()
                                           if k.startswith("energy_")
                                           and k in results.COLUMN_NAMES})
                self.keep(rows[msg["index"]], by_clock[msg["index"]])
            elif event == "result":
                item = self.items[indices[msg["index"]]]
                clocks = {"device": list(msg["samples"]),
                          **{c: list(t) for c, t in msg.get("caller", {}).items()}}
                self.row(item, msg["fields"], hello, clocks)
                rows[msg["index"]] = self.rows[-1]
                by_clock[msg["index"]] = clocks
                done = msg["index"] + 1
                current = None
            elif event == "spread":
                # the spread rounds' samples of a row already recorded, and its
                # statistics over all of its samples (gpubench.spread)
                rows[msg["index"]].update({k: v for k, v in msg["fields"].items()
                                           if k in results.COLUMN_NAMES})
                for clock, times in msg.get("samples", {}).items():
                    by_clock[msg["index"]].setdefault(clock, []).extend(times)
                self.keep(rows[msg["index"]], by_clock[msg["index"]])

    def _spread_failed(self, done: int, what: str) -> int:
        """The worker was lost in its spread rounds, with no item in flight: the rows
        it wrote keep the samples they had (their spread rounds never came), and the
        items after them go to a fresh worker."""
        self.say(f"{what} during the spread rounds; the {done} rows it wrote keep the "
                 "samples they had; see the step's log")
        return done

    def _energy_failed(self, row: dict[str, Any], done: int, what: str) -> int:
        """The worker stopped while reading a row's energy again (``energy: best``): the
        row keeps its timings and says why it has no energy; the items after the last
        row go to a fresh worker."""
        self.say(f"{what} while reading the energy of {row['implementation']} on "
                 f"{row['kernel']} size {row['size']}; see the step's log")
        row["energy_reason"] = f"not measured: {what} while reading it; see the step's log"
        return done

    def _fail_from(self, indices: list[int], done: int, current: int | None,
                   hello: Mapping[str, Any], reason: str) -> int:
        """Record the failure on the item in flight (or, at start-up, on all items)."""
        self.say(reason)
        if current is None and not hello:
            for i in indices[done:]:
                self.row(self.items[i], {"status": "error",
                                         "reason": f"framework did not start: {reason}"}, hello)
            return len(indices)
        victim = current if current is not None else done
        self.row(self.items[indices[victim]], {"status": "error", "reason": reason}, hello)
        return victim + 1

    def keep(self, row: Mapping[str, Any], clocks: Mapping[str, list[float]]) -> None:
        """Append a row as it stands (with its samples) to the partial file, so that a
        step ended from outside (out of memory, a node lost, its time up) keeps what it
        measured: whoever records the failure reads it (:func:`kept_rows`). A row sent
        again (its spread rounds, its energy) replaces the earlier line."""
        if self.partial is None:
            return
        line = json.dumps({"row": dict(row), "samples": dict(clocks)}, default=str)
        with open(self.partial, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()

    def write(self, csv_path: str | os.PathLike[str],
              samples_path: str | os.PathLike[str]) -> None:
        """Samples first, then the timings file: the timings file's existence means done;
        then the partial file goes."""
        import pandas as pd

        flat = [{**key, "clock": clock, "sample": j, "time_s": t}
                for key, clocks in self.samples for clock, times in clocks.items()
                for j, t in enumerate(times)]
        results.atomic_write_csv(samples_path, pd.DataFrame(
            flat, columns=list(results.SAMPLE_COLUMNS)))
        results.atomic_write_csv(csv_path, results.rows_frame(self.rows))
        partial_path(csv_path).unlink(missing_ok=True)


def partial_path(csv_path: str | os.PathLike[str]) -> Path:
    """``raw/<backend>.csv`` -> ``raw/<backend>.partial.jsonl``: the rows a running step
    has finished, one JSON line each (:meth:`BackendRun.keep`)."""
    p = Path(csv_path)
    return p.with_name(p.name.removesuffix(".csv") + ".partial.jsonl")


def row_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """What tells a step's rows apart: implementation, case, threads, mode."""
    return (row["implementation"], row["kernel"], row["variant"], int(row["size"]),
            row["dtype"], int(row["threads"]), row["mode"])


def kept_rows(csv_path: str | os.PathLike[str]
              ) -> dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, list[float]]]]:
    """{:func:`row_key`: (row, samples by clock)} of the rows a step wrote to its partial
    file before it ended; a later line of a row wins, and a line cut short by the kill
    is left out."""
    out: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, list[float]]]] = {}
    try:
        text = partial_path(csv_path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        try:
            entry = json.loads(line)
            out[row_key(entry["row"])] = (dict(entry["row"]), dict(entry["samples"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def item_key(item: PlanItem) -> tuple[Any, ...]:
    """:func:`row_key` of a planned measurement."""
    return (item.implementation, item.kernel, item.variant, int(item.size), item.dtype,
            int(item.threads), item.mode)


def resumable_rows(csv_path: str | os.PathLike[str], backend_id: str,
                   common: Mapping[str, Any]
                   ) -> dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, list[float]]]]:
    """The rows of the step's partial file an attempt keeps instead of measuring again:
    same backend, configuration (``config_hash``) and environment (``env_lock``), not
    ``error`` (a case that failed, e.g. for memory, is measured again with the new
    attempt's resources)."""
    return {k: v for k, v in kept_rows(csv_path).items()
            if v[0].get("backend") == backend_id
            and v[0].get("config_hash") == common.get("config_hash")
            and str(v[0].get("env_lock", "")) == str(common.get("env_lock", ""))
            and v[0].get("status") != "error"}


def results_folder(csv_path: str | os.PathLike[str]) -> Path:
    """<results>/raw/<backend>.csv -> <results>."""
    return Path(csv_path).resolve().parent.parent


def run_backend(backend_id: str, config: Mapping[str, Any], cores: int, csv_path: str,
                samples_path: str, env_lock: str = "",
                compile_cache: str | os.PathLike[str] | None = None) -> BackendRun:
    """Plan, run and write one backend's results. Returns the run for inspection.

    ``env_lock`` is the hash of the lock of the environment the step runs in (every
    row carries it). ``compile_cache``: the folder the frameworks' persistent
    compilation caches go in (:func:`step_environment`; None: their own defaults).
    """
    t0 = time.perf_counter()
    # <results>/cache/references, shared by the steps
    cache = results_folder(csv_path) / "cache" / "references"
    run = BackendRun(backend_id, config, cores, ref_cache=str(cache),
                     compile_cache=compile_cache)
    run.common["env_lock"] = env_lock
    run.partial = partial_path(csv_path)
    run.partial.parent.mkdir(parents=True, exist_ok=True)
    # a retry (or a re-run after the step was killed) measures only what an earlier
    # attempt did not: its rows of the same configuration and environment are kept
    run.resumed = resumable_rows(csv_path, backend_id, run.common)
    run.partial.unlink(missing_ok=True)  # run() writes the kept rows into it again
    run.progress = StepProgress(len(run.items), run.say, progress_path(csv_path))
    shown = {k: v for k, v in run.step_env.items() if k in compile_cache_vars()}
    if shown:
        run.say(f"compilation caches under {Path(next(iter(shown.values()))).parent}"
                f" ({', '.join(sorted(shown))})")
    run.run()
    run.write(csv_path, samples_path)
    counts: dict[str, int] = {}
    for r in run.rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    run.say(f"wrote {len(run.rows)} rows {counts} in {time.perf_counter() - t0:.1f} s")
    return run


def write_unavailable(backend_id: str, config: Mapping[str, Any], cores: int, csv_path: str,
                      samples_path: str, reason: str, env_lock: str = "",
                      status: str = "unavailable", keep: bool = False) -> BackendRun:
    """One ``unavailable`` row per planned measurement, starting no worker: the step's
    environment could not be built (``reason`` says why). With ``status="error"``: the
    step itself failed on its last attempt (killed, out of memory or time), so no row is
    lost; ``keep``: the rows it had finished (its partial file, same configuration) are
    kept as they are and only the measurements not yet made get ``status`` rows."""
    run = BackendRun(backend_id, config, cores)
    run.common["env_lock"] = env_lock
    kept = {k: v for k, v in kept_rows(csv_path).items()
            if v[0].get("config_hash") == run.common["config_hash"]
            and v[0].get("backend") == backend_id} if keep else {}
    made = 0
    for item in run.items:
        key = (item.implementation, item.kernel, item.variant, item.size, item.dtype,
               item.threads, item.mode)
        if key in kept:
            row, clocks = kept[key]
            run.rows.append(row)
            if clocks:
                run.samples.append(({k: row[k] for k in results.KEY_NAMES}, clocks))
            made += 1
        else:
            run.row(item, {"status": status, "reason": reason}, {})
    run.write(csv_path, samples_path)
    run.say(f"wrote {len(run.rows)} rows, {made} of them measured before the step ended, "
            f"{len(run.rows) - made} {status}: {reason}")
    return run
