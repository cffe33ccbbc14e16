"""Numba: ``@njit`` on the host and ``@cuda.jit`` on the GPU (or its simulator)."""

from gpubench.backends.numba.adapter import NumbaCPU
from gpubench.backends.numba.gpu import NumbaGPU

BACKENDS = (NumbaCPU, NumbaGPU)
