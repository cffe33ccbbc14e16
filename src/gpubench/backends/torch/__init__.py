"""PyTorch on the host and on the GPU."""

from gpubench.backends.torch.adapter import TorchCPU, TorchGPU

BACKENDS = (TorchCPU, TorchGPU)
