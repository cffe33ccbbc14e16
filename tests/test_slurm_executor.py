"""The workflow's SLURM executor without SLURM: how it reads job states, what
it records for a job SLURM ended, how it notices a silent scheduler, how Ctrl-C
cancels; and the workflow side (salvage rows, 1-rank MPI steps, the time-limit margin).

The executor class is built on a stand-in for the plugin's executor, with its SLURM
clients (the status query, scontrol, squeue, sinfo, scancel) replaced by fakes, and
its clock by a counter. tests/test_slurm_cluster.py runs the same on a real cluster.
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
import os
import signal
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
import yaml

from gpubench import results
from gpubench import slurm as gslurm
from gpubench import workflow as gw
from gpubench.mpi import step as mpi_step
from gpubench.runner import plan as backend_plan
from gpubench.runner import time_limit_margin_s

executor = pytest.importorskip("gpubench.slurm.executor",
                               reason="snakemake-executor-plugin-slurm is not installed")
from snakemake_interface_common.exceptions import WorkflowError  # noqa: E402
from snakemake_interface_executor_plugins.executors.base import (  # noqa: E402
    SubmittedJobInfo,
)

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / ".test" / "config" / "config.yaml"


# -- states ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "kind"), [
    ("COMPLETED|0:0", "done"),
    ("RUNNING|0:0", "active"), ("PENDING", "active"), ("REQUEUED|0:0", "active"),
    ("COMPLETING", "active"), ("SUSPENDED", "active"),
    ("CANCELLED by 0|0:15", "ended"), ("CANCELLED", "ended"), ("CANCELLED+", "ended"),
    ("PREEMPTED|0:0", "ended"), ("NODE_FAIL|0:0", "ended"), ("OUT_OF_MEMORY|0:125", "ended"),
    ("TIMEOUT|0:0", "ended"), ("BOOT_FAIL", "ended"), ("DEADLINE", "ended"),
    ("FAILED|0:9", "ended"),  # killed by a signal: SLURM's sampled memory limit
    ("FAILED|1:0", "failed"),  # the step's own command failed
])
def test_every_state_slurm_ends_a_job_with_is_an_end(raw, kind):
    assert gslurm.classify(raw) == kind


def test_show_state_and_memory_note():
    assert gslurm.show_state("FAILED|0:9") == "FAILED (killed by signal 9)"
    assert gslurm.show_state("CANCELLED by 1234|0:15") == "CANCELLED by 1234"
    sacct = "102|FAILED|0:9||50M\n102.batch|CANCELLED by 0|0:9|335964K|\n"
    assert gslurm.memory_note(sacct) == ("out of memory: step 102.batch peaked at 328 MiB "
                                         "(MaxRSS) of the 50 MiB requested (ReqMem, mem_mb)")
    assert gslurm.memory_note("102|FAILED|0:9||4000M\n102.batch|FAILED|0:9|5000K|\n") == ""
    # cgroups stop a job at its limit: its state says memory, the peak may be lower
    assert gslurm.memory_note("5|OUT_OF_MEMORY|0:125||4000M\n5.batch|OUT_OF_MEMORY|0:125"
                              "|1000M|\n", "OUT_OF_MEMORY|0:125") == (
        "out of memory: step 5.batch peaked at 1000 MiB (MaxRSS) of the 4000 MiB requested "
        "(ReqMem, mem_mb)")
    assert gslurm.memory_note("", "OUT_OF_MEMORY") == "out of memory"


#: sacct -j 132 -n -P -o JobID,State,ExitCode,MaxRSS,ReqMem of a step that grew past its
#: 400 MB (mem_mb) on the localhost cluster (JobAcctGatherParams=OverMemoryKill): SLURM
#: killed the srun step running the job's command, the job ended FAILED 1:0
OVER_MEMORY = ("132|FAILED|1:0||400M\n132.batch|FAILED|1:0|146468K|\n"
               "132.0|CANCELLED by 0|0:9|419704K|\n")


def test_memory_is_told_from_the_steps_peak_against_the_request():
    assert gslurm.memory_note(OVER_MEMORY, "FAILED|1:0") == (
        "out of memory: step 132.0 peaked at 410 MiB (MaxRSS) of the 400 MiB requested "
        "(ReqMem, mem_mb)")
    # the same job with 4 GB: it failed by itself
    assert gslurm.memory_note(OVER_MEMORY.replace("400M", "4000M"), "FAILED|1:0") == ""


def test_failure_reason_names_the_job_state_and_attempt():
    reason = gslurm.failure_reason("57", "CANCELLED by 0|0:15", 1, 3, "logs/57.log")
    assert reason == ("SLURM job 57 ended CANCELLED by 0 (attempt 1 of 3, not retried: "
                      "cancelled); SLURM log logs/57.log")
    assert "(attempt 3 of 3, no retry left)" in gslurm.failure_reason("9", "TIMEOUT", 3, 3)
    assert gslurm.retried("PREEMPTED", 1, 3) and not gslurm.retried("PREEMPTED", 3, 3)
    assert not gslurm.retried("CANCELLED by 0", 1, 3)


@pytest.mark.parametrize("value", ["abc", "-5", "nan"])
def test_bad_watch_setting_is_refused_naming_the_variable(value):
    with pytest.raises(gslurm.SettingError, match=gslurm.QUIET_VAR):
        gslurm.seconds_setting(gslurm.QUIET_VAR, 900, {gslurm.QUIET_VAR: value})
    assert gslurm.seconds_setting(gslurm.QUIET_VAR, 900, {}) == 900


def test_watch_warns_when_quiet_and_at_once_when_queries_fail():
    watch = gslurm.Watch(quiet_s=60, give_up_s=300, now=0)
    watch.observe(10, {"1": "RUNNING"})
    assert not watch.warn_due(50)
    assert watch.warn_due(70)  # 60 s since the last change (at 10 s: first seen running)
    watch.warned(70)
    assert not watch.warn_due(100) and watch.warn_due(130)  # then every quiet_s
    watch.observe(140, {"1": "COMPLETING"})  # moved: quiet again from here
    assert not watch.warn_due(150)
    watch.observe(151, None, "sacct: error: Unable to contact slurmdbd")
    assert watch.warn_due(151)
    # a job the driver just submitted, pending, is no sign of life from SLURM
    watch = gslurm.Watch(60, 300, 0)
    watch.observe(70, {"2": "PENDING"})
    assert watch.warn_due(70)


# -- the executor on a stand-in for the plugin's ----------------------------------------------


class Logger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __getattr__(self, level: str):
        return lambda msg, *a, **k: self.lines.append((level, str(msg)))

    def text(self, level: str | None = None) -> str:
        return "\n".join(m for lv, m in self.lines if level in (None, lv))


class NoLimit:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: Any) -> None:
        return None


class Inline:
    """The plugin's submission thread pool, run in the caller's thread."""

    def submit(self, fn: Any, *args: Any) -> None:
        fn(*args)


class PluginExecutor:
    """What gpubench's executor uses of snakemake_executor_plugin_slurm.Executor.
    ``sbatch``: what each submission's sbatch answers in turn, an error message or None
    (submitted, as job 1000, 1001, ...); once used up, every submission goes through."""

    def __init__(self, retries: int = 2) -> None:
        settings = SimpleNamespace(status_attempts=1, init_seconds_before_status_checks=2,
                                   requeue=False, keep_successful_logs=True)
        self.workflow = SimpleNamespace(executor_settings=settings)
        self.logger = Logger()
        self.lock = threading.Lock()
        self.wait = True
        self.active_jobs: list[SubmittedJobInfo] = []
        self.status_rate_limiter = NoLimit()
        self.run_uuid = "run-1"
        self._failed_nodes: set[str] = set()
        self._submitted_job_clusters: set[str] = set()
        self.next_seconds_between_status_checks = 2
        self.succeeded: list[SubmittedJobInfo] = []
        self.failed: list[tuple[SubmittedJobInfo, str]] = []
        self.shut = False
        self._job_submission_executor = Inline()
        self.sbatch: list[str | None] = []
        self.sbatch_calls: list[Any] = []
        self.__post_init__()

    def run_job(self, job: Any) -> None:
        self.sbatch_calls.append(job)
        error = self.sbatch.pop(0) if self.sbatch else None
        if error is not None:
            self._report_job_error_threadsafe(SubmittedJobInfo(job), (
                f"SLURM sbatch failed. The error message was '{error}'.\n"
                "    sbatch call:\n        sbatch --job-name run-1 ...\n"))
            return
        self._report_job_submission_threadsafe(SubmittedJobInfo(
            job, external_jobid=str(1000 + len(self.sbatch_calls)),
            aux={"slurm_logfile": Path("/logs/new.log")}))

    def _report_job_submission_threadsafe(self, job_info: SubmittedJobInfo) -> None:
        self.report_job_submission(job_info)

    def _report_job_error_threadsafe(self, job_info: SubmittedJobInfo, msg: str) -> None:
        self.report_job_error(job_info, msg=msg)

    def __post_init__(self) -> None:
        pass

    def get_status_command(self) -> str:
        return "sacct"

    def report_job_submission(self, job_info: SubmittedJobInfo,
                              register_job: bool = True) -> None:
        self.active_jobs.append(job_info)

    def report_job_success(self, job_info: SubmittedJobInfo) -> None:
        self.succeeded.append(job_info)

    def report_job_error(self, job_info: SubmittedJobInfo, msg: str | None = None,
                         **kwargs: Any) -> None:
        self.failed.append((job_info, msg or ""))

    def shutdown(self) -> None:
        self.shut = True


class Slurm:
    """The SLURM clients, faked: job states for the status query, what scontrol ping,
    squeue and sinfo answer, and every command run."""

    def __init__(self) -> None:
        self.states: dict[str, str] | None = {}
        self.error = ""
        self.up = True
        self.queue: dict[str, str] = {}
        #: {jobid: partition} (squeue -o %i|%P) and sinfo's '%R|%t' lines
        self.partitions: dict[str, str] = {}
        self.node_states = ""
        self.commands: list[list[str]] = []
        #: {jobid: what sacct -j <jobid> -o JobID,State,ExitCode,MaxRSS,ReqMem answers}
        self.steps: dict[str, str] = {}

    async def query(self, cmd: list[str], timeout: float = 30) -> tuple[Any, str]:
        self.commands.append(cmd)
        return (None if self.states is None else dict(self.states)), self.error

    def client(self, cmd: list[str], timeout: float = 30) -> tuple[int, str, str]:
        self.commands.append(cmd)
        if cmd[:2] == ["scontrol", "ping"]:
            return (0, "Slurmctld(primary) at c1 is UP\n", "") if self.up else \
                (1, "Slurmctld(primary) at c1 is DOWN\n", "")
        if cmd[0] == "squeue" and "--name" in cmd and cmd[-1] == "%i|%P":
            return 0, "".join(f"{j}|{p}\n" for j, p in self.partitions.items()), ""
        if cmd[0] == "squeue" and "--name" in cmd:
            return 0, "".join(f"{j}|{s}\n" for j, s in self.queue.items()), ""
        if cmd[:4] == ["sinfo", "-h", "-o", "%R|%t"]:
            return 0, self.node_states, ""
        if cmd[:2] == ["sacct", "-j"] and "JobID,State,ExitCode,MaxRSS,ReqMem" in cmd:
            return 0, self.steps.get(cmd[2], ""), ""
        return 0, "", ""

    def scancelled(self) -> list[list[str]]:
        return [c for c in self.commands if c[0] == "scancel"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fake_job(rule: str = "run_backend", attempt: int = 1, retries: int = 2,
             outputs: list[str] | None = None, **wildcards: str) -> Any:
    return SimpleNamespace(rule=SimpleNamespace(name=rule), wildcards=wildcards,
                           output=outputs or [], attempt=attempt, restart_times=retries,
                           is_group=lambda: False, jobs=[])


@pytest.fixture
def cluster(monkeypatch):
    fake, clock = Slurm(), Clock()
    monkeypatch.setattr(executor, "query_states", fake.query)
    monkeypatch.setattr(executor, "run_client", fake.client)
    monkeypatch.setattr(executor, "clock", clock)
    monkeypatch.setattr(executor.status_query, "is_query_tool_available", lambda t: True)
    return fake, clock


def make_executor(quiet_s: float = 60, give_up_s: float = 300,
                  salvage: Any = None, sigint_ignored: bool = False) -> Any:
    """An executor made as a driver starts: by default as a terminal's foreground job
    (Ctrl-C reaches it), whatever this test process inherited (CI may start pytest as a
    script's background job, with SIGINT ignored)."""
    cls = type("Executor", (executor.executor_class(PluginExecutor),), {})
    cls.quiet_s, cls.give_up_s = quiet_s, give_up_s
    cls.salvage_job = staticmethod(salvage) if salvage else None
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if sigint_ignored
                           else signal.default_int_handler)
    try:
        return cls()
    finally:
        signal.signal(signal.SIGINT, before)


