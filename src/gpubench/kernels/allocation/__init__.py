"""allocation: allocate a buffer of ``size`` bytes and free it, once per call.

What a user loses by allocating inside a loop: each framework's allocator as it comes
(its pool or cache), beside the same framework's way to the raw driver allocation
(``cudaMalloc``/``cudaFree``, ``cuMemAlloc``/``cuMemFree``) and, where the framework
offers it, managed (unified) memory. One call asks for ``size`` bytes (uint8), reads
the allocation's size back from the framework's object and frees it; it returns that
size, and the check requires exactly the bytes asked for. The buffer is never touched
in the timed call: a write would add a kernel launch (what ``launch_overhead``
measures) and, for managed memory, a page fault, neither of them the allocation.
Untimed, each builder allocates once by the same path, writes the last byte and reads
it back; a buffer that does not hold it is a :class:`~gpubench.spec.WrongResult`.

What each row measures (``ALLOCATORS`` below names each row's kind for the report):

* NumPy ``empty`` (CPU): ``malloc``/``free`` (glibc serves large blocks with
  ``mmap``/``munmap``; untouched pages are never faulted in).
* CuPy ``pool``: ``cupy.empty`` from the default memory pool; after the first call the
  pool hands back its cached block. ``no_pool``: ``cupy.cuda.Memory``, which is
  ``cudaMalloc``/``cudaFree`` with no pool. ``managed``: ``cupy.cuda.ManagedMemory``
  (``cudaMallocManaged``).
* PyTorch ``empty``: ``torch.empty``; on a GPU the caching allocator (a cached block
  after the first call), on the CPU PyTorch's CPU allocator. ``no_cache`` (GPU): the
  same, then ``torch.cuda.empty_cache()``, which gives every unused cached block back
  (``cudaFree``), so the next ``torch.empty`` goes to ``cudaMalloc``: the driver's cost
  plus the allocator's bookkeeping, as a PyTorch user gets it who empties the cache.
  ``PYTORCH_NO_CUDA_MEMORY_CACHING`` would do it for every row of the step, so it is not
  used.
* JAX ``zeros``: JAX has no allocation without a computation (``jnp.empty`` is
  ``jnp.zeros``): the call dispatches the fill, waits for the array and deletes it, so
  it pays the dispatch, a fill kernel at memory speed and the wait beside XLA's
  allocator (on GPUs its BFC pool, which preallocates unless
  ``XLA_PYTHON_CLIENT_PREALLOCATE=false``).
* Numba ``device_array``: ``cuMemAlloc`` through Numba's context; Numba defers frees
  (a batch every 10 arrays, or at a share of the card), so the call empties the list
  (``deallocations.clear()``) and each call pays one ``cuMemFree``, not a tenth of a
  batch in some samples and none in the median. ``managed_array``: ``cuMemAllocManaged``.
* CUDA Python ``mem_alloc``: ``cuMemAlloc``/``cuMemFree``, the floor every row is read
  against. ``mem_alloc_async``: ``cuMemAllocAsync``/``cuMemFreeAsync`` on the backend's
  stream from the device's default stream-ordered pool, as it comes (release threshold
  0: the pool gives its memory back at each synchronize, so the sync clock pays the
  driver and the pipelined clock reuses the block). ``mem_alloc_managed``:
  ``cuMemAllocManaged``/``cuMemFree``.

Managed memory can oversubscribe the card, so no managed row asks for more than the
card has free: its builder reads the free device memory first (the raw figure, not a
pool's cached bytes) and, if ``size`` × :data:`MANAGED_HEADROOM` is more, the row is
``skipped`` with the numbers (every row is also subject to the harness's own memory
check, :meth:`Allocation.memory_bytes` × the run's ``memory_headroom``).

Rows read as time per allocation (``median_s``; bytes and GB/s do not apply: nothing
is moved). Host work, so timed on the host clock and a wait.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, WrongResult

#: the byte the builders' probe allocation writes last and reads back
MARK = 0x5A
#: a managed row needs at least ``size`` × this free on the card, or it is skipped
MANAGED_HEADROOM = 1.5

#: (framework, implementation) -> the kind of allocator the row measures: "pool" (the
#: framework's own pool or cache, as it comes), "driver" (the raw driver allocation,
#: no pool), "managed" (managed memory, no pool), "host" (the CPU allocator)
ALLOCATORS: Mapping[tuple[str, str], str] = {
    ("numpy", "empty"): "host",
    ("cupy", "pool"): "pool",
    ("cupy", "no_pool"): "driver",
    ("cupy", "managed"): "managed",
    ("torch", "empty"): "pool",
    ("torch", "no_cache"): "driver",
    ("jax", "zeros"): "pool",
    ("numba", "device_array"): "driver",
    ("numba", "managed_array"): "managed",
    ("cuda_python", "mem_alloc"): "driver",
    ("cuda_python", "mem_alloc_async"): "pool",
    ("cuda_python", "mem_alloc_managed"): "managed",
}


def allocator_kind(framework: str, implementation: str, device: str = "gpu") -> str:
    """The kind of allocator a row measures ('' for one not listed); every CPU row is
    the host allocator."""
    if device == "cpu":
        return "host"
    return ALLOCATORS.get((framework, implementation), "")


class Allocation(KernelSpec):
    name = "allocation"
    memory_relative = False
    order = 130
    bound = "latency"
    ceiling = "none"
    unit = "GB/s"
    report_class = None
    target_pct = 0
    description = ("allocate a buffer and free it, once per call: each framework's pool "
                   "beside the raw driver allocation and managed memory")
    size_meaning = "bytes allocated"
    variants = ("alloc_free",)
    dtypes = ("uint8",)
    default_sizes = (1 << 10, 1 << 20, 1 << 26)
    place_inputs = False
    hide_launch = False
    #: allocation is host work (a driver call, a pool's bookkeeping): host clock and a wait
    host_timed = True
    #: the size is an integer: it must be exact
    tolerances: Mapping[str, float] = {"uint8": 0.0}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Nothing goes in: the call allocates its own buffer."""
        return {}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> int:
        """The bytes asked for."""
        return int(case.size)

    def bytes_moved(self, case: Case) -> float:
        """Nothing is moved: bytes and GB/s do not apply to an allocation."""
        return 0.0

    def memory_bytes(self, case: Case) -> float:
        """The builder's probe and the call's buffer are never alive together; a pool
        may keep one freed block beside the next call's, so twice the size."""
        return 2.0 * case.size

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """The call reports the bytes its framework allocated: exactly ``size``."""
        got = np.asarray(result)
        if got.shape != () or not np.issubdtype(got.dtype, np.integer):
            return Check(math.nan, 0.0, False,
                         f"got {got.dtype}{list(got.shape)}, expected the allocated byte count")
        if int(got) != int(ref):
            return Check(abs(int(got) - int(ref)) / max(int(ref), 1), 0.0, False,
                         f"allocated {int(got)} bytes, asked for {int(ref)}")
        return Check(0.0, 0.0, True)


