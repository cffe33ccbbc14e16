"""CUDA Python: NVIDIA's driver and runtime bindings, kernels compiled by NVRTC."""

from gpubench.backends.cuda_python.adapter import CudaPythonGPU

BACKENDS = (CudaPythonGPU,)