def submit(ex: Any, jobid: str, job: Any) -> SubmittedJobInfo:
    info = SubmittedJobInfo(job, external_jobid=jobid,
                            aux={"slurm_logfile": Path(f"/logs/{jobid}.log")})
    ex.report_job_submission(info)
    return info


def check(ex: Any) -> list[SubmittedJobInfo]:
    """One status check of the executor's active jobs; the ones still active."""
    active, ex.active_jobs = ex.active_jobs, []

    async def run() -> list[SubmittedJobInfo]:
        return [j async for j in ex.check_active_jobs(active)]

    still = asyncio.run(run())
    ex.active_jobs.extend(still)
    return still


def test_running_and_completed_jobs_are_read_as_the_plugin_reads_them(cluster):
    fake, _ = cluster
    ex = make_executor()
    run, done = submit(ex, "1", fake_job(backend="numpy-cpu")), submit(ex, "2", fake_job())
    fake.states = {"1": "RUNNING|0:0", "2": "COMPLETED|0:0"}
    assert check(ex) == [run]
    assert ex.succeeded == [done] and not ex.failed


def test_a_cancel_is_recorded_at_once_by_the_salvage(cluster):
    """scancel (sacct: "CANCELLED by 0"): no retry; the step's rows are written with the
    state and job id and the job counts as done, so the run goes on."""
    fake, _ = cluster
    calls: list[tuple[Any, str]] = []
    ex = make_executor(salvage=lambda job, reason: calls.append((job, reason)) or True)
    job = fake_job(backend="numpy-cpu")
    info = submit(ex, "57", job)
    fake.states = {"57": "CANCELLED by 0|0:15"}
    assert check(ex) == []
    assert ex.succeeded == [info] and not ex.failed
    assert calls == [(job, "SLURM job 57 ended CANCELLED by 0 (attempt 1 of 3, not retried: "
                           "cancelled); SLURM log /logs/57.log")]
    assert "--forcerun" in ex.logger.text("warning")


