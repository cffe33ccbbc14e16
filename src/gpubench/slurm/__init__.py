"""What the workflow's SLURM executor decides, as plain functions (no SLURM needed).

snakemake-executor-plugin-slurm 2.8.0, the newest release, reads ``sacct`` and fails a
job only when its state is one of a fixed set of words, so a job that SLURM ends as
``CANCELLED by 0`` (how sacct writes an scancel) or ``PREEMPTED`` reads as still running
and the run waits forever; a controller that lost track of its jobs is not noticed at
all. :mod:`gpubench.slurm.executor` subclasses the plugin's executor and uses these
functions for its status checks; :func:`install` puts it in place of the plugin's class,
so ``executor: slurm`` and every ``slurm-*`` setting work as before (docs/slurm.md, "When SLURM
misbehaves").

Settings (environment variables, read before any job; a bad value is refused naming it):

- ``GPUBENCH_SLURM_QUIET_S`` (900): warn when no job of the run has changed state for
  this long, or at once when ``sacct``/``squeue`` fail; the warning names the run's jobs
  and the recovery steps, and repeats at this interval while it lasts.
- ``GPUBENCH_SLURM_GIVE_UP_S`` (3600, 0: never): when SLURM has been in trouble this
  long (its controller down, status queries failing, jobs lost, held or waiting on
  drained nodes), cancel the run's own jobs by id and end the run. A submission that
  finds slurmctld silent waits for it (2 s, doubling to 30 s between tries, no attempt
  spent) for at most this long, then fails.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

#: states after which SLURM never runs the job again: SLURM ended it. ``FAILED`` (the
#: job's own command failed) is not here: that is an ordinary failed step, retried and
#: then failed as the plugin does, unless a step of the job peaked at its memory request
#: (:func:`memory_note`): then SLURM ended it for memory.
ENDED_BY_SLURM = frozenset({"BOOT_FAIL", "CANCELLED", "DEADLINE", "NODE_FAIL",
                            "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT",
                            # gpubench's own: slurmctld lost the job with its state
                            # (it does not know it, or gave its id to a newer job) while
                            # sacct says active or has no record; SLURM holds the job after
                            # a failed launch and will never start it by itself
                            "LOST", "HELD"})
#: a person's decision (scancel, an admin): recorded at once, not retried
NOT_RETRIED = frozenset({"CANCELLED"})
FAILED = frozenset({"FAILED"})
DONE = frozenset({"COMPLETED"})
#: pending reasons (squeue ``%r``) no job of this run gets past by waiting alone
STUCK_REASONS = ("ReqNodeNotAvail", "NodeDown", "PartitionDown", "PartitionInactive",
                 "launch failed requeued held", "BadConstraints", "InvalidAccount",
                 "InvalidQOS")

#: SLURM ended the job for a reason its resources do not cure (slurmctld lost or holds
#: it, its node failed or never booted, a higher-priority job took its place): it is
#: submitted again as it was, without spending an attempt (whose memory and time grow)
NOT_ABOUT_RESOURCES = frozenset({"LOST", "HELD", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED"})
#: what sbatch says when slurmctld does not answer: nothing was submitted, so the
#: submission waits for the controller instead of failing the step
UNREACHABLE = ("unable to contact slurm controller", "connection refused",
               "temporarily unable to accept job", "slurmctld is not responding")
#: the wait before a submission that found slurmctld silent is tried again: doubling
#: from the first to the most, for at most GPUBENCH_SLURM_GIVE_UP_S of outage
SUBMIT_WAIT_FIRST_S = 2.0
SUBMIT_WAIT_MAX_S = 30.0

QUIET_VAR = "GPUBENCH_SLURM_QUIET_S"
GIVE_UP_VAR = "GPUBENCH_SLURM_GIVE_UP_S"
QUIET_DEFAULT_S = 900.0
GIVE_UP_DEFAULT_S = 3600.0
#: a job pending this long (from its submission) gets slurmctld's reason said, so the
#: first word comes within a minute; then the pending jobs are said again every
#: PENDING_REPEAT_S while any waits
PENDING_LOOK_S = 20.0
PENDING_REPEAT_S = 300.0

#: called for each single job of a job SLURM ended on its last attempt: write the
#: step's outputs as records of the failure (reason as the second argument); True when
#: every output is now there
Salvage = Callable[[Any, str], bool]


class SettingError(ValueError):
    """An environment setting of the SLURM watch is not a number of seconds."""


def seconds_setting(name: str, default: float,
                    environ: Mapping[str, str] = os.environ) -> float:
    """A non-negative number of seconds from the environment, or ``default``."""
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise SettingError(f"environment variable {name}={raw!r}: expected a number of "
                           "seconds >= 0")
    return value


def base_state(raw: str) -> str:
    """``CANCELLED by 0`` -> ``CANCELLED``; ``CANCELLED+|0:15`` -> ``CANCELLED``."""
    words = raw.split("|")[0].strip().split()
    return words[0].rstrip("+").upper() if words else ""


def exit_signal(raw: str) -> int:
    """The signal in sacct's ExitCode (``<code>:<signal>``) after the state, or 0."""
    parts = raw.split("|")
    code = parts[1].strip() if len(parts) > 1 else ""
    signal = code.partition(":")[2]
    return int(signal) if signal.isdigit() else 0


