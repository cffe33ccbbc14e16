"""Plain Python on the host: ``for i in range(n)`` loops over Python lists, the way a
newcomer writes a kernel before reaching for NumPy or Numba.

It imports nothing beyond the standard library to compute; NumPy only makes the inputs
(the harness's) and reads the results back for the check, so the step runs in the NumPy
environment. Python floats are C doubles, so only float64 cases are run (a float32 row
would time the same double-precision code under another label). Pure Python is serial:
no implementation is ``parallel``, every row runs at one thread.

Interpreted loops cost tens to hundreds of nanoseconds per element, so each
implementation caps its size (``max_size``) where a call stays well under a second;
larger sizes get a ``skipped`` row with the cap as the reason.
"""

from __future__ import annotations

import platform

from gpubench.backends.base import Backend, Facts


class PythonCPU(Backend):
    framework = "python"
    device = "cpu"
    facts = Facts(registry_order=1, environment="numpy", display_name="Python", order=-10,
                  version_keys=("python",), key_packages=("numpy",),
                  probe_packages=("numpy",))

    def start(self, threads: int) -> dict[str, str]:
        import numpy as np

        # nothing to pin: the loops run in the interpreter's one thread
        return {"python": platform.python_version(), "numpy": np.__version__}