@pytest.mark.parametrize("state", ["OUT_OF_MEMORY|0:125", "TIMEOUT|0:0", "DEADLINE|0:0",
                                   "FAILED|0:9"])
def test_a_job_slurm_ended_is_retried_then_recorded(cluster, state):
    fake, _ = cluster
    calls: list[str] = []
    ex = make_executor(salvage=lambda job, reason: calls.append(reason) or True)
    first = submit(ex, "7", fake_job(attempt=1))
    fake.states = {"7": state}
    assert check(ex) == []
    assert [j for j, _ in ex.failed] == [first] and not calls  # Snakemake retries it
    assert "SLURM job 7 ended " + gslurm.show_state(state) in ex.failed[0][1]
    last = submit(ex, "8", fake_job(attempt=3))
    fake.states = {"8": state}
    assert check(ex) == []
    assert ex.succeeded == [last] and len(calls) == 1
    assert calls[0].startswith("SLURM job 8 ended " + gslurm.show_state(state))
    assert "(attempt 3 of 3, no retry left)" in calls[0]


@pytest.mark.parametrize("state", ["PREEMPTED|0:0", "NODE_FAIL|0:0", "BOOT_FAIL|0:0"])
def test_a_job_ended_not_for_its_resources_is_submitted_again_as_it_was(cluster, state):
    """Preempted, a node failure: the same attempt (the same memory and time) is
    submitted again, as many times as the step has attempts; then recorded, never
    retried with more."""
    fake, _ = cluster
    calls: list[str] = []
    ex = make_executor(salvage=lambda job, reason: calls.append(reason) or True)
    job = fake_job(attempt=1)
    submit(ex, "7", job)
    for n in range(3):
        fake.states = {j.external_jobid: state for j in ex.active_jobs}
        assert check(ex) == []  # ended, and submitted again:
        assert not ex.failed and not calls and len(ex.sbatch_calls) == n + 1
        assert [j.job for j in ex.active_jobs] == [job] and job.attempt == 1
    assert "not for its memory or time: submitted again as it was (attempt 1 of 3 kept; " \
        "resubmission 3 of at most 3)" in ex.logger.text("warning")
    fake.states = {j.external_jobid: state for j in ex.active_jobs}
    assert check(ex) == [] and not ex.failed and len(calls) == 1
    assert "(attempt 1 of 3, submitted again 3 times as it was, no retry left)" in calls[0]