def classify(raw: str) -> str:
    """``done``, ``ended`` (SLURM ended it), ``failed`` (its command failed) or
    ``active`` (pending, running, requeued, suspended, completing, ...).

    ``raw`` is sacct's ``State|ExitCode`` (or a state alone). A job killed by a signal
    (``FAILED`` with ExitCode ``0:9``) was ended from outside before its step could
    write anything: where SLURM enforces memory by sampling (JobAcctGatherParams=
    OverMemoryKill, no cgroups) that is how a job over its memory ends.
    """
    state = base_state(raw)
    if state in DONE:
        return "done"
    if state in ENDED_BY_SLURM or (state in FAILED and exit_signal(raw)):
        return "ended"
    if state in FAILED:
        return "failed"
    return "active"


def show_state(raw: str) -> str:
    """``FAILED|0:9`` -> ``FAILED (killed by signal 9)``; ``CANCELLED by 0|0:15`` ->
    ``CANCELLED by 0``: the state as the rows' reasons give it."""
    state = raw.split("|")[0].strip()
    signal = exit_signal(raw)
    if signal and base_state(raw) in FAILED:
        return f"{state} (killed by signal {signal})"
    return state


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_bytes(text: str, default_unit: str = "K") -> float | None:
    """sacct sizes (``335964K``, ``50M``, ``4000Mn``, ``2G``) in bytes; None if empty."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?)[nc]?\s*", text or "")
    if not m:
        return None
    return float(m.group(1)) * _UNITS[m.group(2) or default_unit]


#: a job step that peaked at this share of the job's requested memory (or more) was
#: ended for memory: SLURM's sampling (JobAcctGatherParams=OverMemoryKill) kills a
#: step once it is over, cgroups stop it at the limit
MEMORY_SHARE = 0.9


def memory_note(steps: str, state: str = "") -> str:
    """From ``sacct -j ID -n -P -o JobID,State,ExitCode,MaxRSS,ReqMem``: ``out of
    memory: step 132.0 peaked at 410 MiB (MaxRSS) of the 400 MiB requested (ReqMem,
    mem_mb)`` when a step of the job reached :data:`MEMORY_SHARE` of its request or
    ``state`` is OUT_OF_MEMORY, else ''.

    SLURM's sampled memory limit kills the srun step running the job's command, and
    the job then ends ``FAILED`` with the exit status of the batch script, not
    ``OUT_OF_MEMORY``: the steps' peaks are what tell."""
    requested = None
    worst: tuple[float, str] | None = None
    for line in steps.splitlines():
        cols = line.split("|")
        if len(cols) < 5:
            continue
        if "." not in cols[0]:
            requested = size_bytes(cols[4], "M")
            continue
        rss = size_bytes(cols[3])
        if rss is not None and (worst is None or rss > worst[0]):
            worst = (rss, cols[0])
    over = bool(requested and worst and worst[0] >= MEMORY_SHARE * requested)
    if not over and base_state(state) != "OUT_OF_MEMORY":
        return ""
    asked = f"{requested / 2**20:.0f} MiB requested (ReqMem, mem_mb)" if requested else ""
    if worst is None:
        return "out of memory" + (f": {asked}" if asked else "")
    return (f"out of memory: step {worst[1]} peaked at {worst[0] / 2**20:.0f} MiB (MaxRSS)"
            + (f" of the {asked}" if asked else ""))


