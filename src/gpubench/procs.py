"""Child processes that end with their parent.

A benchmark step runs in a chain of processes (the guard, the step, one worker per
thread count; for MPI, the launcher and its ranks), several in sessions of their own so
that a time-out can kill a whole group. A parent killed hard (SIGKILL from the OOM
killer, ``kill -9`` of Snakemake's process group, a lost terminal) cannot pass that on,
so without help its children would run on: measuring on cores the next run uses and
writing their CSVs after it. On Linux the kernel can signal a child when its parent
dies (``prctl(PR_SET_PDEATHSIG)``); elsewhere these helpers do nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send ``sig`` to this process when its parent exits.

    Call it in the child (first thing in ``main``, or through :func:`preexec`). Returns
    whether the request was made (Linux with a loadable libc).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def preexec(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that calls :func:`die_with_parent`
    in the child before it starts (``None`` where that is not supported)."""
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()

    def arm() -> None:
        if die_with_parent(sig) and os.getppid() != parent:  # parent already gone
            os.kill(os.getpid(), sig)

    return arm


def end_with_parent(sig: int = signal.SIGKILL) -> None:
    """:func:`die_with_parent`, and end now if the parent went while it was being set."""
    parent = os.getppid()
    if die_with_parent(sig) and os.getppid() != parent:
        os.kill(os.getpid(), sig)


def describe_exit(code: int | None, passive: bool = False) -> str:
    """How a child process ended, for a reason: "killed by SIGSEGV" ("was killed by ..."
    where ``passive``), "exited with code 3", or "did not exit" (no code)."""
    if code is None:
        return "did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return ("was " if passive else "") + f"killed by {name}"
    return f"exited with code {code}"


def cgroup_memory(proc_cgroup: Path = Path("/proc/self/cgroup"),
                  root: Path = Path("/sys/fs/cgroup")) -> dict[str, int]:
    """This process's cgroup (v2) memory: ``oom_kill`` (processes the kernel's OOM
    killer ended in it), ``max`` and ``peak`` bytes, where readable; {} elsewhere. A
    scheduler that limits memory by cgroup shows so that a step was killed for memory."""
    try:
        line = next(ln for ln in proc_cgroup.read_text().splitlines()
                    if ln.startswith("0::"))
    except (OSError, StopIteration):
        return {}
    folder = root / line[3:].lstrip("/")
    out: dict[str, int] = {}
    try:
        for row in (folder / "memory.events").read_text().splitlines():
            key, _, value = row.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                out["oom_kill"] = int(value)
    except OSError:
        return {}
    for name in ("max", "peak"):
        try:
            value = (folder / f"memory.{name}").read_text().strip()
        except OSError:
            continue
        if value.isdigit():
            out[name] = int(value)
    return out