def test_a_silent_controller_is_waited_for_without_spending_an_attempt(cluster,
                                                                       monkeypatch):
    """sbatch cannot reach slurmctld: the submission waits (2 s, doubling) and tries
    again, said once; a refusal is a failure at once; past the give-up time the
    submission fails."""
    _, clock = cluster
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        clock.now += s

    monkeypatch.setattr(executor.time, "sleep", sleep)
    monkeypatch.setattr(executor.time, "monotonic", clock)
    ex = make_executor(give_up_s=300)
    down = "sbatch: error: Batch job submission failed: Unable to contact slurm " \
        "controller (connect failure)"
    ex.sbatch = [down] * 4
    job = fake_job(backend="numpy-cpu")
    ex.run_job(job)
    assert not ex.failed and len(ex.sbatch_calls) == 5 and job.attempt == 1
    assert [j.job for j in ex.active_jobs] == [job]
    assert sum(waits) == pytest.approx(2 + 4 + 8 + 16)
    text = ex.logger.text("warning")
    assert text.count("slurmctld does not answer sbatch") == 1
    assert "(connect failure)" in text and "no attempt is spent" in text
    assert "for at most 300 s of outage (GPUBENCH_SLURM_GIVE_UP_S)" in text
    assert "slurmctld answers sbatch again, 30 s after the first submission" in text
    assert ex._look_for_lost
    # a refusal is no outage: failed at once, as the plugin does
    ex.sbatch = ["sbatch: error: Invalid generic resource (gres) specification"]
    ex.run_job(fake_job())
    assert len(ex.failed) == 1 and "Invalid generic resource" in ex.failed[0][1]
    # an outage past the give-up time: the submission fails, saying so
    ex.sbatch = [down] * 1000
    ex.run_job(fake_job())
    assert len(ex.failed) == 2
    assert "has not answered sbatch for 300 s (GPUBENCH_SLURM_GIVE_UP_S)" in ex.failed[1][1]


def test_a_job_the_controller_lost_in_an_outage_is_found_and_submitted_again(cluster):
    """A job submitted just before slurmctld died: no accounting record, slurmctld does
    not know it when it is back. Found within NO_RECORD_S, submitted again as it was."""
    fake, clock = cluster
    ex = make_executor(quiet_s=900)
    job = fake_job(backend="numpy-cpu")
    submit(ex, "40", job)
    ok = submit(ex, "41", fake_job(backend="numba-cpu"))
    fake.states = {"41": "RUNNING|0:0"}
    fake.queue = {"41": "RUNNING|None"}
    check(ex)
    assert not any(c[:2] == ["scontrol", "ping"] for c in fake.commands)
    clock.now += executor.NO_RECORD_S
    check(ex)
    check(ex)  # ended at the next status check
    still = ex.active_jobs
    assert not ex.failed and {j.external_jobid for j in still} == {"41", "1001"}
    assert [j.job for j in still if j is not ok] == [job] and job.attempt == 1
    assert "40 run_backend backend=numpy-cpu" in ex.logger.text("warning")


def test_a_group_job_slurm_ended_is_recorded_member_by_member(cluster):
    """The GPU steps and the probe run as one SLURM job: each member gets its records;
    if one cannot be recorded, the group job fails."""
    fake, _ = cluster
    seen: list[str] = []
    ex = make_executor(salvage=lambda job, reason: seen.append(job.rule.name)
                       or job.rule.name != "collect")
    members = [fake_job("probe"), fake_job(backend="cupy-gpu")]
    group = SimpleNamespace(name="gpu", jobs=members, attempt=1, restart_times=2,
                            is_group=lambda: True)
    info = submit(ex, "81", group)
    fake.states = {"81": "CANCELLED by 1000|0:15"}
    check(ex)
    assert sorted(seen) == ["probe", "run_backend"] and ex.succeeded == [info]
    members.append(fake_job("collect"))
    info = submit(ex, "82", group)
    fake.states = {"82": "CANCELLED by 1000|0:15"}
    check(ex)
    assert [j for j, _ in ex.failed] == [info]
    assert ex.failed[0][1].startswith("SLURM job 82 ended CANCELLED by 1000 (attempt 1 of 3")


def test_a_failed_command_stays_a_failure(cluster):
    """FAILED with an exit code (the step's command failed, e.g. mpi.enabled true without
    MPI) is not SLURM's doing: no rows are made up for it."""
    fake, _ = cluster
    ex = make_executor(salvage=lambda job, reason: pytest.fail("salvaged"))
    submit(ex, "9", fake_job(attempt=3))
    fake.states = {"9": "FAILED|1:0"}
    assert check(ex) == [] and len(ex.failed) == 1 and not ex.succeeded


def test_a_job_failed_for_memory_is_retried_then_recorded_naming_memory(cluster):
    """SLURM's sampled memory limit kills the step running the job's command and the job
    ends FAILED 1:0: its step's peak against its request tells memory. It is retried
    (the profile gives the next attempt more memory), then its rows are recorded with a
    reason that says out of memory, requested and peak, and the run goes on."""
    fake, _ = cluster
    calls: list[str] = []
    ex = make_executor(salvage=lambda job, reason: calls.append(reason) or True)
    first = submit(ex, "132", fake_job(attempt=1, backend="numpy-cpu"))
    fake.states = {"132": "FAILED|1:0"}
    fake.steps = {"132": OVER_MEMORY}
    assert check(ex) == []
    assert [j for j, _ in ex.failed] == [first] and not calls
    assert ex.failed[0][1].startswith(
        "SLURM job 132 ended FAILED: out of memory: step 132.0 peaked at 410 MiB (MaxRSS) "
        "of the 400 MiB requested (ReqMem, mem_mb) (attempt 1 of 3, retried)")
    last = submit(ex, "140", fake_job(attempt=3, backend="numpy-cpu"))
    fake.states = {"140": "FAILED|1:0"}
    fake.steps = {"140": OVER_MEMORY.replace("132", "140")}
    assert check(ex) == []
    assert ex.succeeded == [last] and len(ex.failed) == 1
    assert calls == ["SLURM job 140 ended FAILED: out of memory: step 140.0 peaked at 410 "
                     "MiB (MaxRSS) of the 400 MiB requested (ReqMem, mem_mb) (attempt 3 of "
                     "3, no retry left); SLURM log /logs/140.log"]


