"""The SLURM executor plugin's executor with a status check that holds.

A subclass of ``snakemake_executor_plugin_slurm.Executor``: submission (sbatch), settings,
logs and the efficiency report are the plugin's. Replaced here:

- ``check_active_jobs``: any state SLURM ends a job with (``CANCELLED by <uid>``,
  ``PREEMPTED``, ``NODE_FAIL``, ``OUT_OF_MEMORY``, ``TIMEOUT``, ``BOOT_FAIL``,
  ``DEADLINE``), and ``FAILED`` with a job step that peaked at its memory request
  (SLURM's sampled memory limit), ends the job. A cancel is recorded at once; an end
  about memory or time is retried while attempts are left (the next attempt asks more);
  one that is not (preempted, a node failure) is submitted again as it was (``run_job``
  below). On the last attempt the workflow's
  salvage keeps the rows the step had finished and writes the others as ``error`` rows
  naming the SLURM state, job id and, for memory, requested and peak memory; the job
  counts as done, so collect and the report go on. When the run goes quiet (no state change
  for ``GPUBENCH_SLURM_QUIET_S``, or the status query failing) the driver asks
  slurmctld what it knows, warns naming the run's job ids and the recovery steps, fails
  jobs slurmctld lost or holds for ever, and after ``GPUBENCH_SLURM_GIVE_UP_S`` of
  trouble cancels its jobs and stops.
- ``cancel``: Ctrl-C cancels every job this run submitted and has not seen end, by id
  (also those being polled at that moment, which the plugin misses), with a bounded
  wait; a job whose submission answers afterwards is cancelled as it arrives.
- ``run_job``: the plugin's submission, tried again while slurmctld does not answer
  sbatch (2 s, doubling to 30 s between tries, for at most ``GPUBENCH_SLURM_GIVE_UP_S``
  of outage): an outage spends no attempt, so the step's memory and time do not grow
  for it. A job slurmctld lost, held for ever, whose node failed or that was preempted
  is submitted again as it was, as many times as the step has attempts, without
  spending one; jobs lost by a controller restart are looked for as soon as it answers
  again, and whenever a job has no accounting record 20 s after its submission.
- ``sleep``: the wait between status checks ends as soon as the run stops.

A driver started with SIGINT ignored (a shell script's background job, ``snakemake ...
&``) keeps it ignored, as every program does, so Ctrl-C cannot cancel its jobs; it says
so when it starts, with how to stop it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import AsyncGenerator, Iterable
from datetime import datetime, timedelta
from typing import Any

from snakemake_executor_plugin_slurm import job_status_query as status_query
from snakemake_interface_common.exceptions import WorkflowError
from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo

from gpubench import slurm

#: seconds a SLURM client may take before the driver gives up on it (clients retry a
#: lost controller for about 10 s, then fail)
CLIENT_TIMEOUT_S = 30.0
#: longest wait between status checks (the plugin's is 180 s)
MAX_INTERVAL_S = 60.0
#: a job slurmctld does not know this long after its submission was lost
MIN_AGE_S = 10.0
#: a job without an accounting record this long after its submission gets slurmctld
#: asked whether it knows it (sacct lists a job within a second or so); at most this
#: often
NO_RECORD_S = 20.0


def clock() -> float:
    """Monotonic seconds (the watch's clock; tests replace it)."""
    return time.monotonic()


def run_client(cmd: list[str], timeout: float = CLIENT_TIMEOUT_S) -> tuple[int, str, str]:
    """(returncode, stdout, stderr) of a SLURM client; 124 when it timed out or is
    missing."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", f"{cmd[0]} timed out after {timeout:.0f} s"
    except OSError as exc:
        return 124, "", f"{cmd[0]}: {exc}"
    return out.returncode, out.stdout, out.stderr


async def query_states(cmd: list[str], timeout: float = CLIENT_TIMEOUT_S
                       ) -> tuple[dict[str, str] | None, str]:
    """({jobid: state}, '') from a status command, or (None, why it failed)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        return None, f"{cmd[0]}: {exc}"
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None, f"{cmd[0]} timed out after {timeout:.0f} s"
    if proc.returncode:
        text = err.decode(errors="replace").strip().splitlines()
        return None, (text[-1] if text else f"{cmd[0]} exited with {proc.returncode}")
    return slurm.parse_states(out.decode(errors="replace")), ""


def describe(job: Any) -> str:
    """``run_backend backend=numpy-cpu``, or a group job's members."""
    if job.is_group():
        return f"group {job.name} ({', '.join(sorted(describe(j) for j in job.jobs))})"
    wildcards = getattr(job, "wildcards", None) or {}
    items = wildcards.items() if hasattr(wildcards, "items") else []
    return " ".join([job.rule.name, *(f"{k}={v}" for k, v in items)])


def members(job: Any) -> list[Any]:
    return list(job.jobs) if job.is_group() else [job]


def executor_class(base: type) -> type:
    """The plugin's executor class ``base`` with the status check, cancel and sleep of
    this module (``base`` itself when it already is one)."""
    if getattr(base, "_gpubench", False):
        return base

    class Executor(base):  # type: ignore[misc, valid-type]
        _gpubench = True
        #: set by gpubench.slurm.install
        salvage_job: slurm.Salvage | None = None
        quiet_s: float = slurm.QUIET_DEFAULT_S
        give_up_s: float = slurm.GIVE_UP_DEFAULT_S
        results_dir: str | None = None

        def __post_init__(self, *args: Any, **kwargs: Any) -> None:
            super().__post_init__(*args, **kwargs)
            #: every job this run submitted and has not seen end: {slurm id: its newest
            #: submission} (a controller that lost its state gives an id out again)
            self._mine: dict[str, SubmittedJobInfo] = {}
            #: submissions to end at the next status check, whatever sacct says of their
            #: id: {id(submission): (state, detail)}, and those found lost or held, ended
            #: while sacct still lists them as active
            self._superseded: dict[int, tuple[str, str]] = {}
            self._verdicts: dict[int, tuple[str, str]] = {}
            #: when each submission was reported: {id(submission): monotonic seconds}
            self._submitted: dict[int, float] = {}
            self._cancelling = False
            #: the submission this thread is trying (run_job): sbatch's failure, held
            #: back from Snakemake while slurmctld may only be away
            self._try = threading.local()
            #: since when sbatch has found slurmctld silent, None while it answers:
            #: one outage, however many submissions wait through it
            self._outage_since: float | None = None
            self._outage_lock = threading.Lock()
            #: slurmctld came back from an outage: ask it which jobs it lost
            self._look_for_lost = False
            self._last_lost_look: float | None = None
            #: {id(Snakemake job): times submitted again as it was}
            self._resubmits: dict[int, int] = {}
            #: whether the results folder notes this run (at its first submission)
            self._recorded = False
            self._watch = slurm.Watch(self.quiet_s, self.give_up_s, clock())
            self.logger.info(
                "gpubench: SLURM status checks by gpubench.slurm (the plugin's executor "
                f"with a status check that holds); quiet warning after {self.quiet_s:g} s, "
                "give up after "
                + (f"{self.give_up_s:g} s" if self.give_up_s else "never")
                + " of trouble")
            if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
                # inherited (a script's background job): Python, Snakemake and this
                # executor leave it so, and Ctrl-C never reaches the cancel below
                self.logger.warning(slurm.ctrl_c_ignored(os.getpid(), self.run_uuid))

        # -- submissions ---------------------------------------------------------------

        def report_job_submission(self, job_info: SubmittedJobInfo,
                                  register_job: bool = True) -> None:
            super().report_job_submission(job_info, register_job=register_job)
            if job_info.external_jobid is None:
                return
            jobid = str(job_info.external_jobid)
            if not self._recorded and self.results_dir:
                self._recorded = True
                try:  # the next run there checks that no job of this one lives on
                    slurm.record_run(self.results_dir, self.run_uuid)
                except OSError as exc:
                    self.logger.warning(f"gpubench: cannot note this run in "
                                        f"{self.results_dir}: {exc}")
            older = self._mine.get(jobid)
            if older is not None and older is not job_info:
                # only a controller that lost its state gives an id out twice
                self._superseded[id(older)] = (
                    "LOST", f"SLURM gave its job id {jobid} to a newer job of this run: "
                    "slurmctld lost its state")
                self.logger.warning(f"gpubench: {describe(older.job)}: SLURM gave its job "
                                    f"id {jobid} to {describe(job_info.job)}; slurmctld "
                                    "lost its state, the older job counts as lost")
            self._mine[jobid] = job_info
            self._submitted[id(job_info)] = clock()
            self._watch.change(clock(), moved=False)
            if self._cancelling:  # its sbatch answered after Ctrl-C
                self._scancel([jobid])

        def _report_job_error_threadsafe(self, job_info: SubmittedJobInfo,
                                         msg: str) -> None:
            if getattr(self._try, "active", False) and job_info.external_jobid is None:
                self._try.error = msg  # run_job decides: wait for slurmctld, or fail
                return
            super()._report_job_error_threadsafe(job_info, msg)

        def run_job(self, job: Any) -> None:
            """The plugin's submission; while sbatch finds slurmctld silent (nothing was
            submitted), wait and try again instead of failing the step, which would
            spend an attempt and grow its memory and time for a fault not its own."""
            wait: float | None = None
            while True:
                self._try.active, self._try.error = True, None
                try:
                    super().run_job(job)
                finally:
                    self._try.active = False
                error = self._try.error
                if error is None:
                    self._controller_answers()
                    return
                if not slurm.unreachable(error):
                    super()._report_job_error_threadsafe(SubmittedJobInfo(job), error)
                    return
                if not self.wait or self._cancelling:
                    return  # the run is stopping: nothing to submit
                wait = slurm.next_submit_wait(wait)
                left = self._outage(job, error, wait)
                if left is not None and left <= 0:
                    super()._report_job_error_threadsafe(SubmittedJobInfo(job), (
                        f"{error.strip()}\ngpubench: slurmctld has not answered sbatch for "
                        f"{self.give_up_s:g} s ({slurm.GIVE_UP_VAR}): this submission "
                        "gives up. "))
                    return
                deadline = time.monotonic() + (wait if left is None else min(wait, left))
                while self.wait and not self._cancelling and time.monotonic() < deadline:
                    time.sleep(0.2)

        def _outage(self, job: Any, error: str, wait: float) -> float | None:
            """Note a submission that found slurmctld silent; the seconds the outage may
            still be waited out (None: without end)."""
            said = re.search(r"error message was '(.*?)'", error, re.S)
            said_text = " ".join((said.group(1) if said else error).split())[:300]
            now = clock()
            with self._outage_lock:
                first = self._outage_since is None
                if first:
                    self._outage_since = now
                since = self._outage_since
            left = None if not self.give_up_s else self.give_up_s - (now - since)
            bound = (f"for at most {self.give_up_s:g} s of outage ({slurm.GIVE_UP_VAR})"
                     if self.give_up_s else f"without end ({slurm.GIVE_UP_VAR}=0)")
            if first:
                self.logger.warning(
                    f"gpubench: slurmctld does not answer sbatch ({said_text}); this "
                    "run's submissions wait for it and try again "
                    f"({slurm.SUBMIT_WAIT_FIRST_S:g} s, doubling to "
                    f"{slurm.SUBMIT_WAIT_MAX_S:g} s between tries) {bound}: no attempt "
                    "is spent and no step's memory or time grows for it. Waiting: "
                    f"{describe(job)}")
            else:
                self.logger.info(
                    f"gpubench: {describe(job)}: slurmctld still does not answer sbatch "
                    f"({now - since:.0f} s); next try in {wait:g} s")
            return left

        def _controller_answers(self) -> None:
            """A submission went through: an outage is over, and slurmctld is to be
            asked which of the run's jobs it lost in it."""
            with self._outage_lock:
                since, self._outage_since = self._outage_since, None
            if since is not None:
                self._look_for_lost = True
                self.logger.warning(
                    "gpubench: slurmctld answers sbatch again, "
                    f"{clock() - since:.0f} s after the first submission it did not "
                    "answer; the waiting submissions go on, none spent an attempt")

        def _newest(self, job_info: SubmittedJobInfo) -> bool:
            """Whether slurmctld's job of this id is this submission."""
            return self._mine.get(str(job_info.external_jobid)) is job_info

        def _done(self, job_info: SubmittedJobInfo, moved: bool = True) -> None:
            if self._newest(job_info):
                self._mine.pop(str(job_info.external_jobid), None)
                self._watch.forget(str(job_info.external_jobid), clock(), moved)
            self._superseded.pop(id(job_info), None)
            self._verdicts.pop(id(job_info), None)
            self._submitted.pop(id(job_info), None)

        # -- status checks -------------------------------------------------------------

        def _status_command(self) -> tuple[str, list[str]]:
            """sacct (the default) or squeue, chosen as the plugin chooses."""
            name = self.get_status_command()
            sacct = status_query.is_query_tool_available("sacct")
            if name == "squeue" and sacct:
                age = status_query.get_min_job_age()
                init = getattr(self.workflow.executor_settings,
                               "init_seconds_before_status_checks", 40) or 40
                if age is None or age < 3 * init:
                    name = "sacct"
            if name == "sacct" and not sacct:
                name = "squeue"
            if name == "squeue":
                return name, shlex.split(status_query.query_job_status_squeue(self.run_uuid))
            # the plugin's sacct query, with the exit code (a job killed by a signal)
            start = f"{datetime.now() - timedelta(days=2):%Y-%m-%dT%H:00}"
            return name, ["sacct", "-X", "--parsable2", "--clusters", "all", "--noheader",
                          "--format=JobIdRaw,State,ExitCode", "--starttime", start,
                          "--endtime", "now", "--name", self.run_uuid]

        async def check_active_jobs(self, active_jobs: list[SubmittedJobInfo]
                                    ) -> AsyncGenerator[SubmittedJobInfo, None]:
            init = getattr(self.workflow.executor_settings,
                           "init_seconds_before_status_checks", 40) or 40
            if not active_jobs:
                self.next_seconds_between_status_checks = init
                return
            name, cmd = self._status_command()
            states: dict[str, str] | None = None
            why = ""
            attempts = max(1, int(self.workflow.executor_settings.status_attempts or 1))
            for attempt in range(attempts):
                if not self.wait:
                    break
                async with self.status_rate_limiter:
                    states, why = await query_states(cmd)
                if states is not None:
                    missing = [j for j in active_jobs
                               if slurm.lookup(states, str(j.external_jobid)) is None
                               and str(j.external_jobid) in self._watch.states]
                    if not missing:
                        break
                elif attempt + 1 < attempts:
                    await asyncio.sleep(1)
            now = clock()
            seen = None if states is None else {
                str(j.external_jobid): s for j in active_jobs
                if (s := slurm.lookup(states, str(j.external_jobid))) is not None}
            submitted = {jobid: self._submitted.get(id(info), now)
                         for jobid, info in dict(self._mine).items()}
            self._watch.observe(now, seen, f"{shlex.join(cmd[:1])}: {why}" if why else "",
                                submitted)
            finished = False
            if states is not None and self.wait and self._lost_look_due(active_jobs, states,
                                                                         now):
                self._find_lost(active_jobs, states, now)
            if states is None:
                self.logger.debug(f"gpubench: status query failed: {why}")
                for j in active_jobs:
                    yield j
            else:
                for j in active_jobs:
                    raw = slurm.lookup(states, str(j.external_jobid))
                    verdict = self._verdicts.get(id(j))
                    if id(j) in self._superseded:  # sacct's record is the newer job's
                        raw = "{} ({})".format(*self._superseded[id(j)])
                    elif verdict and (raw is None or slurm.classify(raw) == "active"):
                        sacct = slurm.show_state(raw) if raw else "no record"
                        raw = f"{verdict[0]} ({verdict[1]}; sacct: {sacct})"
                    elif raw is None:  # not in sacct yet
                        yield j
                        continue
                    kind = slurm.classify(raw)
                    if kind == "active":
                        yield j
                    elif kind == "done":
                        self._done(j)
                        finished = True
                        self.report_job_success(j)
                        self._drop_log(j)
                    elif kind == "failed" and (
                            note := self._memory_note(str(j.external_jobid), raw, name)):
                        # killed for memory: SLURM ended it, whatever its exit status
                        if self._ended(j, raw, name, note):
                            finished = True
                        else:
                            yield j
                    elif kind == "failed":
                        self._done(j)
                        finished = True
                        self.report_job_error(
                            j, msg=f"SLURM job {j.external_jobid} ended "
                            f"{slurm.show_state(raw)}; see its SLURM log "
                            f"{j.aux.get('slurm_logfile')}. ",
                            aux_logs=[str(j.aux.get("slurm_logfile"))])
                    elif self._ended(j, raw, name):
                        finished = True
                    else:
                        yield j
            if states is not None:
                self._verdicts.clear()
            if self._watch.warn_due(clock()) and self.wait:
                self._warn_quiet(active_jobs)
            elif self._watch.look_due(clock()) and self.wait:
                self._say_pending()
            if self._watch.give_up_due(clock()) and self.wait:
                self._give_up()
            # the plugin's back-off, in steps of Snakemake's --seconds-between-status-checks
            # (10 s by default, as the plugin's) and capped lower; at once when jobs are
            # to be ended
            step = getattr(getattr(self.workflow, "remote_execution_settings", None),
                           "seconds_between_status_checks", None) or 10
            self.next_seconds_between_status_checks = 1 if (
                self._verdicts or self._superseded) else (
                init if finished else min(self.next_seconds_between_status_checks + step,
                                          MAX_INTERVAL_S))
            if self._watch.unexplained():  # a pending job's reason is said within a minute
                self.next_seconds_between_status_checks = min(
                    self.next_seconds_between_status_checks, slurm.PENDING_LOOK_S)

        def _lost_look_due(self, active_jobs: list[SubmittedJobInfo],
                           states: dict[str, str], now: float) -> bool:
            """Whether to ask slurmctld which jobs it lost: it came back from an outage,
            or a job has had no accounting record for NO_RECORD_S (a job submitted just
            before slurmctld died may never reach sacct, nor run); at most every
            NO_RECORD_S."""
            if self._last_lost_look is not None and now - self._last_lost_look < NO_RECORD_S:
                return False
            return self._look_for_lost or any(
                slurm.lookup(states, str(j.external_jobid)) is None
                and now - self._submitted.get(id(j), now) >= NO_RECORD_S
                for j in active_jobs)

        def _find_lost(self, active_jobs: list[SubmittedJobInfo], states: dict[str, str],
                       now: float) -> None:
            """Jobs slurmctld, answering, does not know (or holds for ever after a failed
            launch) are ended at this status check: submitted again as they were."""
            self._last_lost_look = now
            diagnosis = self._diagnose()
            if not diagnosis.up or diagnosis.queue is None:
                return  # asked again once it answers
            self._look_for_lost = False
            candidates = {str(j.external_jobid): j for j in active_jobs
                          if now - self._submitted.get(id(j), now) >= MIN_AGE_S
                          and slurm.classify(slurm.lookup(states, str(j.external_jobid))
                                             or "PENDING") == "active"}
            lost = diagnosis.lost(candidates)
            held = diagnosis.held() & set(candidates)
            if not (lost or held):
                return
            self.logger.warning(
                "gpubench: slurmctld does not know these jobs of this run (lost in an "
                "outage) or holds them for ever; they are submitted again as they were: "
                + ", ".join(f"{jobid} {describe(candidates[jobid].job)}"
                            for jobid in sorted(lost | held, key=slurm.jobid_key)))
            pending = diagnosis.pending()
            self._verdicts.update({id(candidates[j]): (
                "LOST", "slurmctld does not know the job") for j in lost})
            self._verdicts.update({id(candidates[j]): (
                "HELD", f"pending: {pending.get(j, '?')}") for j in held})

        def _resubmit(self, j: SubmittedJobInfo, raw: str, attempts: int) -> None:
            """Submit a job SLURM ended, not for its resources, again as it was."""
            job = j.job
            count = self._resubmits.get(id(job), 0) + 1
            self._resubmits[id(job)] = count
            self.logger.warning(
                f"gpubench: {describe(job)}: SLURM job {j.external_jobid} ended "
                f"{slurm.show_state(raw)}, not for its memory or time: submitted again "
                f"as it was (attempt {job.attempt} of {attempts} kept; resubmission "
                f"{count} of at most {attempts})")
            self._job_submission_executor.submit(self.run_job, job)

        def _memory_note(self, jobid: str, raw: str, command: str) -> str:
            """``out of memory: ...`` (requested and peak memory, from sacct's job steps)
            when the job was ended for memory, else ''."""
            if command != "sacct":
                return ""
            rc, out, _ = run_client(["sacct", "-j", jobid, "-n", "-P", "-o",
                                     "JobID,State,ExitCode,MaxRSS,ReqMem"], 15)
            return slurm.memory_note(out, raw) if rc == 0 else ""

        def _ended(self, j: SubmittedJobInfo, raw: str, command: str,
                   note: str | None = None) -> bool:
            """A job SLURM ended: retry it, or record it. False: wait (SLURM requeues
            it, or it is still completing: the step's processes may still write).
            ``note``: what is known of its memory, when already asked."""
            state = slurm.base_state(raw)
            jobid = str(j.external_jobid)
            settings = self.workflow.executor_settings
            if state in ("PREEMPTED", "NODE_FAIL") and getattr(settings, "requeue", False):
                return False  # SLURM requeues it
            if state == "NODE_FAIL":
                self._note_failed_node(jobid)
            if state == "HELD" and self._newest(j):
                self._scancel([jobid])  # this run's own: it must never start late
            elif state != "LOST" and command == "sacct" and self._completing(jobid):
                return False
            self._done(j, moved=state not in ("LOST", "HELD"))
            job = j.job
            attempt, attempts = int(job.attempt), int(job.restart_times) + 1
            log = j.aux.get("slurm_logfile")
            if note is None:
                note = "" if state in ("LOST", "HELD") else \
                    self._memory_note(jobid, raw, command)
            resubmits = self._resubmits.get(id(job), 0)
            exhausted = slurm.base_state(raw) in slurm.NOT_ABOUT_RESOURCES and \
                resubmits >= attempts  # never retried with more memory and time
            reason = slurm.failure_reason(jobid, raw, attempt, attempts,
                                          str(log) if log else None, note,
                                          resubmits if exhausted else 0)
            outputs = [f for m in members(job) for f in m.output]
            if state == "LOST" and outputs and all(os.path.exists(f) for f in outputs):
                self.logger.warning(
                    f"gpubench: {describe(job)}: SLURM job {jobid} ended "
                    f"{slurm.show_state(raw)}, but its step had written all its outputs: "
                    "it counts as done")
                self.report_job_success(j)
                return True
            if self.wait and not self._cancelling and slurm.resubmitted(
                    raw, resubmits, attempts):
                self._resubmit(j, raw, attempts)
                return True
            if not exhausted and slurm.retried(raw, attempt, attempts):
                self.report_job_error(j, msg=reason + "; Snakemake retries it. ",
                                      aux_logs=[str(log)])
                return True
            if self._salvage(job, reason):
                self.logger.warning(
                    f"gpubench: {describe(job)}: {reason}. The rows its step had finished "
                    "are kept, the measurements not yet made are recorded as error rows "
                    "with this reason; to measure them again: snakemake "
                    "<same options> --forcerun "
                    + " ".join(shlex.quote(str(f)) for m in members(job) for f in
                               m.output[:1]))
                self.report_job_success(j)
            else:
                self.report_job_error(j, msg=reason + ". ", aux_logs=[str(log)])
            return True

        def _salvage(self, job: Any, reason: str) -> bool:
            salvage = type(self).salvage_job
            if salvage is None:
                return False
            ok = True
            for member in members(job):
                try:
                    ok = bool(salvage(member, reason)) and ok
                except Exception as exc:  # noqa: BLE001 - a failed record is a failed job
                    self.logger.error(f"gpubench: could not record {describe(member)}: "
                                      f"{type(exc).__name__}: {exc}")
                    ok = False
            return ok

        def _completing(self, jobid: str) -> bool:
            """Whether slurmctld still ends the job's processes (squeue state CG)."""
            rc, out, _ = run_client(["squeue", "-h", "-j", jobid, "-o", "%t"], 15)
            return rc == 0 and out.strip() == "CG"

        def _note_failed_node(self, jobid: str) -> None:
            """Exclude a failed node from later submissions, as the plugin does."""
            rc, out, _ = run_client(["sacct", "-j", jobid, "-n", "-X", "-o",
                                     "nodelist%-256"], 15)
            if rc == 0 and out.strip():
                self._failed_nodes.add(out.strip())

        def _drop_log(self, j: SubmittedJobInfo) -> None:
            if self.workflow.executor_settings.keep_successful_logs:
                return
            log = j.aux.get("slurm_logfile")
            try:
                if log is not None and log.exists():
                    log.unlink()
            except OSError as exc:
                self.logger.warning(f"Could not remove SLURM log file {log}: {exc}")

        # -- a quiet scheduler ---------------------------------------------------------

        def _diagnose(self) -> slurm.Diagnosis:
            rc, out, err = run_client(["scontrol", "ping"], 15)
            # "Slurmctld(primary) at c1 is DOWN", without the banner of stars after it
            text = " ".join((out + err).split("*")[0].split())[:200]
            up = rc == 0 and " is UP" in out
            queue = None
            if up:
                # every cluster this run submitted to (a job elsewhere is not lost)
                where = ["--clusters=all"] if self._submitted_job_clusters else []
                rc, out, _ = run_client(["squeue", "-h", "-t", "all", *where, "--name",
                                         self.run_uuid, "-o", "%i|%T|%r"], 20)
                queue = slurm.parse_states(out) if rc == 0 else None
            partitions: dict[str, str] = {}
            dead: frozenset[str] = frozenset()
            if queue:
                rc, out, _ = run_client(["squeue", "-h", "-t", "all", *where, "--name",
                                         self.run_uuid, "-o", "%i|%P"], 20)
                partitions = slurm.parse_states(out) if rc == 0 else {}
                rc, out, _ = run_client(["sinfo", "-h", "-o", "%R|%t"], 15)
                dead = slurm.dead_partitions(out) if rc == 0 else frozenset()
            rc, out, _ = run_client(["sinfo", "-h", "-R", "-o", "%n: %T, %E"], 15) \
                if up else (1, "", "")
            nodes = [" ".join(line.split()) for line in out.splitlines() if line.strip()]
            return slurm.Diagnosis(up, text, queue, nodes, partitions, dead)

        def _warn_quiet(self, active_jobs: list[SubmittedJobInfo]) -> None:
            now = clock()
            diagnosis = self._diagnose()
            mine = dict(self._mine)  # a copy: submissions are reported from other threads
            # jobs sacct lists as active or not at all (a job submitted just before the
            # controller lost its state never reaches sacct), and not just submitted
            active = [jobid for jobid, info in mine.items()
                      if now - self._submitted.get(id(info), now) >= MIN_AGE_S
                      and slurm.classify(self._watch.states.get(jobid, "PENDING")) == "active"]
            lost = diagnosis.lost(active)
            held = diagnosis.held() & set(mine)
            self._watch.diagnosed(now, diagnosis.trouble(active))
            self._watch.warned(now)
            jobs = {jobid: describe(info.job) for jobid, info in mine.items()}
            self.logger.warning(slurm.quiet_warning(self._watch, now, jobs, diagnosis))
            # slurmctld answers and lost these jobs (or holds them after a failed launch
            # for ever): end them at the next status check, submitted again as they were
            if lost or held:
                self.logger.warning(
                    "gpubench: ending the jobs slurmctld lost or holds for ever at the next "
                    "status check (submitted again as they were): "
                    + ", ".join(sorted(lost | held, key=slurm.jobid_key)))
                pending = diagnosis.pending()
                self._verdicts.update({id(mine[j]): (
                    "LOST", "slurmctld does not know the job") for j in lost})
                self._verdicts.update({id(mine[j]): (
                    "HELD", f"pending: {pending.get(j, '?')}") for j in held})

        def _say_pending(self) -> None:
            """Say why the run's jobs are pending; a reason no waiting cures (or a
            controller that does not answer) is trouble: warned, and counted towards
            giving up."""
            now = clock()
            diagnosis = self._diagnose()
            jobs = {jobid: describe(info.job) for jobid, info in dict(self._mine).items()}
            trouble, text = slurm.pending_message(self._watch, now, jobs, diagnosis)
            self._watch.looked(now)
            if trouble:
                self._watch.diagnosed(now, True)
                self.logger.warning(text)
            else:
                self.logger.info(text)

        def _give_up(self) -> None:
            ids = sorted(dict(self._mine), key=slurm.jobid_key)
            self.logger.error(
                f"gpubench: SLURM has been in trouble for over {self.give_up_s:g} s "
                f"({slurm.GIVE_UP_VAR}); cancelling this run's SLURM jobs "
                f"({', '.join(ids) or 'none'}) and stopping.\n"
                + slurm.recovery_steps(ids, stopped=True))
            self._scancel(ids)
            raise WorkflowError("gpubench: stopped waiting for SLURM (see the warning above)")

        # -- stopping ------------------------------------------------------------------

        def _scancel(self, ids: Iterable[str]) -> bool:
            ids = sorted(set(ids), key=slurm.jobid_key)
            if not ids:
                return True
            cmd = ["scancel", *ids]
            if self._submitted_job_clusters:
                cmd.append("--clusters=all")
            rc, _, err = run_client(cmd, 20)
            if rc:
                self.logger.error(
                    f"gpubench: `{shlex.join(cmd)}` failed ({err.strip()[-300:]}); run it "
                    "yourself once slurmctld answers (these jobs are this run's own)")
            return rc == 0

        def cancel_jobs(self, active_jobs: list[SubmittedJobInfo]) -> None:
            ids = set(dict(self._mine)) | {str(j.external_jobid) for j in active_jobs
                                     if j.external_jobid is not None}
            if ids:
                self.logger.info(
                    "gpubench: cancelling this run's SLURM jobs by id: "
                    + " ".join(sorted(ids, key=slurm.jobid_key)))
            self._scancel(ids)

        def cancel(self) -> None:
            self._cancelling = True
            with self.lock:
                self.wait = False  # ends the status loop's sleep and retries at once
                active = list(self.active_jobs)
            self.cancel_jobs(active)
            self.shutdown()

        async def sleep(self) -> None:
            deadline = time.monotonic() + self.next_seconds_between_status_checks
            while self.wait and (left := deadline - time.monotonic()) > 0:
                await asyncio.sleep(min(left, 0.5))

    Executor.__qualname__ = Executor.__name__ = "Executor"
    Executor.__module__ = __name__
    return Executor
