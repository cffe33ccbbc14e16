"""interop: a zero-copy hand-off of an array from one framework to another (the ecosystem
overview; the workshop book, §3.4, §5.9).

Variants are the two protocols: ``dlpack`` (``__dlpack__`` / ``from_dlpack``: NumPy,
CuPy, PyTorch, JAX, on CPU and GPU) and ``cuda_array_interface`` (``__cuda_array_interface__``:
CuPy, Numba CUDA, PyTorch, and CUDA Python's device arrays; GPU only). A row belongs to
the *consumer* framework's step; its implementation is named ``from_<producer>``.

Untimed, the builder makes the producer's array from the host input (on the same device
as the consumer) and hands it off once: the consumer's array must start at the very
address the producer's does (``data_ptr``, ``data.ptr``, ``unsafe_buffer_pointer``, the
interface's pointer). A hand-off that copied is a :class:`~gpubench.spec.WrongResult`
— never timed, never ranked. One call is one hand-off, timed on the host clock around
the call and a wait on the consumer (the hand-off is host work; device events would
only bracket an idle stream). The check then reads the consumer's array back: every
bit must equal the input.

The time is the fixed cost of the protocol (capsule creation, stream handshake, object
construction), so it does not grow with the size; two sizes show that. Rows read as
µs per hand-off (``median_s``); bytes and GB/s do not apply (nothing is copied).

A producer framework missing from the step's environment gives an ``unavailable`` row
with the import error (system and conda environments usually have them all; the
per-framework venvs have one framework each).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, WrongResult, random_array


class Interop(KernelSpec):
    name = "interop"
    own_first_call = False
    memory_relative = False
    order = 120
    bound = "latency"
    ceiling = "none"
    unit = "GB/s"
    report_class = None
    target_pct = 0
    description = "zero-copy hand-off of an array between frameworks (DLPack, CUDA Array Interface)"
    size_meaning = "float32 elements handed off"
    variants = ("dlpack", "cuda_array_interface")
    dtypes = ("float32",)
    default_sizes = (1 << 10, 1 << 22)
    place_inputs = False
    hide_launch = False
    #: the hand-off is host work: time it with the host clock and a wait
    host_timed = True
    tolerances: Mapping[str, float] = {"float32": 0.0}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": random_array(rng, case.size, case.dtype)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        return inputs["x"]

    def bytes_moved(self, case: Case) -> float:
        """Nothing is copied: bytes and GB/s do not apply to a hand-off."""
        return 0.0

    def memory_bytes(self, case: Case) -> float:
        """The producer's array, a read-back, slack."""
        return 3.0 * case.size * 4

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """Bit-exact equality with the input (the pointer was checked in the builder)."""
        tol = self.tolerance(case)
        out = np.ascontiguousarray(np.asarray(result))
        ref = np.ascontiguousarray(ref)
        if out.shape != ref.shape or out.dtype != ref.dtype:
            return Check(math.nan, tol, False, f"got {out.dtype}{list(out.shape)}, expected "
                                               f"{ref.dtype}{list(ref.shape)}")
        wrong = int(np.count_nonzero(out.view(np.uint32) != ref.view(np.uint32)))
        if wrong:
            return Check(wrong / out.size, tol, False,
                         f"{wrong} of {out.size} elements differ from the producer's array")
        return Check(0.0, tol, True)


SPEC = Interop()


# -- producers and pointers, shared by the consumers' modules ----------------------------


def _quiet_jax() -> None:
    """A JAX imported only to produce an array must not grab 75% of the GPU."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def aligned_copy(host: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A copy of ``host`` starting on an ``alignment``-byte boundary.

    NumPy guarantees only 16 bytes; XLA on the CPU wraps a DLPack buffer without a copy
    only if it is 64-byte aligned, so a NumPy producer that wants zero-copy into JAX must
    allocate like this (an unaligned one is copied, which the pointer check reports).
    """
    raw = np.empty(host.nbytes + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start:start + host.nbytes].view(host.dtype).reshape(host.shape)
    out[...] = host
    return out


