"""JAX on the host and on the GPU (XLA)."""

from gpubench.backends.jax.adapter import JaxCPU, JaxGPU

BACKENDS = (JaxCPU, JaxGPU)
