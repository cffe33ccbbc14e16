"""allocation in CUDA Python: the driver API itself. ``mem_alloc``: ``cuMemAlloc`` and
``cuMemFree``, the floor the other rows are read against. ``mem_alloc_async``:
``cuMemAllocAsync`` and ``cuMemFreeAsync`` on the backend's stream, from the device's
default stream-ordered pool as it comes (its release threshold is 0: at each
synchronize the pool gives its memory back, so the sync clock pays the driver and the
pipelined clock reuses the block). ``mem_alloc_managed``: ``cuMemAllocManaged`` (global
attachment) and ``cuMemFree``, asked for only where the card has the room free.

A driver pointer carries no size, so these calls return the size they asked for (a
size query would add a driver call to the timed region); the builder's probe, which
writes and reads back the allocation's last byte, is what checks them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.kernels.allocation import MARK, require_free, verify
from gpubench.spec import BuildContext, implementation


def _probe(ctx: BuildContext, ptr: int) -> None:
    """Write the last byte of the ``size``-byte allocation at ``ptr`` and read it back."""
    from cuda.bindings import driver

    from gpubench.backends.cuda_python.adapter import _check

    n = ctx.case.size
    host = np.zeros(1, dtype=np.uint8)
    _check(driver.cuMemsetD8(ptr + n - 1, MARK, 1))
    _check(driver.cuMemcpyDtoH(host.ctypes.data, ptr + n - 1, 1))
    verify(ctx.case, n, int(host[0]))


@implementation("allocation", "cuda_python", "mem_alloc", devices=("gpu",))
def mem_alloc(ctx: BuildContext) -> Callable[[], int]:
    from cuda.bindings import driver

    from gpubench.backends.cuda_python.adapter import _check

    n = ctx.case.size
    ptr = _check(driver.cuMemAlloc(n))
    try:
        _probe(ctx, int(ptr))
    finally:
        _check(driver.cuMemFree(ptr))

    def call() -> int:
        p = _check(driver.cuMemAlloc(n))
        _check(driver.cuMemFree(p))
        return n

    return call


@implementation("allocation", "cuda_python", "mem_alloc_async", devices=("gpu",))
def mem_alloc_async(ctx: BuildContext) -> Callable[[], int]:
    from cuda.bindings import driver

    from gpubench.backends.cuda_python.adapter import _check

    n, stream = ctx.case.size, ctx.backend.stream.handle
    ptr = _check(driver.cuMemAllocAsync(n, stream))
    try:
        _check(driver.cuStreamSynchronize(stream))
        _probe(ctx, int(ptr))
    finally:
        _check(driver.cuMemFreeAsync(ptr, stream))
        _check(driver.cuStreamSynchronize(stream))

    def call() -> int:
        p = _check(driver.cuMemAllocAsync(n, stream))
        _check(driver.cuMemFreeAsync(p, stream))
        return n

    return call


@implementation("allocation", "cuda_python", "mem_alloc_managed", devices=("gpu",))
def mem_alloc_managed(ctx: BuildContext) -> Callable[[], int]:
    from cuda.bindings import driver

    from gpubench.backends.cuda_python.adapter import _check

    require_free(ctx.case, ctx.backend.free_memory(), "cuMemAllocManaged")
    n = ctx.case.size
    attach = driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL
    ptr = _check(driver.cuMemAllocManaged(n, attach))
    try:
        _probe(ctx, int(ptr))
    finally:
        _check(driver.cuMemFree(ptr))

    def call() -> int:
        p = _check(driver.cuMemAllocManaged(n, attach))
        _check(driver.cuMemFree(p))
        return n

    return call