def parse_states(text: str) -> dict[str, str]:
    """``<jobid>|<state>[|...]`` lines (sacct --parsable2, squeue -o '%i|%T|...') ->
    {jobid: rest}. The rest keeps squeue's reason after a ``|``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.strip().split("|", 1)
        if len(parts) == 2 and parts[0].strip():
            out[parts[0].strip()] = parts[1].strip()
    return out


#: sinfo's node states (``%t``, flags such as ``*`` or ``~`` stripped) in which a node
#: can start a job now or once its running jobs end
USABLE_NODE_STATES = frozenset({"idle", "mix", "alloc", "comp", "plnd", "resv"})


def dead_partitions(sinfo: str) -> frozenset[str]:
    """``sinfo -h -o '%R|%t'`` lines -> the partitions none of whose nodes is in a
    :data:`USABLE_NODE_STATES` state (all drained, down, failing, ...)."""
    usable: dict[str, bool] = {}
    for line in sinfo.splitlines():
        name, sep, state = line.strip().partition("|")
        if not sep or not name:
            continue
        base = state.strip().rstrip("*~#!%$@^-+").lower()
        usable[name] = usable.get(name, False) or base in USABLE_NODE_STATES
    return frozenset(name for name, ok in usable.items() if not ok)


def lookup(states: Mapping[str, str], jobid: str) -> str | None:
    """A job's state; an array task (``<id>_<task>``) falls back to its parent id."""
    if jobid in states:
        return states[jobid]
    parent, _, task = jobid.partition("_")
    if task.isdigit() and parent in states:
        return states[parent]
    return None


def retried(state: str, attempt: int, attempts: int) -> bool:
    """Whether Snakemake should run the step again: SLURM's fault (preempted, a node
    failed, out of memory or time: the next attempt gets more) while attempts are left;
    never for a cancel, which a person decided."""
    return base_state(state) not in NOT_RETRIED and attempt < attempts


def unreachable(message: str) -> bool:
    """Whether sbatch failed because slurmctld did not answer (nothing was submitted),
    rather than refusing the job (a bad partition, gres or limit)."""
    text = message.lower()
    return any(words in text for words in UNREACHABLE)


def next_submit_wait(previous: float | None) -> float:
    """The wait before the next try of a submission that found slurmctld silent:
    SUBMIT_WAIT_FIRST_S, then doubling to SUBMIT_WAIT_MAX_S (a controller back in
    seconds is used at once, one down for long is not asked every second)."""
    return SUBMIT_WAIT_FIRST_S if previous is None else min(previous * 2,
                                                            SUBMIT_WAIT_MAX_S)


def resubmitted(state: str, resubmits: int, attempts: int) -> bool:
    """Whether a job SLURM ended is submitted again as it was, without spending an
    attempt: its end was not about its resources (lost, held, a node failure, a
    preemption), and it has been so submitted fewer times than the step's attempts."""
    return base_state(state) in NOT_ABOUT_RESOURCES and resubmits < attempts


def failure_reason(jobid: str, state: str, attempt: int, attempts: int,
                   log: str | None = None, note: str = "", resubmits: int = 0) -> str:
    """The reason a step's rows give when SLURM ended its job (``state`` as sacct gives
    it, ``State|ExitCode``; ``note``: what else is known, e.g. its memory;
    ``resubmits``: times it was submitted again as it was, all there were)."""
    if base_state(state) in NOT_RETRIED:
        tail = "not retried: cancelled"
    elif resubmits:
        tail = f"submitted again {resubmits} times as it was, no retry left"
    elif attempt < attempts:
        tail = "retried"
    else:
        tail = "no retry left"
    text = (f"SLURM job {jobid} ended {show_state(state)}{': ' + note if note else ''} "
            f"(attempt {attempt} of {attempts}, {tail})")
    return text + (f"; SLURM log {log}" if log else "")


# -- the watch: a scheduler that says nothing is noticed -----------------------------------


