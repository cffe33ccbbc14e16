"""CuPy on the first visible CUDA device, timed with CUDA events on the current stream.

``import cupy`` succeeds on a machine without a driver or GPU (the CUDA libraries are
loaded lazily), and the first device call then fails; start() turns every such failure
into :class:`Unavailable` with the reason, so the step records it instead of crashing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends.base import FULL_PRECISION, REDUCIBLE_DTYPES, Unavailable
from gpubench.backends.cuda_common import (
    CUDA_BUFFERS,
    FLUSH_BYTES,
    HIDE_LAUNCH_CYCLES,
    SPIN_KERNEL,
    CudaBuffersBackend,
    no_gpu_reason,
    selection_uuid,
)
from gpubench.backends.cupy.ceilings import CupyCeilings
from gpubench.backends.cupy.events import cupy_events
from gpubench.backends.cupy.mpi import CupyMulti
from gpubench.backends.hooks import PinnedStaging
from gpubench.cuda_launch import THREADS, grid_blocks


def cupy_tf32() -> bool:
    """Whether CuPy computes float32 GEMMs in TF32: its effective compute type where its
    internal module exposes it (CuPy keeps the first ``CUPY_TF32`` it saw), else the
    environment variable."""
    setting = os.environ.get("CUPY_TF32", "")
    try:
        from cupy._core import _routines_linalg as linalg

        return bool(linalg.get_compute_type(np.float32) == linalg.COMPUTE_TYPE_TF32)
    except (ImportError, AttributeError):
        return setting.strip() not in ("", "0")


def cupy_raw_grid(function: Any, items: int, shmem: int = 0, threads: int = THREADS) -> int:
    """:func:`grid_blocks` for a CuPy RawKernel, with CuPy's own occupancy and SM count."""
    import cupy

    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        function.kernel.ptr, threads, shmem)
    sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return grid_blocks(items, int(per_sm), int(sm_count), threads)


class CupyStaging(PinnedStaging):
    """CuPy arrays copied back into CuPy's pinned memory (``ndarray.get(out=)``)."""

    def alloc(self, nbytes: int) -> np.ndarray:
        # np.frombuffer keeps the PinnedMemoryPointer (and so the allocation) alive
        cupy = self.backend._cupy
        return np.frombuffer(cupy.cuda.alloc_pinned_memory(nbytes), np.uint8, nbytes)

    def copy(self, value: Any) -> np.ndarray | None:
        if not isinstance(value, self.backend._cupy.ndarray):
            return None
        host = self.view(value.nbytes, value.dtype, value.shape)
        value.get(out=host)  # blocking: done on return
        return host


