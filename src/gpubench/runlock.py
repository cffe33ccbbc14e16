"""One run at a time per results folder.

Snakemake locks its working directory, so a second run started from the same folder is
refused. Two runs started from different folders with the same ``results_dir`` are not:
each would delete and rewrite the other's step files while the other reads them
(Snakemake removes a job's old outputs before running it). The workflow's ``onstart``
handler claims the results folder with an advisory lock (``flock``) held for the life
of the Snakemake process; the kernel releases it however that process ends, so a run
killed with SIGKILL leaves nothing to unlock.
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
from pathlib import Path
from typing import IO

LOCK_NAME = ".gpubench-run.lock"

_held: dict[str, IO[str]] = {}


class FolderBusy(RuntimeError):
    """Another live run holds the results folder; the message names it and that run."""


def claim(folder: str | os.PathLike[str]) -> Path:
    """Hold ``folder``'s run lock until this process exits; raise :class:`FolderBusy`
    naming the folder and the run holding it when another process has it."""
    path = Path(folder) / LOCK_NAME
    key = str(path.resolve())
    if key in _held:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a+", encoding="utf-8")  # held open: closing it would release the lock
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        owner = fh.read().strip() or "owner unknown"
        fh.close()
        raise FolderBusy(
            f"config key results_dir: {str(folder)!r} is in use by another run ({owner}). "
            "Wait for it to finish, or give this run its own results_dir"
        ) from None
    except OSError as exc:  # a filesystem without locks (some network mounts): go on
        fh.close()
        print(f"gpubench: cannot lock {path} ({exc}); make sure no other run uses this "
              "results_dir", file=sys.stderr)
        return path
    fh.seek(0)
    fh.truncate()
    from gpubench.provenance import utc_now

    fh.write(f"pid {os.getpid()} on {socket.gethostname()}, started {utc_now()} "
             f"in {os.getcwd()}\n")
    fh.flush()
    _held[key] = fh
    return path