@dataclass
class Diagnosis:
    """What slurmctld says about the run, asked when the run has gone quiet.

    ``controller``: ``scontrol ping``'s answer; ``up``: whether it answered that it is
    up. ``queue``: {jobid: "STATE|reason"} of the run's jobs slurmctld knows (None when
    squeue failed). ``nodes``: ``sinfo -R`` lines (drained and down nodes with their
    reasons).
    """

    up: bool
    controller: str = ""
    queue: dict[str, str] | None = None
    nodes: list[str] = field(default_factory=list)
    #: {jobid: partition} of the run's jobs (squeue)
    partitions: dict[str, str] = field(default_factory=dict)
    #: partitions none of whose nodes can start a job (every one drained, down, ...):
    #: a job pending there waits for an admin, not for resources
    dead_partitions: frozenset[str] = frozenset()

    def lost(self, active: Iterable[str]) -> set[str]:
        """Of ``active`` (jobs sacct lists as active, or not at all), those slurmctld,
        answering, does not know: lost with its state."""
        if not self.up or self.queue is None:
            return set()
        return {j for j in active if lookup(self.queue, j) is None}

    def pending(self) -> dict[str, str]:
        """{jobid: reason} of the run's pending jobs."""
        return {j: s.partition("|")[2] for j, s in (self.queue or {}).items()
                if base_state(s) == "PENDING"}

    def held(self) -> set[str]:
        """Jobs SLURM holds after a failed launch: nothing starts them again."""
        return {j for j, r in self.pending().items()
                if "launch failed requeued held" in r.lower()}

    def stuck(self) -> set[str]:
        """Pending jobs whose reason waiting does not cure (drained or down nodes, a
        partition down, held), or pending in a partition no node of which can start a
        job (after a controller restart slurmctld may say only "Nodes required for job
        are DOWN, DRAINED or reserved ..." while its one node is drained)."""
        return {j for j, r in self.pending().items()
                if any(s.lower() in r.lower() for s in STUCK_REASONS)
                or self.partitions.get(j) in self.dead_partitions}

    def trouble(self, active: Iterable[str]) -> bool:
        return not self.up or self.queue is None or bool(
            self.lost(active) or self.stuck())


