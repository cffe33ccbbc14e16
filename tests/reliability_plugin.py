"""Fault-injection plugin of tests/test_reliability.py (``GPUBENCH_PLUGINS=reliability_plugin``).

Registers backends of stand-in frameworks and vector_add implementations that fail the
way real kernels do, through the real compilers and error types where the machine has
them:

- ``rely-cpu`` (starts at once): ``nvrtc_syntax_error`` compiles the project's own
  ``vector_add.cu`` with one ``;`` removed through NVRTC (the CUDA Python backend's
  ``compile_module``; no GPU needed); ``numba_typing_error`` is an ``@njit`` loop that adds
  a string to a float; ``host_oom`` asks NumPy for 1 EiB; ``correct`` is correct.
- ``rely-gpu``: a GPU stand-in (host memory, no driver) that reports
  ``GPUBENCH_TEST_GPU_FREE`` bytes free (default 1 MiB), with implementations that raise
  the out-of-memory errors of PyTorch, CuPy, JAX/XLA and Numba CUDA (Numba's own
  ``CudaAPIError``), and ``fits``, which is correct.
- ``gate-cpu``: one implementation, ``gated``, correct but waiting in its build while
  the file named by ``GPUBENCH_TEST_GATE`` exists (touching ``<gate>.reached`` first): a
  step that stays "in the middle" for as long as a test wants.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend
from gpubench.spec import BuildContext, implementation

Call = Callable[[], Any]

BACKENDS["rely-cpu"] = "reliability_plugin:RelyCPU"
BACKENDS["rely-gpu"] = "reliability_plugin:RelyGPU"
BACKENDS["gate-cpu"] = "reliability_plugin:GateCPU"


class RelyCPU(Backend):
    framework = "rely"
    device = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        return {"rely": "1.0"}


class GateCPU(RelyCPU):
    framework = "gate"


class RelyGPU(Backend):
    framework = "rely"
    device = "gpu"

    def start(self, threads: int) -> dict[str, str]:
        return {"rely": "1.0"}

    def device_name(self) -> str:
        return "stand-in GPU (host memory)"

    def free_memory(self) -> int | None:
        return int(os.environ.get("GPUBENCH_TEST_GPU_FREE", 1 << 20))


def _abc(ctx: BuildContext) -> tuple[Any, Any, Any]:
    return ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")


def _correct(ctx: BuildContext) -> Call:
    a, b, c = _abc(ctx)

    def call() -> None:
        np.add(a, b, out=c)

    return call


# -- rely-cpu -------------------------------------------------------------------------

implementation("vector_add", "rely", "correct")(_correct)


@implementation("vector_add", "rely", "nvrtc_syntax_error")
def nvrtc_syntax_error(ctx: BuildContext) -> Call:
    from gpubench import cuda_sources
    from gpubench.backends.cuda_python.adapter import compile_module

    lines = cuda_sources.source("vector_add").splitlines()
    # the first statement's ";" (a line of code, not a comment) goes missing
    at = next(i for i, line in enumerate(lines)
              if line.rstrip().endswith(";") and not line.lstrip().startswith("//"))
    lines[at] = lines[at].rstrip()[:-1]
    compile_module("\n".join(lines), arch="90")  # raises with NVRTC's log
    raise AssertionError("NVRTC compiled a source with a syntax error")


@implementation("vector_add", "rely", "numba_typing_error")
def numba_typing_error(ctx: BuildContext) -> Call:
    from numba import njit

    a, b, c = _abc(ctx)

    @njit
    def add(a, b, c):
        for i in range(a.shape[0]):
            c[i] = a[i] + b[i] + "1"  # float + str: Numba cannot type it

    return lambda: add(a, b, c)


@implementation("vector_add", "rely", "host_oom")
def host_oom(ctx: BuildContext) -> Call:
    np.empty(1 << 57)  # 1 EiB, past any address space: NumPy raises its MemoryError
    raise AssertionError("1 EiB was allocated")


# -- gate-cpu ---------------------------------------------------------------------------


@implementation("vector_add", "gate", "gated")
def gated(ctx: BuildContext) -> Call:
    gate = os.environ.get("GPUBENCH_TEST_GATE", "")
    if gate:
        Path(gate + ".reached").touch()
        while os.path.exists(gate):
            time.sleep(0.05)
    return _correct(ctx)


# -- rely-gpu ---------------------------------------------------------------------------

implementation("vector_add", "rely", "fits", devices=("gpu",))(_correct)


class OutOfMemoryError(RuntimeError):
    """What torch.OutOfMemoryError (torch.cuda.OutOfMemoryError) is."""


class CupyOutOfMemoryError(MemoryError):
    """What cupy.cuda.memory.OutOfMemoryError is (a MemoryError)."""


class XlaRuntimeError(RuntimeError):
    """What jaxlib's XlaRuntimeError is."""


def _raises(exc: BaseException) -> Callable[[BuildContext], Call]:
    def builder(ctx: BuildContext) -> Call:
        def call() -> None:
            raise exc

        return call

    return builder


implementation("vector_add", "rely", "torch_oom", devices=("gpu",))(_raises(OutOfMemoryError(
    "CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of "
    "79.19 GiB of which 1.12 GiB is free.")))
implementation("vector_add", "rely", "cupy_oom", devices=("gpu",))(_raises(
    CupyOutOfMemoryError("Out of memory allocating 8,589,934,592 bytes (allocated so far: "
                         "0 bytes).")))
implementation("vector_add", "rely", "jax_oom", devices=("gpu",))(_raises(XlaRuntimeError(
    "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8589934592 bytes.")))


@implementation("vector_add", "rely", "numba_cuda_oom", devices=("gpu",))
def numba_cuda_oom(ctx: BuildContext) -> Call:
    from numba.cuda.cudadrv.driver import CudaAPIError, binding

    code = binding.CUresult.CUDA_ERROR_OUT_OF_MEMORY
    # what numba-cuda's driver raises when cuMemAlloc fails, after its own retry
    raise CudaAPIError(code, f"Call to cuMemAlloc results in {code.name}")
