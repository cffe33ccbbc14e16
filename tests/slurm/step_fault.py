"""Test plugin (GPUBENCH_PLUGINS=step_fault): makes whole benchmark steps fail.

A step's process (``python -m gpubench step --backend B ...``, the child that
gpubench.cli.guard_step watches) exits with status 3 when B is in GPUBENCH_FAIL_STEPS,
or sleeps for GPUBENCH_HANG_S seconds when B is in GPUBENCH_HANG_STEPS: what a step
killed by the scheduler, out of memory or out of time looks like to the workflow.
The guard itself and the workers are left alone.
"""

from __future__ import annotations

import os
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
