"""allocation in Numba CUDA: ``cuda.device_array`` (``cuMemAlloc`` through Numba's
context, no pool) and ``cuda.managed_array`` (``cuMemAllocManaged``), then dropped.

Numba defers frees: a dropped array joins a list freed in a batch (every 10 arrays, or
at a share of the card). Timed as it comes, most samples would pay no ``cuMemFree`` and
every tenth a batch of them, and the median would hide the frees; so the call empties
the list (``current_context().deallocations.clear()``) and each call pays its own free.
The CUDA simulator has no such list (nothing to flush) and no managed arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.kernels.allocation import MARK, require_free, verify
from gpubench.spec import BuildContext, implementation


def _build(ctx: BuildContext, alloc: Callable[..., Any]) -> Callable[[], int]:
    from gpubench.backends.numba.gpu import import_cuda

    cuda = import_cuda()
    n = ctx.case.size
    deallocations = getattr(cuda.current_context(), "deallocations", None)
    flush = deallocations.clear if deallocations is not None else (lambda: None)
    probe = alloc(n, dtype=np.uint8)
    probe[n - 1:] = np.array([MARK], dtype=np.uint8)
    verify(ctx.case, probe.nbytes, _last_byte(cuda, probe))
    del probe
    flush()

    def call() -> int:
        buf = alloc(n, dtype=np.uint8)
        nbytes = buf.nbytes
        del buf
        flush()
        return nbytes

    return call


def _last_byte(cuda: Any, probe: Any) -> int:
    """The probe's last byte as the host reads it. A managed array is a NumPy array
    over memory the host can read (after a sync); its slices lack the device array's
    ``alloc_size``, so ``copy_to_host`` fails on them (Numba 0.6x, seen on the H100)."""
    if isinstance(probe, np.ndarray):
        cuda.synchronize()
        return int(np.asarray(probe)[-1])
    return int(probe[probe.size - 1:].copy_to_host()[0])


@implementation("allocation", "numba", "device_array", devices=("gpu",))
def device_array(ctx: BuildContext) -> Callable[[], int]:
    from gpubench.backends.numba.gpu import import_cuda

    return _build(ctx, import_cuda().device_array)


@implementation("allocation", "numba", "managed_array", devices=("gpu",))
def managed_array(ctx: BuildContext) -> Callable[[], int]:
    from gpubench.backends.numba.gpu import import_cuda

    cuda = import_cuda()
    if not hasattr(cuda, "managed_array"):
        raise ImportError("numba.cuda.managed_array: this Numba (or its CUDA simulator) "
                          "has no managed arrays")
    require_free(ctx.case, ctx.backend.free_memory(), "numba.cuda.managed_array")
    return _build(ctx, cuda.managed_array)