class Watch:
    """Notices a silent scheduler: status queries failing, or no job changing state.

    Feed it every status check (:meth:`observe`); :meth:`warn_due` says when to warn
    (at once when queries fail, after ``quiet_s`` without a state change, then every
    ``quiet_s``); :meth:`give_up_due` says when trouble has lasted ``give_up_s``.
    Times are the caller's (monotonic seconds) so tests need no clock.
    """

    def __init__(self, quiet_s: float, give_up_s: float, now: float) -> None:
        self.quiet_s, self.give_up_s = quiet_s, give_up_s
        self.states: dict[str, str] = {}
        self.last_change = now
        self.failing_since: float | None = None
        self.failure = ""
        self.trouble_since: float | None = None
        self.last_warning: float | None = None
        #: {jobid: since when} of the jobs last seen pending (since their submission
        #: where the caller knows it)
        self.pending_since: dict[str, float] = {}
        #: pending jobs whose reason was said, and when it last was
        self.explained: set[str] = set()
        self.last_look: float | None = None

    def change(self, now: float, moved: bool = True) -> None:
        """Something happened (a submission, a job that changed state or ended): not
        quiet. ``moved``: SLURM itself moved a job, so it is not in trouble either (a
        submission or a job the driver ended proves nothing about SLURM)."""
        self.last_change = now
        self.last_warning = None
        if moved:
            self.trouble_since = None

    def observe(self, now: float, states: Mapping[str, str] | None,
                failure: str = "", submitted: Mapping[str, float] | None = None) -> None:
        """One status check: the states of the run's active jobs, or None (failed);
        ``submitted``: {jobid: when submitted}, where a pending job's wait starts."""
        if states is not None:
            for jobid, state in states.items():
                if base_state(state) == "PENDING":
                    self.pending_since.setdefault(jobid, (submitted or {}).get(jobid, now))
                else:
                    self.pending_since.pop(jobid, None)
                    self.explained.discard(jobid)
        if states is None:
            if self.failing_since is None:
                self.failing_since = now
                self.last_warning = None  # a new kind of trouble: warn at once
            self.failure = failure
            if self.trouble_since is None:
                self.trouble_since = now
            return
        self.failing_since, self.failure = None, ""
        # SLURM moved a job: a known job changed state, or a new one showed up already
        # past pending (a job the driver just submitted, pending, proves nothing)
        moved = [j for j, s in states.items()
                 if (j in self.states and self.states[j] != s)
                 or (j not in self.states and base_state(s) != "PENDING")]
        self.states = dict(states)
        if moved:
            self.change(now)

    def forget(self, jobid: str, now: float, moved: bool = True) -> None:
        """A job ended (``moved``: SLURM ended it; False: the driver did)."""
        self.states.pop(jobid, None)
        self.pending_since.pop(jobid, None)
        self.explained.discard(jobid)
        self.change(now, moved)

    def quiet_for(self, now: float) -> float:
        return now - self.last_change

    def warn_due(self, now: float) -> bool:
        if self.failing_since is None and self.quiet_for(now) < self.quiet_s:
            return False
        return self.last_warning is None or now - self.last_warning >= self.quiet_s

    def warned(self, now: float) -> None:
        self.last_warning = now

    def waiting(self, now: float) -> dict[str, float]:
        """{jobid: seconds pending} of the jobs pending for PENDING_LOOK_S or more."""
        return {j: now - t for j, t in self.pending_since.items()
                if now - t >= PENDING_LOOK_S}

    def unexplained(self) -> bool:
        """Whether a pending job's reason is still to be said (status checks come
        often enough to say it within a minute)."""
        return any(j not in self.explained for j in self.pending_since)

    def look_due(self, now: float) -> bool:
        """Whether to ask slurmctld why the run's jobs are pending and say it: a job
        pending PENDING_LOOK_S whose reason was not said, or every PENDING_REPEAT_S."""
        waiting = self.waiting(now)
        if not waiting:
            return False
        return any(j not in self.explained for j in waiting) or (
            self.last_look is None or now - self.last_look >= PENDING_REPEAT_S)

    def looked(self, now: float) -> None:
        self.last_look = now
        self.explained |= set(self.waiting(now))

    def diagnosed(self, now: float, trouble: bool) -> None:
        """Trouble starts counting when a diagnosis finds it; a healthy one resets."""
        if not trouble and self.failing_since is None:
            self.trouble_since = None
        elif self.trouble_since is None:
            self.trouble_since = now

    def give_up_due(self, now: float) -> bool:
        return bool(self.give_up_s) and self.trouble_since is not None and \
            now - self.trouble_since >= self.give_up_s


def recovery_steps(jobids: Iterable[str], stopped: bool = False) -> str:
    """What a user does about it (docs/slurm.md, "When SLURM misbehaves"); ``stopped``: the run
    has given up and cancelled its jobs."""
    ids = sorted(jobids, key=jobid_key)
    listed = ",".join(ids) or "<jobid>"
    cancel = " ".join(ids) or "<jobid>"
    wait = ("  3. this run has cancelled its jobs and stops\n" if stopped else
            "  3. this run goes on by itself once SLURM answers and its jobs move; to stop "
            f"it, press Ctrl-C: it cancels exactly this run's jobs (`scancel {cancel}`)\n")
    return (
        "What to do (docs/slurm.md, 'When SLURM misbehaves'):\n"
        f"  1. look: `scontrol ping` (is slurmctld up?), `squeue -j {listed} -o '%i %T %r'`"
        ", `sinfo -R` (drained or down nodes and why)\n"
        "  2. a node SLURM drained (e.g. 'Duplicate jobid' after a controller restart): "
        "an admin resumes it, `scontrol update nodename=<node> state=resume`\n"
        + wait +
        "  4. then run the same snakemake command again; if Snakemake says the directory is "
        "locked (its driver was killed), first the same command with `--unlock`; finished "
        "steps are kept")


