"""The hooks a framework answers beyond its adapter, each group behind a class of its own.

A backend names them (:attr:`~gpubench.backends.base.Backend.multi`,
:attr:`~gpubench.backends.base.Backend.ceilings`,
:attr:`~gpubench.backends.base.Backend.staging_type`); a framework package subclasses
those it has in its own modules (``mpi.py``, ``ceilings.py``, the adapter), so no module
outside the package imports the framework, and the adapter keeps only what the harness
and the MPI ranks call on every row.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np


class MultiDevice:
    """What the MPI jobs ask of a framework beyond one device per rank: one process
    driving several devices (``multi_gpu``), copies between two GPUs (``peer_copy``),
    NCCL (``p2p``/``allreduce``), and how a rank's process sees its devices. Class
    methods: they need no started adapter, only the framework."""

    @classmethod
    def steps(cls) -> Mapping[str, Callable[[Any, list[np.ndarray]], Callable[[], float]]]:
        """Each mode of the backend's ``facts.multi_device`` -> how it builds the
        ``multi_gpu`` job's step (from the job's context and one part of the data per
        device; the step returns the sum of squares)."""
        return {}

    @classmethod
    def prepare_devices(cls, devices: int) -> None:
        """Before the framework is imported in a process that drives ``devices``
        devices itself (the ``multi_gpu`` job): whatever makes it see that many."""

    @classmethod
    def simulated(cls, env: Mapping[str, str]) -> bool:
        """Whether ``env`` runs this GPU backend on a simulator (no GPU needed)."""
        return False

    @classmethod
    def nccl_communicator(cls, ctx: Any) -> Any:
        """The NCCL communicator over the MPI job's ranks (``facts.nccl`` backends)."""
        raise NotImplementedError(f"{cls.__qualname__}: this framework does not use NCCL")

    @classmethod
    def nccl_send_recv(cls, comm: Any, buf: Any, peer: int, sending: bool) -> None:
        """One NCCL send or receive of a device byte buffer, waited on."""
        raise NotImplementedError(f"{cls.__qualname__}: this framework does not use NCCL")

    @classmethod
    def nccl_allreduce(cls, ctx: Any, send: Any, recv: Any) -> Callable[[], None]:
        """An out-of-place NCCL sum of float32 device buffers over the job's ranks."""
        raise NotImplementedError(f"{cls.__qualname__}: this framework does not use NCCL")

    @classmethod
    def peer_copy_setup(cls, src: int, dst: int, pattern: np.ndarray
                        ) -> tuple[Callable[[], None], Callable[[], bool], bool]:
        """The ``peer_copy`` job's copy of ``pattern`` from GPU ``src`` to GPU ``dst``
        (``facts.peer_copy`` backends): (one copy, waited on; whether ``dst`` holds the
        pattern; whether the two GPUs have peer access)."""
        raise NotImplementedError(
            f"{cls.__qualname__}: this framework does not copy between GPUs")


class DeviceCeilings:
    """How the probe measures the GPU through a framework (the backend's
    ``facts.device_probe_rank`` says in which order it tries them). Each raises
    ImportError where the framework is not installed, so the probe tries the next."""

    @classmethod
    def measure_ceilings(cls, copy_bytes: int, gemm_n: int, transfer_bytes: list[int],
                         more_copies: Callable[[int, int], tuple[Any, Any]]
                         ) -> dict[str, Any]:
        """The GPU's ceilings through this framework (:func:`gpubench.ceilings.
        gpu_ceilings`), ``more_copies`` adding the other frameworks' copy methods."""
        raise ImportError(f"{cls.__qualname__}: this framework measures no GPU ceilings")

    @classmethod
    def measure_copies(cls, copy_bytes: int, l2_bytes: int
                       ) -> tuple[dict[str, float], dict[tuple[str, int], tuple[float, bool]]]:
        """This framework's device copy rates (of ``copy_bytes``, and L2-resident ones),
        recorded beside the measuring framework's own; empty where it has none here."""
        return {}, {}

    @classmethod
    def steady_copy(cls, elements: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
        """(one device copy of ``elements`` float32, the wait for the device): the work
        of the probe's energy cross-check."""
        raise ImportError(f"{cls.__qualname__}: this framework has no steady device copy")


class PinnedStaging:
    """One reused page-locked host buffer that big results come back through for their
    correctness check, owned by one started backend.

    The check copies every result back twice per measurement; into fresh pageable memory
    a 2**26-element result took 0.1 s on an H100 host (page faults, ~2.5 GB/s). A GPU
    framework subclasses this with :meth:`alloc` and :meth:`copy`; here nothing is
    staged and every result comes back through the backend's ``to_host``. A failure
    while staging falls back to ``to_host`` for the rest of the run (slower, same
    answer) and says so once.
    """

    #: results this big come back through the buffer; smaller ones through ``to_host``
    min_bytes: int = 1 << 20

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.buffer: np.ndarray | None = None
        self.failed = ""

    def host_copy(self, value: Any) -> Any:
        """A host copy of ``value`` for the check, valid until the next call."""
        to_host = self.backend.to_host
        nbytes = int(getattr(value, "nbytes", 0) or 0)
        if self.failed or nbytes < self.min_bytes:
            return to_host(value)
        try:
            out = self.copy(value)
        except Exception as exc:  # noqa: BLE001 - only a speed-up: fall back, once, loudly
            self.failed = f"{type(exc).__name__}: {exc}"
            print(f"[{self.backend.backend_id}] staged copy-back failed ({self.failed}); "
                  "results come back through to_host from now on", file=sys.stderr)
            return to_host(value)
        return to_host(value) if out is None else out

    def alloc(self, nbytes: int) -> np.ndarray:
        """A uint8 NumPy array over ``nbytes`` of page-locked host memory."""
        raise NotImplementedError

    def view(self, nbytes: int, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
        """The reused buffer (grown when too small) viewed as ``dtype`` and ``shape``."""
        if self.buffer is None or self.buffer.nbytes < nbytes:
            self.buffer = None  # free the smaller buffer before pinning a bigger one
            self.buffer = self.alloc(nbytes)
        return self.buffer[:nbytes].view(dtype).reshape(shape)

    def copy(self, value: Any) -> np.ndarray | None:
        """Copy a device result into :meth:`view` and return that view, finished; None
        if ``value`` is not a device array this framework stages."""
        return None
