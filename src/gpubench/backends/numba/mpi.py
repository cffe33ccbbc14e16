"""What the MPI jobs need of Numba CUDA: one process driving several GPUs
(:mod:`gpubench.mpi.jobs`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.backends.hooks import MultiDevice


def numba_devices(ctx: Any, parts: list[np.ndarray]) -> Callable[[], float]:
    """Numba CUDA: each device's part reduced by the reduction kernel's own ``@cuda.jit``
    implementation, built and launched inside that device's context
    (``cuda.gpus[d]``); every launch queued before any result is copied back."""
    from gpubench.kernels.reduction import SPEC as REDUCTION

    cuda = ctx.ad._cuda  # numba.cuda, as the started backend imported it
    if len(cuda.gpus) < len(parts):
        raise RuntimeError(f"{len(parts)} GPUs needed, {len(cuda.gpus)} visible")
    calls = []
    for d, part in enumerate(parts):
        with cuda.gpus[d]:
            calls.append(ctx.ad.build_kernel(REDUCTION.name, "sumsq", len(part),
                                             str(part.dtype), {"a": cuda.to_device(part)}))

    def step() -> float:
        partial = []
        for d, call in enumerate(calls):
            with cuda.gpus[d]:
                partial.append(call())
        total = 0.0
        for d, p in enumerate(partial):
            with cuda.gpus[d]:
                total += float(np.asarray(p.copy_to_host()).sum())
        return total

    return step


#: the ``multi_gpu`` job's modes (:meth:`~gpubench.backends.hooks.MultiDevice.steps`)
STEPS = {"numba_devices": numba_devices}


class NumbaMulti(MultiDevice):
    """Numba CUDA's several-GPU step, and its simulator, which needs no GPU."""

    @classmethod
    def steps(cls) -> dict[str, Callable[[Any, list[np.ndarray]], Callable[[], float]]]:
        return STEPS

    @classmethod
    def simulated(cls, env: Any) -> bool:
        """Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) runs without a GPU."""
        return env.get("NUMBA_ENABLE_CUDASIM") == "1"
