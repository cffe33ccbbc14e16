"""Numba's CUDA target (``numba.cuda``, shipped as the numba-cuda package) on GPU 0.

Everything here runs on the default (legacy) stream, stream 0: kernels launched without
a stream, ``cuda.to_device``, the ufuncs of ``@vectorize(target="cuda")`` and
``cuda.reduce`` all use it, so the timing events are recorded there too.

NumPy 2.5 removed ``numpy.row_stack`` (an alias of ``numpy.vstack``); numba-cuda 0.30.4
still registers an overload for it when its array support is imported, which then
fails with ``module 'numpy' has no attribute 'row_stack'``. :func:`import_cuda` puts the
alias back before anything imports ``numba.cuda``; every implementation imports the
module through it. The shim is recorded in the backend's versions.

Under ``NUMBA_ENABLE_CUDASIM=1`` (Numba's CUDA simulator, used by the tests on machines
without a GPU) the backend still works: the simulator runs kernels in Python threads
on the host and has no timing events or memory information, so samples are a host
clock around the call (timer ``perf_counter+sync``) and free memory is unknown.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from gpubench.backends.base import Unavailable
from gpubench.backends.cuda_common import CUDA_BUFFERS, CudaBuffersBackend
from gpubench.backends.hooks import PinnedStaging
from gpubench.backends.numba.adapter import NUMBA
from gpubench.backends.numba.mpi import NumbaMulti
from gpubench.timing import EventPair

#: threads per block of the 1-D kernels on a GPU (a multiple of the warp size that lets
#: 8 blocks share one SM's 2048 thread slots)
THREADS_PER_BLOCK = 256
#: the same in the CUDA simulator, which runs every GPU thread as a Python thread and
#: every barrier across them: small blocks keep the tests fast; same code, same logic
SIM_THREADS_PER_BLOCK = 32
#: resident threads of the simulator's one pretend SM (so at most 2 blocks of 32)
SIM_THREADS_PER_SM = 64

#: what the NumPy shim did in this process: "" (not yet run), "applied" or "not needed"
_shim_state = ""

#: ``numba.cuda`` once imported. Kernels must reach it as a *module global* named
#: ``cuda`` (not a closure variable): the CUDA simulator swaps exactly such globals for
#: its fake thread-index API while a kernel runs. Implementation modules follow suit.
cuda: Any = None


def apply_numpy_shim() -> str:
    """Restore ``numpy.row_stack`` (removed in NumPy 2.5) as the alias of ``vstack`` it was.

    numba-cuda 0.30.4 overloads ``np.row_stack`` at import of its array support; with
    NumPy 2.5 that attribute lookup fails and with it every kernel compilation.
    Returns "applied" when the alias had to be added, else "not needed".
    """
    global _shim_state
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # type: ignore[attr-defined]
        _shim_state = "applied"
    elif not _shim_state:
        _shim_state = "not needed"
    return _shim_state


def import_cuda() -> ModuleType:
    """``numba.cuda``, imported only after the NumPy shim is in place."""
    apply_numpy_shim()
    from numba import cuda

    return cuda


@functools.cache
def is_simulator() -> bool:
    """Whether the imported ``numba.cuda`` is Numba's CUDA simulator.

    Read from the config ``numba.cuda`` itself was imported under (it reads
    ``NUMBA_ENABLE_CUDASIM`` once), not from the environment, which may change later.
    """
    return bool(_config().ENABLE_CUDASIM)


def _config() -> Any:
    """The config module ``numba.cuda`` reads (numba-cuda's own, or Numba's for the old one)."""
    import_cuda()
    try:
        from numba.cuda.core import config
    except ImportError:  # the numba.cuda built into older Numba releases
        from numba.core import config
    return config


def require_device(feature: str) -> None:
    """Raise NotImplementedError when ``feature`` is one the CUDA simulator lacks."""
    if is_simulator():
        raise NotImplementedError(f"{feature} does not run in Numba's CUDA simulator")


@functools.cache
def device_limits() -> tuple[int, int]:
    """(SM count, resident threads per SM) of the current device (pretend ones in the simulator)."""
    if is_simulator():
        return 1, SIM_THREADS_PER_SM
    dev = import_cuda().get_current_device()
    return int(dev.MULTIPROCESSOR_COUNT), int(dev.MAX_THREADS_PER_MULTIPROCESSOR)


def threads_per_block() -> int:
    """Block size of the 1-D kernels: 256 on a GPU, 32 in the simulator."""
    return SIM_THREADS_PER_BLOCK if is_simulator() else THREADS_PER_BLOCK


def grid_1d(n: int, threads: int | None = None) -> tuple[int, int]:
    """(blocks, threads) for a grid-stride loop over ``n`` items.

    At most one full wave of resident blocks (SMs x blocks per SM: 132 x 8 = 1056 on an
    H100 at 256 threads), fewer when ``n`` needs fewer: each thread then loops over
    ``n / (blocks * threads)`` items, and no block waits for a second wave.
    """
    threads = threads or threads_per_block()
    sms, per_sm = device_limits()
    full_wave = sms * max(1, per_sm // threads)
    return max(1, min(math.ceil(n / threads), full_wave)), threads


@functools.cache
def _fill_kernel() -> Callable[..., Any]:
    """``x[:] = value`` for a 1-D device array: poisons outputs and flushes the L2."""
    global cuda
    cuda = import_cuda()

    @cuda.jit
    def fill(x, value):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            x[i] = value

    return fill


def fill(buffer: Any, value: float) -> None:
    """Write ``value`` into every element of a contiguous device array (asynchronously)."""
    flat = buffer.reshape(buffer.size)
    if flat.size:
        blocks, threads = grid_1d(flat.size)
        _fill_kernel()[blocks, threads](flat, value)


class NumbaStaging(PinnedStaging):
    """Numba CUDA's device arrays copied back into its pinned array (default stream)."""

    def alloc(self, nbytes: int) -> np.ndarray:
        return self.backend._cuda.pinned_array(nbytes, dtype=np.uint8)

    def copy(self, value: Any) -> np.ndarray | None:
        if not hasattr(value, "copy_to_host") or not value.is_c_contiguous():
            return None
        host = self.view(value.nbytes, value.dtype, value.shape)
        value.copy_to_host(ary=host)  # default stream: synchronous
        return host


