"""Test plugin (GPUBENCH_PLUGINS=step_fault): makes whole benchmark steps fail.

A step's process (``python -m gpubench step --backend B ...``, the child that
gpubench.cli.guard_step watches) exits with status 3 when B is in GPUBENCH_FAIL_STEPS,
or sleeps for GPUBENCH_HANG_S seconds when B is in GPUBENCH_HANG_STEPS: what a step
killed by the scheduler, out of memory or out of time looks like to the workflow.
With GPUBENCH_KILL_AFTER_ROWS=N a step in GPUBENCH_KILL_STEPS runs until it has
finished N rows, then kills itself with SIGKILL (as the kernel's OOM killer does), or,
with GPUBENCH_GROW_MB=M, takes M MiB more memory and waits, for SLURM's memory limit to
end it mid-run. The guard itself and the workers are left alone.
"""

from __future__ import annotations

import os
import signal
import sys
import time


def _step_backend() -> str | None:
    argv = sys.argv
    if "step" not in argv or "--backend" not in argv or "--attempt" in argv:
        return None
    return argv[argv.index("--backend") + 1]


_backend = _step_backend()
if _backend and _backend in os.environ.get("GPUBENCH_FAIL_STEPS", "").split(","):
    print(f"step_fault: failing step {_backend} on purpose", file=sys.stderr, flush=True)
    os._exit(3)
if _backend and _backend in os.environ.get("GPUBENCH_HANG_STEPS", "").split(","):
    print(f"step_fault: hanging step {_backend} on purpose", file=sys.stderr, flush=True)
    time.sleep(float(os.environ.get("GPUBENCH_HANG_S", "600")))


def _die_after(rows: int, grow_mb: int) -> None:
    from gpubench import runner

    keep = runner.BackendRun.keep

    def keep_then_die(self, row, clocks):
        keep(self, row, clocks)
        if len(self.rows) < rows:
            return
        if grow_mb:
            print(f"step_fault: step {_backend} takes {grow_mb} MiB after {rows} rows",
                  file=sys.stderr, flush=True)
            self.hog = b"\1" * (grow_mb << 20)  # written, so resident
            time.sleep(600)
        print(f"step_fault: killing step {_backend} after {rows} rows", file=sys.stderr,
              flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    runner.BackendRun.keep = keep_then_die


if _backend and _backend in os.environ.get("GPUBENCH_KILL_STEPS", "").split(","):
    _die_after(int(os.environ.get("GPUBENCH_KILL_AFTER_ROWS", "1")),
               int(os.environ.get("GPUBENCH_GROW_MB", "0") or 0))
