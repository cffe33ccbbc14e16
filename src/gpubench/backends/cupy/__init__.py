"""CuPy on the GPU."""

from gpubench.backends.cupy.adapter import CupyGPU

BACKENDS = (CupyGPU,)