class NumbaGPU(CudaBuffersBackend):
    """Numba CUDA kernels on the first GPU, timed with CUDA events on stream 0."""

    framework = "numba"
    facts = CUDA_BUFFERS.but(
        **NUMBA, registry_order=6, environment="numba-cuda",
        probe_packages=("numba", "numba-cuda"),
        # numba.cuda.synchronize() waits for the whole context (every stream)
        caller_timer="perf_counter+numba.cuda.synchronize",
        memory_probe="gpubench.backends.numba.memory:NumbaProbe",
        probe_module="numba.cuda",
        # several GPUs from one process: one context per device (``cuda.gpus[d]``)
        multi_device=("numba_devices",),
        # the MPI jobs' local work: the kernels' own ``@cuda.jit`` versions
        local_implementations={"reduction": "cuda_jit", "matmul": "cuda_jit_tiled",
                               "monte_carlo_pi": "xoroshiro"})
    multi = NumbaMulti
    staging_type = NumbaStaging

    def compile_cache_dirs(self) -> list[Path]:
        """None: Numba caches ``@cuda.jit`` kernels on disk only for ``cache=True``,
        which no implementation here uses (nor can its CUDA ufuncs), so every process
        compiles anew. (The driver's own PTX cache, ``CUDA_CACHE_PATH``, is not
        watched: the PTX-to-SASS step it saves is a small part of Numba's compile.)"""
        return []

    def start(self, threads: int) -> dict[str, str]:
        try:
            cuda = import_cuda()
        except Exception as exc:
            raise Unavailable(f"import numba.cuda failed: {type(exc).__name__}: {exc}") from exc
        self._cuda = cuda
        self._sim = is_simulator()
        if not self._sim and not cuda.is_available():
            raise Unavailable(_unavailable_reason(cuda))
        try:
            cuda.select_device(self.device_index)
        except Exception as exc:
            raise Unavailable(f"cuda.select_device({self.device_index}) failed: "
                              f"{type(exc).__name__}: {exc}") from exc
        from gpubench.backends.cuda_common import FLUSH_BYTES

        # Small cases launch few blocks on purpose (grid_1d); Numba warns on every such
        # launch configuration, which would only fill the logs.
        _config().CUDA_LOW_OCCUPANCY_WARNINGS = 0
        if self._sim:
            # No cache to evict and every element costs a Python call: keep it tiny.
            self.facts = self.facts.but(timer="perf_counter+sync")  # this instance's
            self._scratch = cuda.device_array(1024, dtype=np.float32)
        else:
            self._scratch = cuda.device_array(FLUSH_BYTES // 4, dtype=np.float32)
            # events on stream 0 (record()'s default), waited on before read; the
            # simulator has none: its samples are on the host clock and a synchronize
            self.event_pair = EventPair(
                cuda.event(timing=True), cuda.event(timing=True),
                lambda a, b: cuda.event_elapsed_time(a, b) / 1e3,
                done=lambda ev: bool(ev.query()))
        # Compile the fill kernel now (for both uses) so no sample ever pays for it.
        fill(self._scratch, 0.0)
        if not self._sim:
            spin()[1, 1](1)
        cuda.synchronize()
        return self._versions()

    def _versions(self) -> dict[str, str]:
        import numba

        cuda = self._cuda
        versions = {"numba": numba.__version__, "numpy": np.__version__,
                    "numba-cuda": _dist_version("numba-cuda"),
                    "cuda-bindings": _dist_version("cuda-bindings")}
        if apply_numpy_shim() == "applied":
            versions["numpy_row_stack_shim"] = "applied"
        if self._sim:
            versions["cuda_simulator"] = "NUMBA_ENABLE_CUDASIM=1 (no GPU; timings meaningless)"
            return versions
        try:
            from numba.cuda.cudadrv import driver

            versions["cuda_driver"] = ".".join(map(str, driver.driver.get_version()))
        except Exception as exc:  # noqa: BLE001 - a version we cannot read is not fatal
            versions["cuda_driver"] = f"unknown ({type(exc).__name__})"
        try:
            versions["cuda_runtime"] = ".".join(map(str, cuda.runtime.get_version()))
        except Exception as exc:  # noqa: BLE001
            versions["cuda_runtime"] = f"unknown ({type(exc).__name__})"
        cc = cuda.get_current_device().compute_capability
        versions["compute_capability"] = ".".join(map(str, cc))
        return versions

    def device_name(self) -> str:
        if self._sim:
            return "Numba CUDA simulator (host CPU)"
        name = self._cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)

    def free_memory(self) -> int | None:
        if self._sim:
            return None
        return int(self._cuda.current_context().get_memory_info()[0])

    def uuid(self) -> str:
        if self._sim:
            return ""
        from gpubench.backends.cuda_common import selection_uuid

        uuid = getattr(self._cuda.get_current_device(), "uuid", "")
        return str(uuid) or selection_uuid(self.selection)

    # -- data movement -----------------------------------------------------------------
    def to_device(self, array: np.ndarray) -> Any:
        dev = self._cuda.to_device(np.ascontiguousarray(array))
        self._cuda.synchronize()
        return dev

    def to_host(self, value: Any) -> Any:
        if hasattr(value, "copy_to_host"):
            return np.asarray(value.copy_to_host())
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self._cuda.device_array(shape, dtype=np.dtype(dtype))

    def poison(self, buffer: Any) -> None:
        if np.issubdtype(buffer.dtype, np.inexact):
            fill(buffer, math.nan)
        self._cuda.synchronize()

    def download(self, src: Any, host: np.ndarray) -> None:
        src.copy_to_host(host)  # default stream: synchronous

    def upload(self, host: np.ndarray, dst: Any) -> Any:
        dst.copy_to_device(host)
        return dst

    # -- timing ------------------------------------------------------------------------
    def flush_cache(self) -> None:
        # Not synchronised: the flush also keeps the GPU busy while the timed call is
        # launched, so cold samples bracket device work like hot ones (see hide_launch).
        fill(self._scratch, 0.0)

    def hide_launch(self) -> None:
        if not self._sim:
            spin()[1, 1](100)

    def block(self, result: Any) -> None:
        self._cuda.synchronize()


