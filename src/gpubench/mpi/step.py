"""One MPI step: (job, backend, ranks) -> ``mpi/raw/<job>.<backend>.n<ranks>.csv``.

The parent plans one row per measurement, checks that MPI, the framework and enough
GPUs are there (else ``unavailable``/``skipped`` rows with the reason, nothing
launched), starts the ranks with the configured launcher under the step's time limit,
and turns rank 0's event file into rows. A launch that crashes or times out costs the
item in flight one ``error`` row with the reason (the rank's own message where it left
one); the next launch continues with the items after it, while time is left. Every
planned item ends as exactly one row, and the step exits 0 so the workflow goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpubench import provenance, results
from gpubench.backends import split_backend_id
from gpubench.backends.base import pin_threads_env
from gpubench.mpi import (
    JOBS,
    SINGLE_PROCESS_JOBS,
    backend_class,
    catalog_of_jobs,
    devices,
    job_runs_on,
    jobs_where,
    launch,
    mpi_backends,
    schema,
)
from gpubench.procs import describe_exit, preexec

SRC_DIR = Path(__file__).resolve().parents[2]

#: what ``size`` counts, per job (halo's: its mode says, see :meth:`Step.row`)
SIZE_MEANING = {name: job.size_meaning for name, job in catalog_of_jobs().items()
                if job.size_meaning}

#: defaults of ``mpi.jobs.<job>`` keys
JOB_DEFAULTS: dict[str, dict[str, Any]] = {
    name: dict(job.defaults) for name, job in catalog_of_jobs().items()}

#: jobs whose buffers travel through MPI (and so have direct and staged paths)
BUFFER_JOBS = jobs_where(buffers=True)
#: jobs whose mode says strong or weak scaling (the halos): size is global cells or
#: cells per rank
BY_MODE_JOBS = jobs_where(scaling="by_mode")


#: the variables that keep NVLink multicast off in the GPU ranks (a site's own setting wins)
NO_MULTICAST = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


def job_config(mpi_cfg: Mapping[str, Any], job: str) -> dict[str, Any]:
    cfg = dict(JOB_DEFAULTS[job])
    cfg.update((mpi_cfg.get("jobs") or {}).get(job) or {})
    return cfg


def powers_of_two(lo: int, hi: int) -> list[int]:
    """lo, 2 lo, ... <= hi, starting at the power of two at or above ``lo``."""
    out, v = [], 1
    while v < max(1, lo):
        v *= 2
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def paths_for(job: str, backend: str) -> list[str]:
    """Communication paths measured for a job on a backend."""
    ad = backend_class(backend)
    if job == "device_selection" or catalog_of_jobs()[job].single_process:
        return ["n/a"]
    if ad.facts.host_memory:
        return ["host"]
    if job not in BUFFER_JOBS:
        return ["staged"]  # a scalar result comes to the host
    paths = ["direct", "staged"] if ad.facts.direct_capable else ["staged"]
    if catalog_of_jobs()[job].message:
        paths = ["host", *paths]  # host buffers on the same ranks: the baseline
    return paths


def plan(job: str, backend: str, ranks: int, mpi_cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every row the step must produce, in run order (index = position)."""
    cfg = job_config(mpi_cfg, job)
    facts = catalog_of_jobs()[job]
    dtype = facts.dtype or cfg.get("dtype", "float64")
    items: list[dict[str, Any]] = []

    def add(size: int, path: str, mode: str = "", dt: str = dtype, **extra: Any) -> None:
        items.append({"index": len(items), "size": int(size), "dtype": dt, "path": path,
                      "mode": mode, "params": {k: v for k, v in cfg.items()
                                               if k in ("steps", "warmup_s")}, **extra})

    if job == "device_selection":
        for strategy in devices.STRATEGIES:
            add(0, "n/a", strategy, "")
    elif facts.single_process and facts.message:
        # copies between the first device and each other one, both directions
        sizes = powers_of_two(int(cfg["min_bytes"]), int(cfg["max_bytes"]))
        for peer in range(1, ranks):
            for mode in (f"0->{peer}", f"{peer}->0"):
                for size in sizes:
                    add(size, "n/a", mode, devices=ranks)
    elif facts.single_process:
        for mode in backend_class(backend).facts.multi_device:
            for size in cfg["sizes"]:
                add(size, "n/a", mode, devices=ranks)
    elif facts.message:
        sizes = powers_of_two(int(cfg["min_bytes"]), int(cfg["max_bytes"]))
        modes = ["mpi_allreduce"] if job == "allreduce" else [""]
        # NCCL moves device buffers GPU to GPU (NVLink) without a CUDA-aware MPI: MPI
        # only carries its unique id. CuPy ranks only (cupy.cuda.nccl).
        if backend_class(backend).facts.nccl and cfg.get("nccl", True):
            modes.append("nccl")
        for mode in modes:
            for path in (["direct"] if mode == "nccl" else paths_for(job, backend)):
                for size in sizes:
                    add(size, path, mode)
    elif facts.scaling == "by_mode":
        for mode in cfg["scaling"]:
            for path in paths_for(job, backend):
                for size in cfg["sizes"]:
                    add(size, path, mode)
    else:
        for path in paths_for(job, backend):
            for size in cfg["sizes"]:
                add(size, path, "")
    return items


