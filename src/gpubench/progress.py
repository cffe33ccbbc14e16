"""Progress while a run goes: measurements done of those planned, and the time left.

Each benchmark step counts its rows against its plan (:class:`StepProgress`): a line in
its log every few seconds and a small JSON file beside its CSV
(``raw/<backend>.progress.json``). The driver, the Snakemake process that schedules the
steps (locally or under SLURM), reads those files and prints the whole run's count, step
by step, with an estimate of the time left (:class:`RunProgress`): a bar on a terminal,
plain lines in a log. The estimate is the plan's measurements still to come at the rate
measured so far (:func:`time_left`): no history of earlier runs, so it is rough at first
and improves as the run goes.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: seconds between a step's progress lines in its log
STEP_INTERVAL_S = 10.0
#: seconds between the driver's lines: on a terminal, in a log (SLURM, a redirected run);
#: GPUBENCH_PROGRESS_S sets both
TERMINAL_INTERVAL_S = 10.0
LOG_INTERVAL_S = 30.0
INTERVAL_VAR = "GPUBENCH_PROGRESS_S"
#: what starts each of the driver's lines (tests and users grep for it)
PREFIX = "gpubench progress:"


def time_left(done: int, planned: int, elapsed_s: float) -> float | None:
    """Seconds until ``planned`` measurements are done at the rate of the ``done`` ones
    in ``elapsed_s``; None before the first one (no rate yet)."""
    if done <= 0 or elapsed_s <= 0:
        return None
    return max(planned - done, 0) * elapsed_s / done


def duration(seconds: float) -> str:
    """"45 s", "2 min 10 s", "1 h 5 min"."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def left_text(seconds: float | None) -> str:
    """"about 2 min 10 s left", or "time left not known yet" before any rate."""
    return "time left not known yet" if seconds is None else f"about {duration(seconds)} left"


def bar(done: int, planned: int, width: int = 20) -> str:
    """``[########------------]``: done of planned."""
    full = width * min(done, planned) // planned if planned > 0 else 0
    return "[" + "#" * full + "-" * (width - full) + "]"


def percent(done: int, planned: int) -> str:
    return f"{100 * done // planned if planned else 100} %"


def progress_path(csv_path: str | os.PathLike[str]) -> Path:
    """``raw/<backend>.csv`` -> ``raw/<backend>.progress.json``."""
    p = Path(csv_path)
    return p.with_name(p.name.removesuffix(".csv") + ".progress.json")