def _dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _unavailable_reason(cuda: ModuleType) -> str:
    """Why ``cuda.is_available()`` is False: the driver's init error and NVVM's state."""
    parts = ["numba.cuda.is_available() is False"]
    try:
        from numba.cuda.cudadrv import driver, nvvm

        err = driver.driver.initialization_error
        if err:
            parts.append("driver: " + " ".join(str(err).split()))
        elif not nvvm.is_available():
            parts.append("libNVVM not found (install the CUDA toolkit's nvvm)")
    except Exception as exc:  # noqa: BLE001 - the reason is best effort
        parts.append(f"({type(exc).__name__}: {exc})")
    return "; ".join(parts)[:500]


@functools.cache
def spin() -> Any:
    """A one-thread kernel that sleeps ``steps`` x 1 us: the busy kernel of hide_launch.

    ``nanosleep`` is approximate (0 to 2x the request), so 100 steps give roughly
    100 us: longer than Numba's ~30-40 us launch path, short next to a sample budget.
    """
    cuda = import_cuda()

    @cuda.jit
    def _spin(steps: int) -> None:
        for _ in range(steps):
            cuda.nanosleep(1000)

    return _spin


def launch(kernel: Any, items: int, *args: Any) -> None:
    """Launch a grid-stride kernel over ``items`` work items (at least one block)."""
    blocks, threads = grid_1d(max(1, items))
    kernel[blocks, threads](*args)