def ctrl_c_ignored(pid: int, run_id: str) -> str:
    """The driver's warning when it started with SIGINT ignored, as a shell script
    (without job control) starts a job in the background and as every program then keeps
    it: Ctrl-C does not reach this run; how to start one it reaches, how to stop this one."""
    return (
        f"gpubench: this driver (PID {pid}) ignores Ctrl-C: it was started with SIGINT "
        "ignored, as a shell script starts a command in the background (`snakemake ... &`), "
        f"so neither Ctrl-C nor `kill -INT {pid}` stops it or cancels its SLURM jobs. For a "
        "run Ctrl-C stops, start it in the foreground (in tmux or screen for a long run). "
        f"To stop this one: `kill -TERM {pid}` lets its running jobs finish (Snakemake's "
        f"SIGTERM); or `kill -KILL {pid}`, `scancel --name {run_id}` (this run's jobs "
        "only), and `--unlock` before the next run")


def jobid_key(jobid: str) -> tuple[int, str]:
    head = re.match(r"\d+", jobid)
    return (int(head.group()) if head else 0, jobid)


def describe_jobs(jobs: Mapping[str, str], states: Mapping[str, str],
                  queue: Mapping[str, str] | None = None) -> str:
    """``  123 run_backend backend=numpy-cpu: sacct: RUNNING; slurmctld: RUNNING``, one a
    line, in job id order."""
    lines = []
    for jobid in sorted(jobs, key=jobid_key):
        state = show_state(states[jobid]) if jobid in states else "no record yet"
        extra = ""
        if queue is not None:
            known = lookup(queue, jobid)
            if known:
                what, _, why = known.partition("|")
                extra = f"; slurmctld: {what}" + (f" ({why})" if why and why != "None" else "")
            else:
                extra = "; slurmctld: does not know it"
        lines.append(f"  {jobid} {jobs[jobid]}: sacct: {state}{extra}")
    return "\n".join(lines)


def quiet_warning(watch: Watch, now: float, jobs: Mapping[str, str],
                  diagnosis: Diagnosis | None) -> str:
    """The driver's warning: what is wrong, the run's jobs, what to do."""
    if watch.failing_since is not None:
        head = (f"SLURM does not answer: the status query has failed for "
                f"{now - watch.failing_since:.0f} s ({watch.failure or 'no message'})")
    else:
        head = (f"no job of this run has changed state for {watch.quiet_for(now):.0f} s "
                f"({QUIET_VAR}={watch.quiet_s:g})")
    parts = [f"gpubench: {head}."]
    if diagnosis is not None:
        parts.append(f"slurmctld: {diagnosis.controller or ('up' if diagnosis.up else 'down')}")
        if diagnosis.nodes:
            parts.append("nodes SLURM drained or lost (sinfo -R): "
                         + "; ".join(diagnosis.nodes))
    parts.append(f"This run's SLURM jobs ({len(jobs)}):")
    parts.append(describe_jobs(jobs, watch.states,
                               None if diagnosis is None else diagnosis.queue))
    if watch.give_up_s:
        parts.append(f"If SLURM stays in trouble, this run cancels its jobs and stops after "
                     f"{watch.give_up_s:g} s ({GIVE_UP_VAR}).")
    parts.append(recovery_steps(jobs))
    return "\n".join(parts)


def pending_message(watch: Watch, now: float, jobs: Mapping[str, str],
                    diagnosis: Diagnosis) -> tuple[bool, str]:
    """(trouble, the driver's words) on the run's pending jobs: each with slurmctld's
    reason; where no job gets past it by waiting (controller down, drained or down
    nodes, a partition down, held) what to do and when the run gives up."""
    waiting = watch.waiting(now)
    stuck = diagnosis.stuck() & set(waiting)
    trouble = not diagnosis.up or bool(stuck)
    reasons = diagnosis.pending()
    longest = max(waiting.values(), default=0.0)
    parts = [f"gpubench: {len(waiting)} job(s) of this run pending, the longest for "
             f"{longest:.0f} s; " + (
                 f"slurmctld does not answer ({diagnosis.controller or 'scontrol ping'})"
                 if not diagnosis.up else "slurmctld says why:")]
    for jobid in sorted(waiting, key=jobid_key):
        why = reasons.get(jobid, "")
        why = "no reason given yet" if why in ("", "None") else why
        mark = " (waiting does not cure this)" if jobid in stuck else ""
        parts.append(f"  {jobid} {jobs.get(jobid, '?')}: {why}{mark}")
    if diagnosis.nodes:
        parts.append("nodes SLURM drained or lost (sinfo -R): " + "; ".join(diagnosis.nodes))
    if trouble:
        give_up = (f"this run cancels its jobs and stops after {watch.give_up_s:g} s of "
                   f"such trouble ({GIVE_UP_VAR})" if watch.give_up_s else
                   f"this run waits for ever ({GIVE_UP_VAR}=0)")
        parts.append(f"No job gets past this by waiting alone; {give_up}.")
        parts.append(recovery_steps(jobs))
    else:
        parts.append(f"Waiting for resources or priority is normal on a busy cluster; "
                     f"said again every {PENDING_REPEAT_S:g} s while jobs wait.")
    return trouble, "\n".join(parts)


