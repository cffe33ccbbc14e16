"""Pure Python loops on the host (the interpreter, no array library)."""

from gpubench.backends.python.adapter import PythonCPU

BACKENDS = (PythonCPU,)