def produce(producer: str, host: np.ndarray, device: str) -> Any:
    """The host input as an array of ``producer`` on ``device`` (``cpu`` or ``gpu``), ready."""
    if producer == "numpy":
        return aligned_copy(host)
    if producer == "cupy":
        import cupy

        out = cupy.asarray(host)
        cupy.cuda.get_current_stream().synchronize()
        return out
    if producer == "torch":
        import torch

        # torch's own allocation (64-byte aligned on the CPU), not a view of NumPy memory
        out = torch.empty(host.shape, dtype=getattr(torch, str(host.dtype)),
                          device="cuda" if device == "gpu" else "cpu")
        out.copy_(torch.from_numpy(host))
        if device == "gpu":
            torch.cuda.synchronize()
        return out
    if producer == "jax":
        _quiet_jax()
        import jax

        target = jax.devices("gpu" if device == "gpu" else "cpu")[0]
        return jax.device_put(host, target).block_until_ready()
    if producer == "cuda_python":
        return _cuda_python().to_device(host)
    if producer == "numba":
        from gpubench.backends.numba.gpu import import_cuda

        cuda = import_cuda()
        out = cuda.to_device(host)
        cuda.synchronize()
        return out
    raise ValueError(f"unknown producer {producer!r}")


_CUDA_PYTHON: list[Any] = []


def _cuda_python() -> Any:
    """A started CUDA Python backend (one per process) whose device arrays produce."""
    if not _CUDA_PYTHON:
        from gpubench.backends.cuda_python.adapter import CudaPythonGPU

        backend = CudaPythonGPU()
        backend.start(1)
        _CUDA_PYTHON.append(backend)
    return _CUDA_PYTHON[0]


def pointer(array: Any) -> int:
    """Address of an array's first element, whichever framework made it."""
    if isinstance(array, np.ndarray):
        return int(array.ctypes.data)
    if hasattr(array, "data_ptr"):  # torch
        return int(array.data_ptr())
    if hasattr(array, "unsafe_buffer_pointer"):  # jax
        return int(array.unsafe_buffer_pointer())
    if hasattr(array, "__cuda_array_interface__"):  # cupy, numba, cuda python
        return int(array.__cuda_array_interface__["data"][0])
    raise TypeError(f"cannot read the address of a {type(array).__name__}")


def same_memory(producer_array: Any, consumer_array: Any, producer: str) -> None:
    """Raise :class:`WrongResult` unless the consumer views the producer's memory."""
    src, dst = pointer(producer_array), pointer(consumer_array)
    if src != dst:
        raise WrongResult(f"the hand-off from {producer} copied: the producer's array is at "
                          f"{src:#x}, the consumer's at {dst:#x}")


def handoff(ctx: Any, producer: str, consume: Any) -> Any:
    """The timed call of a hand-off: ``consume(producer_array)``, pointer-checked once.

    ``consume`` is the consumer's own import path (``torch.from_dlpack``, ``cupy.asarray``,
    ...). Untimed here: the producer's array is made and one hand-off is checked to view
    the same memory; a copy raises :class:`WrongResult`.
    """
    source = produce(producer, ctx.inputs["x"], ctx.backend.device)
    same_memory(source, consume(source), producer)

    def call() -> Any:
        return consume(source)

    return call


def consumer(load: Callable[[], Callable[[Any], Any]], producer: str
             ) -> Callable[[Any], Callable[[], Any]]:
    """A builder handing ``producer``'s array to the function ``load()`` returns.

    ``load`` imports the consumer's framework inside the build, so registering the
    implementation needs no framework installed.
    """
    def build(ctx: Any) -> Callable[[], Any]:
        return handoff(ctx, producer, load())

    build.__name__ = f"from_{producer}"
    # the registry (and the report's code size) attributes it to the consumer's module
    build.__module__ = getattr(load, "__module__", build.__module__)
    return build