# -- installing the executor ---------------------------------------------------------------


#: in a results folder: the SLURM job name (the plugin's run id) of the last run that
#: submitted jobs writing there, so a later run can see whether they still live
RUN_FILE = ".gpubench-slurm-run"

Query = Callable[[list[str]], tuple[int, str, str]]


def record_run(folder: str | os.PathLike[str], run_uuid: str) -> None:
    """Note in ``folder`` that this run's SLURM jobs (job name ``run_uuid``) write there."""
    path = os.path.join(folder, RUN_FILE)
    os.makedirs(folder, exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(run_uuid + "\n")
    os.replace(path + ".tmp", path)


def earlier_jobs(folder: str | os.PathLike[str], query: Query) -> str:
    """Why ``folder`` is still in use by an earlier run's SLURM jobs, or ''.

    The run lock ends with the driver, but a driver ended before its ``scancel`` went
    through (SIGKILL, a lost login session, slurmctld silent at Ctrl-C) leaves jobs that
    go on writing the folder; a new run there would delete and rewrite their files.
    ``query``: runs a SLURM client, (returncode, stdout, stderr)."""
    try:
        name = open(os.path.join(folder, RUN_FILE), encoding="utf-8").read().strip()
    except OSError:
        return ""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return ""
    rc, out, err = query(["squeue", "-h", "--name", name, "-o", "%i|%T"])
    if rc:
        return (f"cannot tell whether the earlier run's SLURM jobs (job name {name}) "
                f"still write to {str(folder)!r}: squeue failed "
                f"({' '.join(err.split())[:200] or rc}); once slurmctld answers, run "
                f"`squeue --name {name}` and `scancel --name {name}` if any are left")
    ids = sorted({line.split("|")[0].strip() for line in out.splitlines() if line.strip()},
                 key=jobid_key)
    if not ids:
        return ""
    return (f"config key results_dir: {str(folder)!r} is still written by SLURM jobs of "
            f"an earlier run whose driver ended without cancelling them ({', '.join(ids)}, "
            f"job name {name}). Cancel them (`scancel {' '.join(ids)}`) or wait for them "
            "to end, then run again")


def install(salvage: Salvage | None = None,
            environ: MutableMapping[str, str] = os.environ,
            results: str | None = None) -> bool:
    """Use :class:`gpubench.slurm.executor.Executor` wherever ``executor: slurm`` is
    asked for, with ``salvage`` for the steps SLURM ends, noting its run in ``results``
    (:func:`record_run`) at its first submission. Returns whether the plugin is
    installed here (without it there is nothing to replace: a laptop, a step's venv).

    Raises SettingError for a bad ``GPUBENCH_SLURM_*`` setting, before any job.
    """
    quiet = seconds_setting(QUIET_VAR, QUIET_DEFAULT_S, environ)
    give_up = seconds_setting(GIVE_UP_VAR, GIVE_UP_DEFAULT_S, environ)
    try:
        from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

        from gpubench.slurm import executor
    except ImportError:
        return False
    registry = ExecutorPluginRegistry()
    if not registry.is_installed("slurm"):
        return False
    plugin = registry.get_plugin("slurm")
    cls = executor.executor_class(plugin.executor)
    cls.salvage_job = staticmethod(salvage) if salvage else None
    cls.quiet_s, cls.give_up_s = quiet, give_up
    cls.results_dir = results
    plugin.executor = cls
    return True