def test_a_step_without_rows_to_write_fails_as_usual(cluster):
    fake, _ = cluster
    ex = make_executor(salvage=lambda job, reason: False)
    submit(ex, "3", fake_job("collect", attempt=3))
    fake.states = {"3": "TIMEOUT|0:0"}
    check(ex)
    assert len(ex.failed) == 1 and "SLURM job 3 ended TIMEOUT" in ex.failed[0][1]


def test_quiet_scheduler_is_noticed_naming_the_jobs_and_what_to_do(cluster):
    fake, clock = cluster
    ex = make_executor(quiet_s=60)
    submit(ex, "11", fake_job(backend="numpy-cpu"))
    submit(ex, "12", fake_job("mpi_job", job="halo", backend="numpy-cpu", ranks="2"))
    fake.states = {"11": "RUNNING|0:0", "12": "RUNNING|0:0"}
    fake.queue = {"11": "RUNNING|None", "12": "RUNNING|None"}
    check(ex)
    clock.now += 30
    check(ex)
    assert "gpubench:" not in ex.logger.text("warning")
    clock.now += 31
    assert len(check(ex)) == 2  # still waiting for them
    text = ex.logger.text("warning")
    assert "no job of this run has changed state for 61 s" in text
    assert "11 run_backend backend=numpy-cpu: sacct: RUNNING; slurmctld: RUNNING\n" in text
    assert "12 mpi_job job=halo backend=numpy-cpu ranks=2" in text
    assert "scancel 11 12" in text and "state=resume" in text and "--unlock" in text


def test_failing_status_query_warns_at_once(cluster):
    fake, _ = cluster
    ex = make_executor()
    submit(ex, "5", fake_job())
    fake.states, fake.error = None, "sacct: error: Problem talking to the database"
    assert len(check(ex)) == 1
    text = ex.logger.text("warning")
    assert "SLURM does not answer" in text and "Problem talking to the database" in text
    assert "  5 run_backend" in text


def test_jobs_slurmctld_lost_or_holds_are_submitted_again(cluster):
    """After a controller restart: sacct still says RUNNING for a job slurmctld no longer
    knows, or never saw one submitted just before, and SLURM holds another after a failed
    launch. Once a job has had no accounting record for NO_RECORD_S, slurmctld is asked;
    they are ended (held: cancelled by id) and submitted again as they were."""
    fake, clock = cluster
    ex = make_executor(quiet_s=900)
    jobs = [fake_job(backend=f"b{i}") for i in (21, 22, 23, 24)]
    *_, ok = (submit(ex, str(i), job) for i, job in zip((21, 22, 23, 24), jobs, strict=True))
    fake.states = {"21": "RUNNING|0:0", "23": "REQUEUED|0:0", "24": "RUNNING|0:0"}
    fake.queue = {"23": "PENDING|launch failed requeued held", "24": "RUNNING|None"}
    check(ex)
    clock.now += executor.NO_RECORD_S
    check(ex)  # 22 has no record: slurmctld is asked, and the three are ended
    text = ex.logger.text("warning")
    assert "slurmctld does not know these jobs of this run" in text
    assert "21 run_backend backend=b21, 22 run_backend backend=b22, 23 " in text
    assert not ex.failed and all(j.attempt == 1 for j in jobs)
    assert sorted(j.wildcards["backend"] for j in ex.sbatch_calls) == ["b21", "b22", "b23"]
    assert ok in ex.active_jobs and len(ex.active_jobs) == 4
    assert "ended LOST (slurmctld does not know the job; sacct: RUNNING), not for its " \
        "memory or time: submitted again as it was" in text
    assert "ended LOST (slurmctld does not know the job; sacct: no record)" in text
    assert "ended HELD (pending: launch failed requeued held" in text
    assert ["scancel", "23"] in fake.scancelled()
    assert all("21" not in c for c in fake.scancelled())  # nothing to cancel


def test_a_job_id_given_out_again_means_the_older_job_was_lost(cluster):
    fake, _ = cluster
    ex = make_executor()
    old = submit(ex, "130", fake_job(backend="numpy-cpu"))
    new = submit(ex, "130", fake_job(backend="numba-cpu"))
    fake.states = {"130": "RUNNING|0:0"}  # the newer job's record
    assert check(ex) == [new]
    assert not ex.failed and ex.sbatch_calls == [old.job]  # submitted again
    assert "SLURM gave its job id 130 to a newer job" in ex.logger.text("warning")
    fake.states = {"130": "COMPLETED|0:0", "1001": "RUNNING|0:0"}
    check(ex)
    assert ex.succeeded == [new] and [j.job for j in ex.active_jobs] == [old.job]


def test_a_lost_job_whose_step_wrote_its_outputs_counts_as_done(cluster, tmp_path):
    fake, clock = cluster
    out = tmp_path / "numpy-cpu.csv"
    out.write_text("rows\n")
    ex = make_executor(quiet_s=60)
    info = submit(ex, "61", fake_job(outputs=[str(out)]))
    fake.states, fake.queue = {"61": "RUNNING|0:0"}, {}
    check(ex)
    clock.now += 61
    check(ex)
    check(ex)
    assert ex.succeeded == [info] and not ex.failed
    assert "had written all its outputs" in ex.logger.text("warning")


