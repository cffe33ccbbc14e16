"""PyTorch tensors (eager and autograd)."""

from __future__ import annotations

import getpass
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends.base import (
    FULL_PRECISION,
    REDUCIBLE_DTYPES,
    Backend,
    Facts,
    Unavailable,
)
from gpubench.backends.cuda_common import HIDE_LAUNCH_CYCLES
from gpubench.backends.hooks import PinnedStaging
from gpubench.backends.torch.ceilings import TorchCeilings
from gpubench.backends.torch.events import torch_events
from gpubench.backends.torch.mpi import TorchMulti


def inductor_cache_dir() -> Path:
    """TorchInductor's cache folder as ``torch._inductor`` would choose it, without
    importing Inductor or creating the folder (its own ``cache_dir()`` does both)."""
    where = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if where:
        return Path(os.path.abspath(where))
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        getuid = getattr(os, "getuid", None)
        user = f"uid_{getuid()}" if callable(getuid) else "unknown_user"
    return Path(tempfile.gettempdir()) / ("torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


#: what PyTorch's CPU and GPU backends both declare
TORCH = Facts(
    display_name="PyTorch", order=50, version_keys=("torch",),
    key_packages=("torch", "triton", "numpy"), probe_packages=("torch",),
    compile_cache_vars={"TORCHINDUCTOR_CACHE_DIR": "torchinductor",  # torch.compile's
                        "TRITON_CACHE_DIR": "triton"},  # Triton's compiled kernels
    # TorchInductor compiles in the calling thread, not in a pool of worker processes
    # that may still be compiling (other rows' kernels) while later rows are timed
    step_settings={"TORCHINDUCTOR_COMPILE_THREADS": "1"},
    # the implementations that compile through TorchInductor or Triton: the others
    # (eager, autograd, copies) run PyTorch's own precompiled kernels and never touch
    # those caches (on a first H100 run 201 such rows read "warm" and were left out of
    # the first-call figures)
    compiling=frozenset({"compile", "triton"}))


class TorchBase(Backend):
    framework = "torch"
    facts = TORCH
    torch_device = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        try:
            import torch
        except Exception as exc:
            raise Unavailable(f"import torch failed: {type(exc).__name__}: {exc}") from exc
        torch.set_num_threads(threads)
        self._torch = torch
        return {"torch": torch.__version__, "torch_threads": str(torch.get_num_threads())}

    def compile_cache_dirs(self) -> list[Path]:
        """TorchInductor's cache (``torch.compile``: FX graphs, generated code, compiled
        kernels, and on GPUs Triton's cubins in its ``triton/`` folder):
        ``TORCHINDUCTOR_CACHE_DIR``, default ``<tmp>/torchinductor_<user>``. Eager
        calls compile nothing there."""
        return [inductor_cache_dir()]

    def matmul_precision(self, dtype: str) -> str:
        """PyTorch's float32 matmul setting: ``torch.get_float32_matmul_precision()``
        ("medium": bfloat16 allowed, "high": TF32) and, on GPUs,
        ``torch.backends.cuda.matmul.allow_tf32``."""
        if dtype not in REDUCIBLE_DTYPES:
            return FULL_PRECISION
        torch = self._torch
        level = torch.get_float32_matmul_precision()
        if level == "medium":
            return "bf16"
        if level == "high" or (self.device == "gpu" and torch.backends.cuda.matmul.allow_tf32):
            return "tf32"
        return FULL_PRECISION

    def to_device(self, array: np.ndarray) -> Any:
        """A copy of ``array`` where the backend's tensors live, sharing no memory with
        it, finished on return. On the CPU that is a host copy; to a GPU the transfer is
        the copy: a host copy before it took 20 s of the PyTorch step's 150 s on the H100
        (its time by stage)."""
        if self.device == "cpu":
            return self._torch.from_numpy(np.array(array, copy=True))
        out = self._torch.from_numpy(np.ascontiguousarray(array)).to(self.torch_device)
        self._torch.cuda.synchronize()
        return out

    def to_host(self, value: Any) -> Any:
        if isinstance(value, self._torch.Tensor):
            if value.dtype == self._torch.bfloat16:  # NumPy has none: widened (exact)
                value = value.float()
            return value.detach().cpu().numpy()
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self._torch.empty(shape, dtype=getattr(self._torch, dtype),
                                 device=self.torch_device)

    def poison(self, buffer: Any) -> None:
        buffer.fill_(float("nan"))


class TorchCPU(TorchBase):
    device = "cpu"
    facts = TORCH.but(registry_order=4, environment="torch-cpu")
    torch_device = "cpu"


class TorchStaging(PinnedStaging):
    """CUDA tensors copied back into a pinned tensor's memory, viewed through NumPy."""

    tensor: Any = None  # the pinned tensor that owns the buffer

    def alloc(self, nbytes: int) -> np.ndarray:
        torch = self.backend._torch
        self.tensor = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        return self.tensor.numpy()

    def copy(self, value: Any) -> np.ndarray | None:
        torch = self.backend._torch
        if not isinstance(value, torch.Tensor) or value.device.type != "cuda":
            return None
        try:
            dtype = np.dtype(str(value.dtype).removeprefix("torch."))
        except TypeError:  # bfloat16 and the like have no NumPy dtype
            return None
        host = self.view(value.nbytes, dtype, tuple(value.shape))
        torch.from_numpy(host).copy_(value.detach())  # blocking into pinned memory
        return host


class TorchGPU(TorchBase):
    """PyTorch on the first CUDA device, timed with CUDA events on the current stream."""

    device = "gpu"
    torch_device = "cuda"
    facts = TORCH.but(
        registry_order=8, environment="torch", timer="cuda_event",
        # torch.cuda.synchronize() waits for every stream of the device
        # (cudaDeviceSynchronize)
        caller_timer="perf_counter+torch.cuda.synchronize",
        memory_probe="gpubench.backends.torch.memory:TorchProbe",
        supports_cold=True, multi_device=("torch_devices",), device_probe_rank=0)
    multi = TorchMulti
    ceilings = TorchCeilings
    staging_type = TorchStaging

    def start(self, threads: int) -> dict[str, str]:
        versions = super().start(threads)
        torch = self._torch
        if not torch.cuda.is_available():
            raise Unavailable(f"torch {torch.__version__}: torch.cuda.is_available() is False"
                              f" (CUDA build: {torch.version.cuda or 'none'})")
        from gpubench.backends.cuda_common import FLUSH_BYTES

        torch.cuda.init()
        # Full-precision float32 matmuls: TF32 would fail the float32 tolerance.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self._scratch = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        # events on the current stream (record()'s default), waited on before read
        self.event_pair = torch_events(torch)
        versions.update(cuda=str(torch.version.cuda), cudnn=str(torch.backends.cudnn.version()))
        return versions

    def compile_cache_dirs(self) -> list[Path]:
        """Inductor's cache and Triton's own (``TRITON_CACHE_DIR``, default
        ``~/.triton/cache``; Inductor sends Triton into its own folder unless that
        variable is set)."""
        triton = os.environ.get("TRITON_CACHE_DIR") or os.path.join(
            os.path.expanduser("~"), ".triton", "cache")
        return [*super().compile_cache_dirs(), Path(triton)]

    def device_name(self) -> str:
        return self._torch.cuda.get_device_name(0)

    def free_memory(self) -> int | None:
        """Free device memory plus what PyTorch's caching allocator holds but no tensor
        uses (reusable, as CuPy's pool)."""
        cuda = self._torch.cuda
        return int(cuda.mem_get_info()[0] + cuda.memory_reserved() - cuda.memory_allocated())

    def block(self, result: Any) -> None:
        self._torch.cuda.synchronize()

    def flush_cache(self) -> None:
        self._scratch.zero_()

    def hide_launch(self) -> None:
        # ~100 us at 2 GHz: longer than PyTorch's eager launch path.
        self._torch.cuda._sleep(HIDE_LAUNCH_CYCLES)
