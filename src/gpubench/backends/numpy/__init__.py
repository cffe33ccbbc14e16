"""NumPy on the host: the reference every other framework is read against."""

from gpubench.backends.numpy.adapter import NumpyCPU

BACKENDS = (NumpyCPU,)