SPEC = Allocation()


def verify(case: Case, nbytes: int, last_byte: int) -> None:
    """The builder's untimed probe: the allocation has ``case.size`` bytes and its last
    byte reads back :data:`MARK`; otherwise :class:`WrongResult`."""
    if int(nbytes) != case.size:
        raise WrongResult(f"the probe allocation has {int(nbytes)} bytes, asked for {case.size}")
    if int(last_byte) != MARK:
        raise WrongResult(f"the probe allocation's last byte reads {int(last_byte):#x} "
                          f"after writing {MARK:#x}")


def require_free(case: Case, free: int | None, what: str) -> None:
    """Raise MemoryError (the harness records the row as ``skipped`` with this reason)
    unless the card has ``size`` × :data:`MANAGED_HEADROOM` bytes free: managed memory
    can oversubscribe the card, so it is never asked for beyond that."""
    if free is None:
        raise MemoryError(f"{what}: the card's free memory cannot be read here, and managed "
                          "memory is never asked for without knowing it")
    need = case.size * MANAGED_HEADROOM
    if need > free:
        raise MemoryError(f"{what}: {case.size:,} bytes × {MANAGED_HEADROOM} headroom "
                          f"= {need / 2**30:.2f} GiB, more than the {free / 2**30:.2f} GiB "
                          "free on the card (managed memory may oversubscribe it, so it is "
                          "never asked for beyond what is free)")
