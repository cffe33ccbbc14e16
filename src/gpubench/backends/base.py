"""The adapter interface every framework implements."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends.facts import Facts
from gpubench.backends.hooks import DeviceCeilings, MultiDevice, PinnedStaging
from gpubench.timing import EventPair, host_time

#: the separator of a backend id's two parts, ``<framework>-<device>``
ID_SEPARATOR = "-"


def split_backend_id(backend_id: str) -> tuple[str, str]:
    """``"jax-cpu"`` -> ``("jax", "cpu")``: the one parser of backend ids (the device is
    what follows the last ``-``, so a framework's name may hold one)."""
    framework, _, device = str(backend_id).rpartition(ID_SEPARATOR)
    return framework, device


def backend_id(framework: str, device: str) -> str:
    """``("jax", "cpu")`` -> ``"jax-cpu"``."""
    return f"{framework}{ID_SEPARATOR}{device}"


class Unavailable(Exception):
    """The framework cannot run here; the message says why (recorded, never raised on)."""


def cpu_memory_available() -> int:
    """Bytes of host memory available now (MemAvailable), falling back to psutil."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import psutil

    return int(psutil.virtual_memory().available)


#: a row's ``matmul_precision`` where its products were computed in its own dtype
FULL_PRECISION = "full"
#: the dtypes a reduced-precision matmul mode (TF32, bfloat16) applies to
REDUCIBLE_DTYPES = frozenset({"float32", "complex64"})


class Backend:
    """A framework on a device. Subclasses override what differs from host NumPy.

    One adapter serves the single-device harness and the MPI jobs (:mod:`gpubench.mpi`)
    alike: device choice, placement, copies, waits, clocks, and what MPI may read and
    write in place. The MPI jobs' local computations are kernels' implementations
    (:meth:`build_kernel`), never methods of the adapter. What it declares about itself
    is one frozen record (:attr:`facts`); what the MPI jobs, the probe and the
    correctness check ask of the framework beyond this is behind objects of their own
    (:attr:`multi`, :attr:`ceilings`, :attr:`staging_type`).
    """

    framework: str = ""
    device: str = "cpu"
    #: its static facts (tests/test_registry_complete.py: each backend declares its own)
    facts: Facts = Facts()
    #: one process driving several devices, NCCL, copies between GPUs (the MPI jobs)
    multi: type[MultiDevice] = MultiDevice
    #: the probe's measurements of the GPU through this framework
    ceilings: type[DeviceCeilings] = DeviceCeilings
    #: how big results come back for their check (:meth:`to_host_for_check`)
    staging_type: type[PinnedStaging] = PinnedStaging
    #: that helper, made on the first check
    staging: PinnedStaging | None = None
    #: the device start() opens: 0, or the one an MPI rank was given (:meth:`start_rank`)
    device_index: int = 0
    #: the MPI rank's device selection (:class:`gpubench.mpi.devices.Selection`) or None
    selection: Any = None
    #: the device's start and end events on the caller's stream, which a GPU backend
    #: sets in start(); None: samples are on the host clock (:meth:`time_call`)
    event_pair: EventPair | None = None

    def start(self, threads: int) -> dict[str, str]:
        """Import the framework and pin its thread count; return its versions.

        Raises :class:`Unavailable` with a reason if it cannot run here.
        """
        raise NotImplementedError

    def start_rank(self, selection: Any, threads: int = 1) -> dict[str, str]:
        """:meth:`start` on the device an MPI rank was given (index 0 without one).

        The caller has already applied the selection's ``CUDA_VISIBLE_DEVICES``: the
        framework is imported here, after the device was chosen (the workshop book,
        §9.10.1).
        """
        self.selection = selection
        self.device_index = selection.index if selection is not None else 0
        return self.start(threads)

    @property
    def backend_id(self) -> str:
        return backend_id(self.framework, self.device)

    def uuid(self) -> str:
        """The GPU's UUID, so MPI ranks can prove they do not share one ('' on CPUs)."""
        return ""

    def device_name(self) -> str:
        from gpubench.provenance import cpu_model

        return cpu_model()

    def free_memory(self) -> int | None:
        """Bytes free where this backend's arrays live (host RAM for CPU backends)."""
        return cpu_memory_available()

    # -- data movement -----------------------------------------------------------------
    def to_device(self, array: np.ndarray) -> Any:
        return np.array(array, copy=True)

    def to_host(self, value: Any) -> Any:
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return np.empty(shape, dtype=dtype)

    def to_host_for_check(self, value: Any) -> Any:
        """A host copy of a result for the correctness check, valid until the next call:
        big ones through one reused page-locked buffer (:class:`~gpubench.backends.hooks.
        PinnedStaging`), the rest through :meth:`to_host`."""
        if self.staging is None:
            self.staging = self.staging_type(self)
        return self.staging.host_copy(value)

    def poison(self, buffer: Any) -> None:
        """Fill an output buffer with NaN so an unwritten element can never pass."""
        buffer[...] = np.nan

    # -- buffers MPI reads and writes (gpubench.mpi) -------------------------------------
    def view(self, array: Any, start: int, stop: int) -> Any:
        """Elements ``start:stop`` of a 1-D array, the same memory: MPI reads or writes
        them in place (host buffers, or device buffers through the CUDA array interface)."""
        return array[start:stop]

    def download(self, src: Any, host: np.ndarray) -> None:
        """Copy ``src`` into the host buffer ``host``, finished on return."""
        host[...] = self.to_host(src)

    def upload(self, host: np.ndarray, dst: Any) -> Any:
        """Write ``host`` into ``dst`` (``host`` may be reused on return; device work
        queued later sees the data); return the array now holding it (JAX arrays are
        immutable: a new one)."""
        dst[...] = host
        return dst

    # -- local computations of the MPI jobs: kernels' implementations -------------------
    def build_kernel(self, kernel: str, variant: str, size: int, dtype: str,
                     inputs: dict[str, Any], outputs: dict[str, Any] | None = None,
                     seed: int = 0) -> Callable[[], Any]:
        """The callable of this backend's implementation of ``kernel`` (the one the
        single-device rows time) on these device inputs and outputs; for a kernel of no
        suite case (:attr:`~gpubench.spec.KernelSpec.suite` false: the halo's stencil,
        the linear model's gradient and update) the operation it builds.

        The MPI jobs compute with it, so a kernel is written once per framework and a
        fix to it reaches both. Which implementation: ``facts.local_implementations``,
        else the first registered for this framework and device that takes the case.
        ``inputs`` is handed over as is: a caller whose :meth:`upload` returns a new
        array (JAX) puts it there, and implementations of such frameworks read their
        inputs from it at call time.
        """
        from gpubench.spec import BuildContext, Case, implementations

        case = Case(kernel, variant, int(size), dtype)
        wanted = self.facts.local_implementations.get(kernel)
        for impl in implementations(kernel, self.framework, self.device):
            if wanted and impl.name != wanted:
                continue
            if impl.supports(case)[0] and (impl.max_size is None or size <= impl.max_size):
                return impl.builder(BuildContext(case, self, inputs, dict(outputs or {}),
                                                 seed))
        raise LookupError(f"{self.backend_id} has no implementation of {kernel}/{variant} "
                          f"{dtype}" + (f" named {wanted!r}" if wanted else ""))

    # -- timing: primitives only; the loop is gpubench.timing's ------------------------
    def flush_cache(self) -> None:
        """Evict the device's last-level cache before a cold sample (GPUs: write > L2)."""

    def hide_launch(self) -> None:
        """Queue a short busy kernel before a hot GPU sample (nvbench's blocking kernel).

        While the GPU spins, the host finishes launching the timed call, so the events
        bracket the device work, not Python's launch latency; the latter is what the
        launch_overhead kernel measures. The cold mode's flush does the same job.
        """

    def device_timer(self, spec: Any) -> tuple[str, Callable[[Callable[[], Any]],
                                                        tuple[Any, float]]]:
        """The clock the samples of ``spec`` are taken on: (its name, which goes into
        the row; the timer, ``fn -> (result, seconds)``). The choice is returned, not
        kept: the harness hands the timer to the sampling loop.

        One timer per backend suffices (:meth:`time_call`) except where a device timer
        covers only some kinds of work (JAX's CUPTI kernel timing).
        """
        return self.facts.timer, self.time_call

    def block(self, result: Any) -> None:
        """Wait until the work that produced ``result`` has finished."""

    def device_sync(self, result: Any) -> None:
        """Wait until *everything* queued on the device has finished, not only the
        caller's stream: the caller's clock ends here, so work a call sent to another
        stream is paid for. ``result`` (may be None) serves frameworks whose only wait is
        on a value. On a CPU the same as :meth:`block`."""
        self.block(result)

    def before_caller_clock(self) -> float:
        """Undo whatever the device clock set up that a caller would not pay (JAX's
        CUPTI tracing), before the caller's clock is read. Returns the seconds of
        untimed calls the caller's clock should make before its samples, for what the
        undoing leaves behind (0: none)."""
        return 0.0

    def compile_cache_dirs(self) -> list[Path]:
        """Folders of the framework's persistent compilation cache in use here (kernels
        compiled in an earlier process are loaded from them instead of compiled again);
        [] where it keeps none. The harness watches them around each row's build and
        first call (the row's ``cache_state``). Must not create them, and must not
        import anything the step has not imported already."""
        return []

    def matmul_precision(self, dtype: str) -> str:
        """What the framework's own setting, read now, allows a ``dtype`` matrix product
        to round to (the row's ``matmul_precision``): :data:`FULL_PRECISION` (computed in
        the dtype) or a reduced format ("tf32", "bf16"). Here full: hand-written kernels
        and the CPU's BLAS have no reduced mode; frameworks with one read it."""
        return FULL_PRECISION

    def time_call(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``fn`` once to completion and return (result, seconds) on this backend's
        clock (``facts.timer``): between :attr:`event_pair` where the backend has one (the
        events on the caller's stream, waited on), else the host clock and
        :meth:`block` (:func:`gpubench.timing.host_time`)."""
        if self.event_pair is not None:
            return self.event_pair.time(fn)
        return host_time(fn, self.block)


def pin_threads_env(threads: int) -> dict[str, str]:
    """Environment variables that cap every threading runtime we know of at ``threads``."""
    t = str(threads)
    return {
        "OMP_NUM_THREADS": t,
        "MKL_NUM_THREADS": t,
        "OPENBLAS_NUM_THREADS": t,
        "BLIS_NUM_THREADS": t,
        "VECLIB_MAXIMUM_THREADS": t,
        "NUMEXPR_NUM_THREADS": t,
        "NUMBA_NUM_THREADS": t,
        "XLA_FLAGS": (
            os.environ.get("XLA_FLAGS", "")
            + f" --xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
            + f" intra_op_parallelism_threads={t}"
        ).strip(),
    }