def pre_skip(job: str, backend: str, ranks: int, item: Mapping[str, Any],
             cuda_aware: str, gpus_here: int | None = None) -> str:
    """Why an item cannot run, known before launching ('' if it can).

    ``gpus_here``: the GPUs this node's ranks share (None: CPU ranks, or ranks the
    scheduler placed). With fewer GPUs than ranks (``mpi.oversubscribe``) NCCL refuses
    two ranks on one device and one process cannot drive devices it cannot see: a skip
    that says so, not an ``error`` row with the library's message.
    """
    facts = catalog_of_jobs()[job]
    if ranks < facts.min_ranks:
        return f"{job} needs {facts.min_ranks} ranks or devices"
    if item["path"] == "direct" and item["mode"] != "nccl" and cuda_aware == "no":
        return ("the MPI library is not CUDA-aware: device buffers cannot be passed "
                "directly (the staged rows copy through host memory)")
    if catalog_of_jobs()[job].row_per_rank and item["size"] < ranks:
        return f"matrix order {item['size']} has fewer rows than {ranks} ranks"
    if gpus_here is not None:
        if item["mode"] == "nccl" and ranks > gpus_here:
            return (f"NCCL needs one GPU per rank: {ranks} ranks share {gpus_here} "
                    "GPU(s) here (mpi.oversubscribe)")
        devices_needed = int(item.get("devices", ranks))
        if facts.single_process and devices_needed > gpus_here:
            return (f"one process driving {devices_needed} GPUs: {gpus_here} visible "
                    "here")
    return ""


def probe_python(python: str, module: str, with_mpi: bool, env: Mapping[str, str],
                 timeout: float = 120) -> dict[str, str]:
    """In the ranks' interpreter: can it load the MPI library and find the framework?"""
    code = (
        "import importlib.util, json\n"
        "res = {}\n"
        f"if {with_mpi!r}:\n"
        "    try:\n"
        "        import mpi4py\n"
        "        mpi4py.rc.initialize = False\n"
        "        from mpi4py import MPI\n"
        "        res['mpi'] = MPI.Get_library_version().strip().splitlines()[0]\n"
        "        res['mpi4py'] = mpi4py.__version__\n"
        "    except Exception as e:\n"
        "        res['mpi_error'] = f'{type(e).__name__}: {e}'\n"
        "try:\n"
        f"    found = importlib.util.find_spec({module!r}) is not None\n"
        "except Exception as e:\n"
        "    found = False\n"
        f"res['framework'] = 'ok' if found else 'module {module} not found'\n"
        "print(json.dumps(res))\n"
    )
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True,
                             timeout=timeout, env=dict(env))
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        return {"mpi_error": f"{python} could not be probed: {exc}",
                "framework": f"{python} could not be probed: {exc}"}