def test_trouble_that_lasts_cancels_this_runs_jobs_and_stops(cluster):
    fake, clock = cluster
    ex = make_executor(quiet_s=20, give_up_s=60)
    submit(ex, "31", fake_job())
    submit(ex, "32", fake_job())
    fake.states = {"31": "PENDING|0:0", "32": "PENDING|0:0"}
    fake.queue = {"31": "PENDING|ReqNodeNotAvail, UnavailableNodes:n1",
                  "32": "PENDING|Priority"}
    check(ex)
    clock.now += 21
    check(ex)  # quiet: slurmctld says a node it needs is drained: trouble from here
    clock.now += 30
    check(ex)
    assert not fake.scancelled()
    clock.now += 31
    with pytest.raises(WorkflowError, match="stopped waiting for SLURM"):
        check(ex)
    assert fake.scancelled() == [["scancel", "31", "32"]]


#: what slurmctld said of a job after a restart drained its one node ("Duplicate jobid")
DRAINED = "PENDING|Nodes required for job are DOWN, DRAINED or reserved for jobs in " \
    "higher priority partitions"


@pytest.mark.parametrize(("node_states", "gives_up"), [
    ("debug|drain\n", True),                   # the partition's one node drained
    ("debug|drain*\ndebug|down~\ngpu|idle\n", True),  # every node of its partition
    ("debug|drain\ndebug|mix\n", False),       # another node there can start it
    ("debug|alloc\n", False),                  # busy, not broken: it waits
    ("", False),                               # sinfo said nothing: no verdict
])
def test_pending_where_no_node_can_start_it_is_trouble(cluster, node_states, gives_up):
    """A job pending in a partition whose nodes are all drained or down waits for an
    admin, whatever words slurmctld gives as its reason: the run gives up after
    give_up_s; a partition with a node that can start it is a queue, not trouble."""
    fake, clock = cluster
    ex = make_executor(quiet_s=20, give_up_s=60)
    submit(ex, "61", fake_job())
    fake.states, fake.queue = {"61": "PENDING|0:0"}, {"61": DRAINED}
    fake.partitions, fake.node_states = {"61": "debug"}, node_states
    check(ex)
    for _ in range(3):
        clock.now += 21
        check(ex)
    clock.now += 31
    if gives_up:
        with pytest.raises(WorkflowError, match="stopped waiting for SLURM"):
            check(ex)
        assert fake.scancelled() == [["scancel", "61"]]
    else:
        check(ex)
        assert not fake.scancelled()


def test_a_pending_job_is_explained_within_a_minute_then_at_a_steady_interval(cluster):
    """The driver says why a job waits (slurmctld's reason) at the first status check
    20 s after its submission, long before the quiet warning (900 s by default); an
    ordinary wait is said at info level and again every PENDING_REPEAT_S."""
    fake, clock = cluster
    ex = make_executor(quiet_s=900, give_up_s=3600)
    submit(ex, "71", fake_job(backend="numpy-cpu"))
    fake.states, fake.queue = {"71": "PENDING|0:0"}, {"71": "PENDING|Resources"}
    check(ex)  # at once: pending for 0 s, nothing said yet
    assert "pending" not in ex.logger.text()
    assert ex.next_seconds_between_status_checks <= gslurm.PENDING_LOOK_S
    clock.now += gslurm.PENDING_LOOK_S
    check(ex)
    said = ex.logger.text("info")
    assert "1 job(s) of this run pending" in said and "71 " in said, said
    assert "Resources" in said and "normal on a busy cluster" in said
    assert "pending" not in ex.logger.text("warning")  # a queue is no trouble
    n = said.count("job(s) of this run pending")
    clock.now += 60
    check(ex)  # said already: not again before the interval
    assert ex.logger.text("info").count("job(s) of this run pending") == n
    clock.now += gslurm.PENDING_REPEAT_S
    check(ex)
    assert ex.logger.text("info").count("job(s) of this run pending") == n + 1


def test_a_job_pending_on_a_drained_node_is_trouble_said_within_a_minute(cluster):
    fake, clock = cluster
    ex = make_executor(quiet_s=900, give_up_s=3600)
    submit(ex, "81", fake_job(backend="numpy-cpu"))
    fake.states = {"81": "PENDING|0:0"}
    fake.queue = {"81": "PENDING|ReqNodeNotAvail, UnavailableNodes:n1"}
    clock.now += 40  # the plugin's first status check, 40 s after the submission
    check(ex)
    warned = ex.logger.text("warning")
    assert "81 " in warned and "ReqNodeNotAvail" in warned, warned
    assert "waiting does not cure this" in warned
    assert "stops after 3600 s" in warned and "scontrol update" in warned
    assert ex._watch.trouble_since == clock.now  # counted towards giving up


def test_a_controller_that_does_not_answer_is_said_with_the_pending_jobs(cluster):
    fake, clock = cluster
    ex = make_executor(quiet_s=900, give_up_s=0)
    submit(ex, "91", fake_job())
    fake.states, fake.up = {"91": "PENDING|0:0"}, False
    clock.now += 25
    check(ex)
    warned = ex.logger.text("warning")
    assert "slurmctld does not answer" in warned and "is DOWN" in warned, warned
    assert "waits for ever" in warned


def test_dead_partitions_reads_sinfo_states_with_their_flags():
    lines = "a|drain*\na|down~\nb|idle\nb|drain\nc|mix-\nd|fail\nbroken line\n"
    assert gslurm.dead_partitions(lines) == {"a", "d"}
    assert gslurm.dead_partitions("") == frozenset()