class StepProgress:
    """One step's count of its rows: a log line every :data:`STEP_INTERVAL_S` seconds
    (and at the last row) and the progress file the driver reads."""

    def __init__(self, planned: int, say: Callable[[str], None],
                 path: str | os.PathLike[str] | None = None,
                 interval_s: float = STEP_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.planned, self.say, self.interval_s, self.clock = planned, say, interval_s, clock
        self.path = Path(path) if path else None
        self.start = clock()
        self.started_at = time.time()
        self.last_line = self.start
        self.last_file = -1.0
        self.done = 0
        self._write(0)

    def line(self, done: int) -> str:
        elapsed = self.clock() - self.start
        return (f"progress {done}/{self.planned} measurements "
                f"({percent(done, self.planned)}), {duration(elapsed)} elapsed, "
                f"{left_text(time_left(done, self.planned, elapsed))}")

    def update(self, done: int) -> None:
        """``done`` rows so far: the file at most once a second, a line every interval."""
        self.done = done
        now = self.clock()
        last = done >= self.planned
        if last or now - self.last_file >= 1.0:
            self._write(done)
            self.last_file = now
        if last or now - self.last_line >= self.interval_s:
            self.say(self.line(done))
            self.last_line = now

    def _write(self, done: int) -> None:
        if self.path is None:
            return
        data = {"planned": self.planned, "done": done, "started": self.started_at,
                "elapsed_s": round(self.clock() - self.start, 3)}
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:  # progress is a courtesy: a full disk must not fail the step
            pass


@dataclass
class StepState:
    """What the driver knows of one step."""

    name: str
    planned: int
    done: int = 0
    #: when it started (epoch seconds; None: not yet) and how long it has run
    started: float | None = None
    elapsed_s: float = 0.0
    finished: bool = False


def read_step(name: str, planned: int, progress: Path, csv: Path, since: float,
              now: float) -> StepState:
    """One step's state from its files, ignoring those older than ``since`` (an earlier
    run's): its progress file, and its CSV (written last: the step is done)."""
    state = StepState(name, planned)
    try:
        if progress.stat().st_mtime >= since:
            data = json.loads(progress.read_text())
            state.planned = int(data.get("planned", planned))
            state.done = int(data.get("done", 0))
            state.started = float(data.get("started") or 0) or None
            state.elapsed_s = float(data.get("elapsed_s") or 0)
    except (OSError, ValueError, TypeError):
        pass
    try:
        if csv.stat().st_mtime >= since:
            state.finished, state.done = True, state.planned
    except OSError:
        pass
    if state.started is not None and not state.finished:
        state.elapsed_s = max(state.elapsed_s, now - state.started)
    return state


#: a step that has run at least this long has a rate of its own (one that wrote its rows
#: at once, unavailable, says nothing of how long a measurement takes)
MIN_RATE_S = 1.0


def run_time_left(states: list[StepState], instant: frozenset[str] = frozenset()
                  ) -> float | None:
    """Seconds until every step is done: each unfinished step's measurements still to
    come at its own rate so far, or, for a step that has not started, at the rate of the
    steps measured so far (their seconds over their measurements); the steps in
    ``instant`` (GPU steps on a host without a GPU: unavailable rows, written at once)
    count nothing. None while no step has a rate."""
    timed = [s for s in states if s.done > 0 and s.elapsed_s >= MIN_RATE_S]
    pooled = (sum(s.elapsed_s for s in timed) / sum(s.done for s in timed)) if timed else None
    left = 0.0
    for s in states:
        if s.finished or s.name in instant:
            continue
        rate = (s.elapsed_s / s.done if s.done > 0 and s.elapsed_s >= MIN_RATE_S
                else pooled)
        if rate is None:
            return None
        left += max(s.planned - s.done, 0) * rate
    return left


class RunProgress:
    """The driver's view: every step's count, the whole run's, the time left."""

    def __init__(self, planned: Mapping[str, int], files: Mapping[str, tuple[Path, Path]],
                 out: IO[str] | None = None, interval_s: float | None = None,
                 instant: frozenset[str] = frozenset(),
                 clock: Callable[[], float] = time.time) -> None:
        """``planned``: the measurements of each step that runs now (from its plan);
        ``files``: each one's progress file and CSV; ``instant``: steps expected to
        write their rows at once (:func:`run_time_left`)."""
        self.planned, self.files, self.instant = dict(planned), dict(files), instant
        self.out = out or sys.stderr
        self.clock = clock
        self.since = clock()
        self.tty = bool(getattr(self.out, "isatty", lambda: False)())
        env = os.environ.get(INTERVAL_VAR)
        self.interval_s = (interval_s if interval_s is not None else float(env) if env
                           else TERMINAL_INTERVAL_S if self.tty else LOG_INTERVAL_S)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: dict[str, tuple[bool, bool]] = {}

    def states(self) -> list[StepState]:
        now = self.clock()
        return [read_step(name, n, *self.files[name], self.since, now)
                for name, n in self.planned.items()]

    def line(self, states: list[StepState] | None = None) -> str:
        """``gpubench progress: 412/1,302 measurements (31 %) [bar], 3 min 5 s elapsed;
        about 2 min 10 s left; numpy-cpu 80/80 done, numba-cpu 40/103, jax-cpu 0/92
        waiting``."""
        states = self.states() if states is None else states
        done = sum(s.done for s in states)
        planned = sum(s.planned for s in states)
        steps = ", ".join(
            f"{s.name} {s.done}/{s.planned}" + (" done" if s.finished else "" if s.started
                                                 else " waiting") for s in states)
        return (f"{PREFIX} {done:,}/{planned:,} measurements ({percent(done, planned)})"
                + (f" {bar(done, planned)}" if self.tty else "")
                + f", {duration(self.clock() - self.since)} elapsed; "
                f"{left_text(run_time_left(states, self.instant))}; {steps}")

    def tick(self) -> str | None:
        """The line, printed when a step started or finished since the last tick;
        returns what was printed (None: nothing)."""
        states = self.states()
        now = {s.name: (s.started is not None, s.finished) for s in states}
        if now == self._seen:
            return None
        self._seen = now
        return self.say(states)

    def say(self, states: list[StepState] | None = None) -> str:
        text = self.line(states)
        print(text, file=self.out, flush=True)
        return text

    def _loop(self) -> None:
        last = self.clock()
        while not self._stop.wait(1.0):
            if self.tick() is not None:
                last = self.clock()
            elif self.clock() - last >= self.interval_s:
                self.say()
                last = self.clock()

    def start(self) -> RunProgress:
        """Print in a background thread until :meth:`stop` (or the process ends)."""
        self._thread = threading.Thread(target=self._loop, name="gpubench-progress",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> str:
        """Stop the thread and print the last line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        return self.say()


def run_progress(planned: Mapping[str, int], results: str | os.PathLike[str],
                 **kwargs: Any) -> RunProgress:
    """The driver's progress over the steps in ``planned`` of a results folder."""
    raw = Path(results) / "raw"
    files = {b: (progress_path(raw / f"{b}.csv"), raw / f"{b}.csv") for b in planned}
    return RunProgress(planned, files, **kwargs)