class Step:
    """Plans, launches and records one (job, backend, ranks) step."""

    def __init__(self, job: str, backend: str, ranks: int, config: Mapping[str, Any],
                 python: str = sys.executable, log: Any = None) -> None:
        if job not in JOBS:
            raise ValueError(f"unknown MPI job {job!r}; known: {JOBS}")
        known = mpi_backends()
        if backend not in known:
            raise ValueError(f"backend {backend!r} has no MPI version; known: {known}")
        if not job_runs_on(job, backend):
            raise ValueError(f"MPI job {job!r} has no version on {backend!r}")
        self.job, self.backend, self.ranks = job, backend, int(ranks)
        self.cfg = dict(config.get("mpi") or {})
        self.seed = int((config.get("harness") or {}).get("seed", 0))
        self.python = python
        self.log = log or sys.stderr
        self.framework, self.device = split_backend_id(backend)
        self.items = plan(job, backend, self.ranks, self.cfg)
        self.fields: dict[int, dict[str, Any]] = {}
        self.samples: list[dict[str, Any]] = []
        self.hello: dict[str, Any] = {}
        self.launcher_text = ""
        self.cuda_aware, self.cuda_aware_how = "unknown", ""
        self.time_limit = float(self.cfg.get("time_limit_s", 600))
        #: what set the time limit (the rows' reasons name it)
        self.limit_from = "mpi.time_limit_s"

    def say(self, msg: str) -> None:
        print(f"[mpi {self.job} {self.backend} n{self.ranks}] {msg}", file=self.log,
              flush=True)

    # -- rows ----------------------------------------------------------------------------
    def row(self, item: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
        row = schema.empty_row()
        hello = self.hello
        versions = dict(hello.get("versions") or {})
        row.update({
            "job": self.job, "framework": self.framework, "device": self.device,
            "backend": self.backend, "ranks": self.ranks, "size": item["size"],
            "size_meaning": SIZE_MEANING.get(self.job, "cells per rank" if
                                             item["mode"] == "weak" else "global cells"),
            "dtype": item["dtype"], "path": item["path"], "mode": item["mode"],
            "gpu_uuids": ";".join(u for u in (hello.get("uuids") or []) if u) and
            ";".join(hello.get("uuids") or []),
            "device_selection": hello.get("strategy", ""),
            "mpi_library": hello.get("mpi_library", ""),
            "mpi_version": hello.get("mpi_version", ""),
            "cuda_aware": hello.get("cuda_aware", self.cuda_aware),
            "launcher": self.launcher_text,
            "host": (hello.get("hosts") or [provenance.host_info()["host"]])[0],
            "device_name": hello.get("device_name", ""),
            "framework_version": ";".join(f"{k}={v}" for k, v in sorted(versions.items())),
            "git_commit": provenance.git_commit(),
            "timestamp": provenance.utc_now(),
            "schema_version": schema.SCHEMA_VERSION,
        })
        if self.job in BY_MODE_JOBS and item["mode"] == "weak":
            row["size_meaning"] = "cells per rank"
        elif self.job in BY_MODE_JOBS:
            row["size_meaning"] = "global cells"
        link = self.cfg.get("link_gbps")
        if link and catalog_of_jobs()[self.job].message and item["path"] != "host":
            row["link_gbps"] = float(link)
        row.update({k: v for k, v in fields.items() if k in schema.COLUMN_NAMES})
        return row

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for item in self.items:
            fields = self.fields.get(item["index"]) or {
                "status": "error", "reason": "no result was recorded (step ended early)"}
            out.append(self.row(item, fields))
        return out

    def fill(self, status: str, reason: str, only_missing: bool = True) -> None:
        for item in self.items:
            if not only_missing or item["index"] not in self.fields:
                self.fields[item["index"]] = {"status": status, "reason": reason}

    @property
    def placed_by_scheduler(self) -> bool:
        """Whether srun starts the ranks: SLURM placed them, maybe over several nodes."""
        return getattr(getattr(self, "launcher", None), "kind", "") == "srun"

    # -- checks before launching ------------------------------------------------------------
    def unavailable_reason(self, env: Mapping[str, str]) -> tuple[str, str]:
        """(status, reason) that stops the whole step before launching, or ('', '')."""
        single = self.job in SINGLE_PROCESS_JOBS
        enabled = str(self.cfg.get("enabled", "auto")).lower()
        if self.device == "gpu":  # cheapest check first: NVML, in this process
            simulated = backend_class(self.backend).multi.simulated(env)
            n_gpus, why = devices.nvml_gpu_count(env)
            if simulated:
                n_gpus = max(n_gpus, self.ranks)  # the CUDA simulator has no real GPU
            self.n_gpus = n_gpus
            if n_gpus < 1:
                return "unavailable", why
        if not single:
            found, why = launch.find_launcher(self.cfg.get("launcher", "auto"), env,
                                              self.cfg.get("mpiexec", "") or "")
            if found is None:
                return "unavailable", f"MPI launcher: {why}"
            self.launcher = found
        module = backend_class(self.backend).facts.probe_module
        probe = probe_python(self.python, module, not single, env)
        if not single and "mpi" not in probe:
            return "unavailable", (f"mpi4py cannot load an MPI library in {self.python}: "
                                   f"{probe.get('mpi_error', '?')} (pip install mpi4py; "
                                   "apt-get install openmpi-bin libopenmpi-dev)")
        self.mpi4py_version = probe.get("mpi4py", "")
        if probe.get("framework") != "ok":
            return "unavailable", f"{self.framework}: {probe.get('framework')}"
        if enabled == "false":
            return "skipped", "mpi.enabled is false"
        need = self.ranks
        # Under srun the scheduler placed the ranks, possibly over several nodes: this
        # node's GPUs and cores do not bound them (srun refuses what the job lacks).
        placed = self.placed_by_scheduler
        if self.device == "gpu":
            if need > n_gpus and not self.cfg.get("oversubscribe", False) and \
                    self.job != "device_selection" and not placed:
                return "skipped", (f"{need} ranks need {need} GPUs (one per rank), "
                                   f"{n_gpus} visible; set mpi.oversubscribe: true to "
                                   "share GPUs")
        else:
            self.n_gpus = 0
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
                else (os.cpu_count() or 1)
            if need > cores and not self.cfg.get("oversubscribe", False) and not single \
                    and not placed:
                return "skipped", (f"{need} ranks on {cores} cores: set "
                                   "mpi.oversubscribe: true to run more ranks than cores")
        return "", ""

    # -- running -----------------------------------------------------------------------
    def run(self, env: Mapping[str, str] | None = None,
            workdir: str | os.PathLike[str] | None = None) -> None:
        """Launch until every item has a row. ``workdir`` holds each launch's spec and
        event files: every rank reads the spec, so across nodes it must be a shared
        folder (the step's output folder), not a node's own /tmp."""
        env = dict(os.environ if env is None else env)
        t0 = time.monotonic()
        status, reason = self.unavailable_reason(env)
        if status:
            self.say(f"{status}: {reason}")
            self.fill(status, reason)
            return
        self.cuda_aware, self.cuda_aware_how = (
            launch.cuda_aware_static(env, str(self.cfg.get("cuda_aware", "auto")))
            if self.device == "gpu" else ("n/a", "CPU ranks"))
        gpus_here = (self.n_gpus if self.device == "gpu" and not self.placed_by_scheduler
                     else None)
        for item in self.items:
            why = pre_skip(self.job, self.backend, self.ranks, item, self.cuda_aware,
                           gpus_here)
            if why:
                self.fields[item["index"]] = {"status": "skipped", "reason": why}
        deadline = t0 + self.time_limit
        with tempfile.TemporaryDirectory(prefix=".gpubench-mpi-", dir=workdir) as tmp:
            attempt = 0
            while True:
                todo = [it for it in self.items if it["index"] not in self.fields]
                if not todo:
                    break
                left = deadline - time.monotonic()
                if left <= 1:
                    self.fill("error", f"not run: the step's time limit "
                                       f"({self.time_limit:.0f} s, {self.limit_from}) was "
                                       "reached")
                    break
                attempt += 1
                self.launch_once(todo, Path(tmp) / f"launch{attempt}", env, left)

    def command(self, spec_path: Path, out_path: Path) -> list[str]:
        program = [self.python, "-m", "gpubench.mpi.worker", "--spec", str(spec_path),
                   "--out", str(out_path)]
        if self.job in SINGLE_PROCESS_JOBS:
            return [*program, "--no-mpi"]
        extra = [str(a) for a in self.cfg.get("launcher_args", [])]
        return launch.build_command(
            self.launcher, self.ranks, program,
            oversubscribe=bool(self.cfg.get("oversubscribe", False)),
            srun_mpi=str(self.cfg.get("srun_mpi", "pmix")),
            gpus_per_rank=1 if self.device == "gpu" and self.cfg.get("srun_gpus", True)
            else 0, extra_args=extra)

    def launch_once(self, todo: list[dict[str, Any]], base: Path, env: dict[str, str],
                    limit: float) -> None:
        base.mkdir(parents=True)
        spec_path, out_path = base / "spec.json", base / "events.jsonl"
        spec = {"job": self.job, "backend": self.backend, "items": todo,
                "settings": dict(self.cfg.get("harness") or {}), "seed": self.seed,
                "strategy": self.strategy(env), "n_gpus": self.n_gpus,
                "oversubscribe": bool(self.cfg.get("oversubscribe", False)),
                "cuda_aware": self.cuda_aware, "cuda_aware_how": self.cuda_aware_how}
        spec_path.write_text(json.dumps(spec))
        cmd = self.command(spec_path, out_path)
        self.launcher_text = launch.command_text(cmd[:cmd.index(self.python)]) or "none"
        run_env = {**env, "PYTHONPATH": os.pathsep.join(
            [str(SRC_DIR)] + [p for p in [env.get("PYTHONPATH")] if p])}
        if self.device == "gpu":
            # NVLink multicast stays off (NCCL, PyTorch, NVSHMEM) in every rank and
            # one-process job: nothing here measures it, and on a shared host it can
            # take the GPUs out of service
            for var in NO_MULTICAST:
                run_env.setdefault(var, "0" if var == "NCCL_NVLS_ENABLE" else "1")
            if self.ranks > max(1, self.n_gpus) and not self.placed_by_scheduler:
                # ranks share a GPU: JAX would reserve most of it in the first rank and
                # leave the others out of memory
                run_env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        if self.device == "cpu":
            cores = os.cpu_count() or 1
            run_env.update(pin_threads_env(max(1, cores // self.ranks)))
        self.say(f"launching ({len(todo)} items, {limit:.0f} s left): "
                 f"{launch.command_text(cmd)}")
        console = base / "console.txt"
        with open(console, "wb") as sink:
            # SIGTERM when the step dies: the launcher then ends its ranks.
            proc = subprocess.Popen(cmd, env=run_env, stdout=sink, stderr=subprocess.STDOUT,
                                    start_new_session=True,
                                    preexec_fn=preexec(signal.SIGTERM))
            code, timed_out = self.wait(proc, limit)
        text = console.read_text(errors="replace")
        self.log.write(text)
        self.log.flush()
        events = read_events(out_path)
        in_flight = self.absorb(events)
        rank_errors = sorted(base.glob("events.jsonl.rank*.err"))
        detail = "; ".join(p.read_text().strip() for p in rank_errors) or rank_lines(text) \
            or launcher_errors(text)
        self.record_failure(todo, code, timed_out, in_flight, detail, limit, events)

    @staticmethod
    def wait(proc: subprocess.Popen[Any], limit: float) -> tuple[int | None, bool]:
        """Wait for the launcher up to ``limit`` s; kill its process group after that."""
        try:
            return proc.wait(timeout=limit), False
        except subprocess.TimeoutExpired:
            kill_group(proc)
            return proc.returncode, True

    def record_failure(self, todo: list[dict[str, Any]], code: int | None, timed_out: bool,
                       in_flight: int | None, detail: str, limit: float,
                       events: list[dict[str, Any]]) -> None:
        """Give the item in flight an error row saying why the launch ended badly."""
        if timed_out:
            reason = (f"timed out after {limit:.0f} s ({self.limit_from} "
                      f"{self.time_limit:.0f}); the ranks were killed")
        elif code != 0 or in_flight is not None:
            reason = f"the launcher {describe_exit(code, passive=True)}"
        else:
            reason = ""
        if reason or (detail and in_flight is not None):
            reason = f"{reason}: {detail}" if detail else reason + \
                " (a rank died or stopped responding; see the step's log)"
            victim = in_flight
            if victim is None:
                pending = [it["index"] for it in todo if it["index"] not in self.fields]
                victim = pending[0] if pending else None
            if victim is not None:
                self.fields[victim] = {"status": "error", "reason": reason[:500]}
            self.say(f"error: {reason}")
            if timed_out:
                self.fill("error", f"not run: the step's time limit "
                                   f"({self.time_limit:.0f} s, {self.limit_from}) was "
                                   "reached")
        elif not events:
            self.fill("error", "the ranks wrote no results; see the step's log")

    def strategy(self, env: Mapping[str, str]) -> str:
        setting = str(self.cfg.get("device_selection", "auto"))
        if setting != "auto":
            return setting
        kind = getattr(getattr(self, "launcher", None), "kind", "mpiexec")
        return devices.auto_strategy(kind, env)

    def absorb(self, events: list[dict[str, Any]]) -> int | None:
        """Take rank 0's events; return the index of the item in flight, if any."""
        in_flight = None
        for ev in events:
            kind = ev.get("event")
            if kind == "hello":
                self.hello = ev
                if getattr(self, "mpi4py_version", ""):
                    self.hello.setdefault("versions", {})["mpi4py"] = self.mpi4py_version
            elif kind in ("unavailable", "fatal"):
                self.fill("unavailable" if kind == "unavailable" else "error",
                          ev.get("reason", "")[:500])
            elif kind == "start":
                in_flight = int(ev["index"])
            elif kind == "result":
                index = int(ev["index"])
                self.fields[index] = dict(ev.get("fields") or {})
                item = next(it for it in self.items if it["index"] == index)
                self.samples.extend(
                    {"job": self.job, "backend": self.backend, "ranks": self.ranks,
                     "size": item["size"], "path": item["path"], "mode": item["mode"],
                     "sample_index": j, "time_s": t}
                    for j, t in enumerate(ev.get("samples") or []))
                in_flight = None
        return in_flight

    def write(self, csv_path: str | os.PathLike[str],
              samples_path: str | os.PathLike[str]) -> None:
        """Samples first, then the rows: the CSV's existence means the step is done."""
        import pandas as pd

        results.atomic_write_csv(samples_path, pd.DataFrame(
            self.samples, columns=list(schema.SAMPLE_COLUMNS)))
        results.atomic_write_csv(csv_path, schema.rows_frame(self.rows()))


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM to the launcher's process group, SIGKILL after 5 s: no rank survives."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def rank_lines(text: str, limit: int = 3) -> str:
    """The ranks' own last words in the launcher's output (``rank N: ...`` lines)."""
    import re

    lines = [ln.strip() for ln in text.splitlines()
             if re.match(r"^rank \d+: ", ln.strip())]
    return "; ".join(lines[-limit:])


def launcher_errors(text: str, limit: int = 2) -> str:
    """srun's own last errors (``srun: error: Node failure on node2``): why the ranks
    ended when none of them could say, e.g. a node lost under the step."""
    lines = [ln.strip() for ln in text.splitlines() if ln.startswith("srun: error: ")]
    return "; ".join(lines[-limit:])


def read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
    return events


def job_time_limit_s(time_limit_s: float, runtime_min: float) -> float:
    """The step's time limit: ``mpi.time_limit_s``, and under a scheduler no later than
    its job's runtime less the margin a step keeps to write its rows
    (:func:`gpubench.runner.time_limit_margin_s`), so SLURM never ends the job first."""
    if runtime_min <= 0:
        return time_limit_s
    from gpubench.runner import time_limit_margin_s

    runtime_s = runtime_min * 60
    return min(time_limit_s, runtime_s - time_limit_margin_s(runtime_s))


def run_step(job: str, backend: str, ranks: int, config: Mapping[str, Any], csv_path: str,
             samples_path: str, python: str = sys.executable, log: Any = None,
             runtime_min: float = 0) -> Step:
    step = Step(job, backend, ranks, config, python, log)
    limit = job_time_limit_s(step.time_limit, runtime_min)
    if limit < step.time_limit:
        step.time_limit, step.limit_from = limit, "the job's runtime less its margin"
    t0 = time.perf_counter()
    workdir = Path(csv_path).resolve().parent
    workdir.mkdir(parents=True, exist_ok=True)
    step.run(workdir=workdir)
    step.write(csv_path, samples_path)
    counts: dict[str, int] = {}
    for r in step.rows():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    step.say(f"wrote {len(step.items)} rows {counts} in {time.perf_counter() - t0:.1f} s")
    return step


def step_main(argv: list[str] | None = None) -> int:
    """Run one MPI step of the workflow (rule mpi_job)."""
    p = argparse.ArgumentParser(prog="gpubench mpi-step", description=step_main.__doc__)
    p.add_argument("--job", required=True, choices=JOBS)
    p.add_argument("--backend", required=True, choices=mpi_backends())
    p.add_argument("--ranks", required=True, type=int)
    p.add_argument("--config-json", required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--python", default=sys.executable, help="the ranks' interpreter")
    p.add_argument("--time-limit-min", type=float, default=0,
                   help="the job's runtime in minutes (0: none): the step ends its "
                   "launches in time to write its rows before the scheduler ends the job")
    args = p.parse_args(argv)
    config = json.loads(args.config_json)
    step = run_step(args.job, args.backend, args.ranks, config, args.csv, args.samples,
                    args.python, runtime_min=args.time_limit_min)
    if str((config.get("mpi") or {}).get("enabled", "auto")).lower() == "true" and any(
            r["status"] == "unavailable" for r in step.rows()):
        print("mpi.enabled is true but MPI is unavailable here (see the rows' reason)",
              file=sys.stderr)
        return 1
    return 0


def collect_main(argv: list[str] | None = None) -> int:
    """Concatenate the MPI steps' CSVs into mpi.csv (+ scaling efficiency, % of link,
    communication the overlapped halo hid)."""
    import pandas as pd

    p = results.collect_parser(collect_main.__doc__, "inputs", "out",
                               "gpubench mpi-collect")
    args = p.parse_args(argv)
    try:
        merged = results.merge_files(args.inputs, schema.read, schema.validate,
                                     "merged MPI rows")
    except results.SchemaError as exc:
        print(f"collect_mpi: {exc}", file=sys.stderr)
        return 1
    merged = schema.add_hidden(schema.add_link(schema.add_scaling(merged)))
    samples = pd.concat([pd.read_csv(f) for f in args.samples], ignore_index=True)
    results.atomic_write_csv(args.out_samples, samples.reindex(
        columns=list(schema.SAMPLE_COLUMNS)))
    results.atomic_write_csv(args.out, schema.coerce(merged))
    print(results.collected("collect_mpi", merged, len(args.inputs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(step_main())