class CupyGPU(CudaBuffersBackend):
    framework = "cupy"
    facts = CUDA_BUFFERS.but(
        registry_order=5, environment="cupy", display_name="CuPy", order=10,
        version_keys=("cupy",), key_packages=("cupy*", "fastrlock", "numpy"),
        probe_packages=("cupy-cuda12x", "cupy-cuda13x"),
        multi_device=("cupy_devices",), peer_copy=True, nccl=True,
        compile_cache_vars={"CUPY_CACHE_DIR": "cupy"},  # its compiled kernels (NVRTC cubins)
        device_probe_rank=1,
        caller_timer="perf_counter+cudaDeviceSynchronize",
        memory_probe="gpubench.backends.cupy.memory:CupyProbe",
        probe_module="cupy",
        # the MPI jobs' local work: cuBLAS and CuPy's dot, as a CuPy user writes them
        local_implementations={"reduction": "array_op", "matmul": "cublas",
                               "monte_carlo_pi": "array_ops"})
    multi = CupyMulti
    ceilings = CupyCeilings
    staging_type = CupyStaging

    def start(self, threads: int) -> dict[str, str]:
        """Import CuPy, check for a device, select it (:attr:`device_index`, 0 unless an
        MPI rank was given another), allocate the flush scratch.

        ``threads`` does not apply: CuPy runs no host thread pool of its own (the
        workshop book, §5.8).
        """
        try:
            import cupy
        except Exception as exc:  # any failure at import means "cannot run here"
            raise Unavailable(f"import cupy failed: {type(exc).__name__}: {exc}") from exc
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CUDARuntimeError without driver or GPU
            raise Unavailable(f"cupy {cupy.__version__}: {no_gpu_reason(exc)}") from exc
        if count < 1:
            raise Unavailable(f"cupy {cupy.__version__}: no usable CUDA GPU: "
                              "getDeviceCount() returned 0")
        try:
            cupy.cuda.Device(self.device_index).use()
            # Evict L2 before cold samples by writing a buffer several times its size.
            self._scratch = cupy.empty(FLUSH_BYTES, dtype=cupy.uint8)
            self._scratch.fill(0)
            # events on the current stream (record()'s default), waited on before read
            self.event_pair = cupy_events(cupy)
            # The busy kernel of hide_launch(), compiled (NVRTC) and run once here.
            self._spin = cupy.RawKernel(SPIN_KERNEL, "gpubench_spin")
            self._spin_args = (np.int64(HIDE_LAUNCH_CYCLES),)
            self._spin((1,), (1,), self._spin_args)
            cupy.cuda.get_current_stream().synchronize()
            versions = {
                "cupy": cupy.__version__,
                "cuda_runtime": str(cupy.cuda.runtime.runtimeGetVersion()),
                "cuda_driver": str(cupy.cuda.runtime.driverGetVersion()),
            }
        except Exception as exc:  # a broken device is a reason, not a crash
            raise Unavailable(f"cupy {cupy.__version__}: {no_gpu_reason(exc)}") from exc
        self._cupy = cupy
        return versions

    def compile_cache_dirs(self) -> list[Path]:
        """CuPy's kernel cache: every kernel it compiles (its ufuncs and reductions,
        ElementwiseKernel, RawKernel, RawModule) is stored there as a cubin keyed by
        source, options and compiler, and a later process loads it instead of running
        NVRTC. ``CUPY_CACHE_DIR``, default ``~/.cupy/kernel_cache``; none with
        ``CUPY_CACHE_IN_MEMORY=1``."""
        value = os.environ.get("CUPY_CACHE_IN_MEMORY", "")
        try:
            in_memory = bool(value) and int(value) == 1  # as CuPy reads it
        except ValueError:
            in_memory = False
        if in_memory:
            return []
        cupy = getattr(self, "_cupy", None)
        get_dir = getattr(getattr(getattr(cupy, "cuda", None), "compiler", None),
                          "get_cache_dir", None)
        if callable(get_dir):
            return [Path(get_dir())]
        return [Path(os.environ.get("CUPY_CACHE_DIR")
                     or os.path.expanduser("~/.cupy/kernel_cache"))]

    def device_name(self) -> str:
        name = self._cupy.cuda.runtime.getDeviceProperties(self.device_index)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def uuid(self) -> str:
        raw = self._cupy.cuda.runtime.getDeviceProperties(self.device_index).get("uuid")
        if isinstance(raw, bytes | bytearray) and len(raw) == 16:
            h = raw.hex()
            return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return selection_uuid(self.selection)

    def free_memory(self) -> int | None:
        """Free device memory plus what CuPy's pool holds but no array uses (reusable)."""
        free = int(self._cupy.cuda.runtime.memGetInfo()[0])
        return free + int(self._cupy.get_default_memory_pool().free_bytes())

    # -- data movement -----------------------------------------------------------------
    def to_device(self, array: np.ndarray) -> Any:
        """A fresh device copy (never shared with another input), finished on return."""
        out = self._cupy.asarray(np.ascontiguousarray(array))
        self._cupy.cuda.get_current_stream().synchronize()
        return out

    def to_host(self, value: Any) -> Any:
        """Device arrays (0-d included) come back as NumPy; host values pass through."""
        if isinstance(value, self._cupy.ndarray):
            return self._cupy.asnumpy(value)
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self._cupy.empty(shape, dtype=dtype)

    def poison(self, buffer: Any) -> None:
        buffer.fill(np.nan)

    def download(self, src: Any, host: np.ndarray) -> None:
        src.get(out=host)  # blocking: done on return

    def upload(self, host: np.ndarray, dst: Any) -> Any:
        dst.set(host)  # on the current stream: later device work sees it
        return dst

    # -- timing ------------------------------------------------------------------------
    def flush_cache(self) -> None:
        # Queued on the current stream before the start event, so it is never timed.
        self._scratch.fill(0)

    def hide_launch(self) -> None:
        # One thread spinning ~100 us on the current stream: the timed call's launches
        # queue behind it, so the start event fires when the device is ready for them.
        self._spin((1,), (1,), self._spin_args)

    def matmul_precision(self, dtype: str) -> str:
        """TF32 where CuPy's float32 GEMM compute type is TF32 (:func:`cupy_tf32`)."""
        return "tf32" if dtype in REDUCIBLE_DTYPES and cupy_tf32() else FULL_PRECISION

    def block(self, result: Any) -> None:
        self._cupy.cuda.get_current_stream().synchronize()

    def device_sync(self, result: Any) -> None:
        self._cupy.cuda.runtime.deviceSynchronize()
