"""allocation in CuPy: ``pool`` (``cupy.empty`` from the default memory pool: after the
first call, its cached block), ``no_pool`` (``cupy.cuda.Memory``: ``cudaMalloc`` and
``cudaFree``, no pool) and ``managed`` (``cupy.cuda.ManagedMemory``:
``cudaMallocManaged``, asked for only where the card has the room free)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.allocation import MARK, require_free, verify
from gpubench.spec import BuildContext, implementation


def _probe(ctx: BuildContext, memory: Any) -> None:
    """Write and read back the last byte of ``memory`` (a ``cupy.cuda.BaseMemory``)."""
    import cupy

    view = cupy.ndarray((memory.size,), cupy.uint8, cupy.cuda.MemoryPointer(memory, 0))
    view[-1] = MARK
    verify(ctx.case, memory.size, int(view[-1].get()))


def _raw(ctx: BuildContext, make: Callable[[int], Any]) -> Callable[[], int]:
    n = ctx.case.size
    probe = make(n)
    _probe(ctx, probe)
    del probe

    def call() -> int:
        mem = make(n)
        nbytes = mem.size
        del mem  # the last reference: cudaFree
        return nbytes

    return call


@implementation("allocation", "cupy", "pool", devices=("gpu",))
def pool(ctx: BuildContext) -> Callable[[], int]:
    import cupy

    n = ctx.case.size
    probe = cupy.empty(n, dtype=cupy.uint8)
    probe[-1] = MARK
    verify(ctx.case, probe.nbytes, int(probe[-1].get()))
    del probe

    def call() -> int:
        buf = cupy.empty(n, dtype=cupy.uint8)
        nbytes = buf.nbytes
        del buf  # back to the pool
        return nbytes

    return call


@implementation("allocation", "cupy", "no_pool", devices=("gpu",))
def no_pool(ctx: BuildContext) -> Callable[[], int]:
    import cupy

    return _raw(ctx, cupy.cuda.Memory)


@implementation("allocation", "cupy", "managed", devices=("gpu",))
def managed(ctx: BuildContext) -> Callable[[], int]:
    import cupy

    # the raw figure: bytes CuPy's pool caches are not free for managed memory
    require_free(ctx.case, int(cupy.cuda.runtime.memGetInfo()[0]), "cupy.cuda.ManagedMemory")
    return _raw(ctx, cupy.cuda.ManagedMemory)