def test_a_busy_queue_is_no_trouble(cluster):
    fake, clock = cluster
    ex = make_executor(quiet_s=20, give_up_s=60)
    submit(ex, "41", fake_job())
    fake.states, fake.queue = {"41": "PENDING|0:0"}, {"41": "PENDING|Priority"}
    for _ in range(10):
        clock.now += 21
        check(ex)
    assert not fake.scancelled()
    assert "no job of this run has changed state" in ex.logger.text("warning")


def test_ctrl_c_cancels_every_job_of_this_run_by_id(cluster):
    """Also those being polled at that moment (out of the active list), and one whose
    submission answers afterwards; never a job this run did not submit."""
    fake, _ = cluster
    ex = make_executor()
    submit(ex, "51", fake_job())
    submit(ex, "52", fake_job())
    ex.active_jobs.clear()  # the status loop holds them while it checks
    ex.cancel()
    assert fake.scancelled() == [["scancel", "51", "52"]]
    assert ex.shut and not ex.wait
    submit(ex, "53", fake_job())
    assert fake.scancelled()[-1] == ["scancel", "53"]
    assert "cancelling this run's SLURM jobs by id: 51 52" in ex.logger.text("info")


@pytest.mark.parametrize("ignored", [True, False])
def test_a_driver_started_with_ctrl_c_ignored_says_so(cluster, ignored):
    """A shell script's background job (`snakemake ... &`) starts with SIGINT ignored and
    keeps it so: Ctrl-C cannot reach the cancel above. The driver says so when it
    starts, with how to stop it; started as a terminal's foreground job, nothing."""
    ex = make_executor(sigint_ignored=ignored)
    text = ex.logger.text("warning")
    if not ignored:
        assert "Ctrl-C" not in text
        return
    pid = os.getpid()
    assert f"this driver (PID {pid}) ignores Ctrl-C" in text
    assert f"`kill -INT {pid}`" in text and f"`kill -TERM {pid}`" in text
    assert "`scancel --name run-1`" in text and "--unlock" in text


def test_the_wait_between_checks_ends_when_the_run_stops():
    ex = make_executor()
    ex.next_seconds_between_status_checks = 3600
    ex.wait = False
    asyncio.run(asyncio.wait_for(ex.sleep(), 5))


def test_install_replaces_the_plugins_executor_once(monkeypatch):
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

    plugin = ExecutorPluginRegistry().get_plugin("slurm")
    monkeypatch.setattr(plugin, "executor", plugin.executor)
    original = plugin.executor
    assert gslurm.install(salvage=None, environ={gslurm.QUIET_VAR: "30"})
    assert issubclass(plugin.executor, original) and plugin.executor.quiet_s == 30
    first = plugin.executor
    assert gslurm.install(environ={})
    assert plugin.executor is first  # not a subclass of a subclass
    with pytest.raises(gslurm.SettingError, match=gslurm.GIVE_UP_VAR):
        gslurm.install(environ={gslurm.GIVE_UP_VAR: "soon"})


# -- the workflow's side ----------------------------------------------------------------------


@pytest.fixture
def plan(tmp_path) -> gw.Plan:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config.update(yaml.safe_load(SMOKE.read_text()))
    config.update(results_dir=str(tmp_path / "results"), logs_dir=str(tmp_path / "logs"),
                  backends=["numpy-cpu", "cupy-gpu"])
    config["environments"] = {"mode": "system"}
    return gw.Plan(gw.check_config(config), cores=lambda: 2)


class Outputs(list):
    """A job's outputs as Snakemake gives them: a list, with names as attributes."""

    def __init__(self, **named: str) -> None:
        super().__init__(named.values())
        self.__dict__.update(named)


def backend_job(plan: gw.Plan, tmp_path: Path, backend: str = "numpy-cpu") -> Any:
    raw = tmp_path / "results" / "raw"
    return SimpleNamespace(
        rule=SimpleNamespace(name="run_backend"), threads=1,
        wildcards=SimpleNamespace(backend=backend), log=[str(tmp_path / f"{backend}.log")],
        output=Outputs(timings=str(raw / f"{backend}.csv"),
                       samples=str(raw / f"{backend}.samples.csv"),
                       lock=str(raw / f"{backend}.lock.txt")))


def test_salvage_writes_every_planned_row_of_a_step_with_the_reason(plan, tmp_path):
    job = backend_job(plan, tmp_path)
    reason = "SLURM job 57 ended CANCELLED by 0 (attempt 1 of 3, not retried: cancelled)"
    assert plan.salvage(job, reason)
    frame = results.read_timings(job.output.timings)
    planned = backend_plan("numpy-cpu", json.loads(plan.step_config(job.wildcards)), 1)
    assert len(frame) == len(planned) > 0
    assert (frame["status"] == "error").all() and (frame["reason"] == reason).all()
    assert Path(job.output.lock).exists() and Path(job.output.samples).exists()
    assert reason in Path(job.log[0]).read_text()


def test_salvage_keeps_rows_the_step_wrote_and_names_the_slurm_state(plan, tmp_path):
    job = backend_job(plan, tmp_path)
    plan.salvage(job, "the step was killed by signal 15 (attempt 3 of 3, no retry left)")
    frame = results.read_timings(job.output.timings)
    frame.loc[0, ["status", "reason"]] = ["ok", ""]
    frame.loc[0, "median_s"] = 1e-6
    results.atomic_write_csv(job.output.timings, frame)
    assert plan.salvage(job, "SLURM job 60 ended CANCELLED by 0 (attempt 3 of 3, ...)")
    again = results.read_timings(job.output.timings)
    assert again.loc[0, "status"] == "ok" and again.loc[0, "reason"] == ""
    assert again.loc[1:, "reason"].str.endswith(
        "no retry left); SLURM job 60 ended CANCELLED by 0 (attempt 3 of 3, ...)").all()


