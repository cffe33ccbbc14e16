"""What the MPI jobs need of PyTorch: one process driving several GPUs
(:mod:`gpubench.mpi.jobs`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.backends.hooks import MultiDevice

#: the devices the PyTorch version spreads over (tests run it on ``cpu`` stand-ins)
TORCH_DEVICE = "cuda:{}"


def torch_devices(_ctx: Any, parts: list[np.ndarray]) -> Callable[[], float]:
    """PyTorch: one tensor per ``cuda:<d>`` device; the dots queue on each device's
    current stream, then ``.item()`` waits for each device in turn."""
    import torch

    if TORCH_DEVICE.startswith("cuda") and torch.cuda.device_count() < len(parts):
        raise RuntimeError(f"{len(parts)} GPUs needed, {torch.cuda.device_count()} visible")
    on_device = [torch.from_numpy(np.ascontiguousarray(part)).to(TORCH_DEVICE.format(d))
                 for d, part in enumerate(parts)]

    def step() -> float:
        partial = [torch.dot(part, part) for part in on_device]
        return sum(float(p.item()) for p in partial)

    return step


#: the ``multi_gpu`` job's modes (:meth:`~gpubench.backends.hooks.MultiDevice.steps`)
STEPS = {"torch_devices": torch_devices}


class TorchMulti(MultiDevice):
    """PyTorch's several-GPU step (one tensor per device)."""

    @classmethod
    def steps(cls) -> dict[str, Callable[[Any, list[np.ndarray]], Callable[[], float]]]:
        return STEPS