def test_salvage_of_an_mpi_step_and_the_probe(plan, tmp_path):
    cfg = copy.deepcopy(dict(plan.config))
    cfg["mpi"]["backends"] = ["numpy-cpu"]
    out = tmp_path / "results" / "mpi" / "raw"
    job = SimpleNamespace(
        rule=SimpleNamespace(name="mpi_job"), threads=2, log=[],
        wildcards=SimpleNamespace(job="reduction", backend="numpy-cpu", ranks="2"),
        output=Outputs(rows=str(out / "reduction.numpy-cpu.n2.csv"),
                       samples=str(out / "reduction.numpy-cpu.n2.samples.csv")))
    assert plan.salvage(job, "SLURM job 70 ended NODE_FAIL (attempt 3 of 3, no retry left)")
    rows = pd.read_csv(job.output.rows)
    expected = mpi_step.plan("reduction", "numpy-cpu", 2, plan.mpi)
    assert len(rows) == len(expected) > 0 and (rows["status"] == "error").all()
    assert rows["reason"].str.startswith("SLURM job 70 ended NODE_FAIL").all()
    host = tmp_path / "results" / "env" / "host.json"
    probe = SimpleNamespace(rule=SimpleNamespace(name="probe"), log=[], wildcards={},
                            output=[str(host)])
    assert plan.salvage(probe, "SLURM job 71 ended TIMEOUT")
    assert json.loads(host.read_text())["probe_error"] == "SLURM job 71 ended TIMEOUT"
    collect = SimpleNamespace(rule=SimpleNamespace(name="collect"), log=[], wildcards={},
                              output=[])
    assert not plan.salvage(collect, "x")


def test_one_rank_mpi_step_is_no_mpi_job_for_the_plugin(plan):
    wc = SimpleNamespace(job="reduction", backend="numpy-cpu")
    assert plan.mpi_launcher_kind(SimpleNamespace(**vars(wc), ranks="1")) == ""
    assert plan.mpi_launcher_kind(SimpleNamespace(**vars(wc), ranks="2")) in ("srun", "mpiexec")


def test_shipped_profile_submits_one_rank_steps_as_one_task_jobs():
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    raw = profile["set-resources"]["mpi_job"]["mpi"]
    assert gw.evaluate_resource(raw, SimpleNamespace(ranks="1", backend="numpy-cpu")) == ""
    assert gw.evaluate_resource(raw, SimpleNamespace(ranks="2", backend="numpy-cpu"))
    steps = [("reduction", "numpy-cpu", 1), ("reduction", "numpy-cpu", 2)]
    gw.check_mpi_resources({"mpi_job": {"mpi": raw}}, steps)  # accepted
    with pytest.raises(gw.SetupError, match=r"set-resources\.mpi_job\.mpi: 'srun --mpi=pmix'"):
        gw.check_mpi_resources({"mpi_job": {"mpi": "srun --mpi=pmix"}}, steps)
    gw.check_mpi_resources({"mpi_job": {"mpi": "srun --mpi=pmix"}}, steps[1:])


@pytest.mark.parametrize(("runtime_s", "margin_s"), [
    (0, 0), (60, 30), (120, 30), (300, 30), (600, 60), (3600, 360), (20, 10)])
def test_time_limit_margin_scales_with_the_runtime(runtime_s, margin_s):
    """The larger of 10 % and 30 s, at most half the runtime (a 1-minute job keeps 30 s
    to write its rows; the old margin kept 6 s, and writing took 5)."""
    assert time_limit_margin_s(runtime_s) == pytest.approx(margin_s)


def test_mpi_step_stops_before_its_jobs_runtime():
    assert mpi_step.job_time_limit_s(600, 0) == 600  # no scheduler: mpi.time_limit_s
    assert mpi_step.job_time_limit_s(600, 30) == 600
    assert mpi_step.job_time_limit_s(600, 5) == 270  # 300 s less 30 s
    step = mpi_step.Step("reduction", "numpy-cpu", 1, {"mpi": {"time_limit_s": 600}},
                         log=io.StringIO())
    assert step.time_limit == 600


def test_a_results_folder_stays_claimed_while_an_earlier_runs_jobs_live(cluster, tmp_path):
    """The run notes its SLURM job name in the results folder at its first submission;
    a later run there is refused while squeue lists jobs of that name (a driver ended
    before its scancel went through), and told when squeue cannot say."""
    ex = make_executor()
    type(ex).results_dir = str(tmp_path)
    submit(ex, "61", fake_job(backend="numpy-cpu"))
    assert (tmp_path / gslurm.RUN_FILE).read_text() == "run-1\n"
    asked: list[list[str]] = []

    def squeue(answer: tuple[int, str, str]):
        return lambda cmd: asked.append(cmd) or answer

    said = gslurm.earlier_jobs(tmp_path, squeue((0, "61|RUNNING\n62|PENDING\n", "")))
    assert asked[-1] == ["squeue", "-h", "--name", "run-1", "-o", "%i|%T"]
    assert said.startswith(f"config key results_dir: {str(tmp_path)!r} is still written "
                           "by SLURM jobs of an earlier run")
    assert "(61, 62, job name run-1)" in said and "`scancel 61 62`" in said
    assert gslurm.earlier_jobs(tmp_path, squeue((0, "", ""))) == ""
    down = gslurm.earlier_jobs(tmp_path, squeue((1, "", "Unable to contact slurm controller")))
    assert down.startswith("cannot tell whether") and "scancel --name run-1" in down
    assert gslurm.earlier_jobs(tmp_path / "none", squeue((0, "9|RUNNING", ""))) == ""
