"""The adapter interface every framework implements."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

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
    (:meth:`build_kernel`), never methods of the adapter.
    """

    framework: str = ""
    device: str = "cpu"
    #: its place in :data:`gpubench.backends.BACKENDS`, which the scan of the framework
    #: packages fills in this order: the catalogue's columns and the report's tables
    #: follow it (CPU backends first)
    registry_order: float = float("inf")
    #: the framework every other is compared with (one in-tree framework says so:
    #: :data:`gpubench.backends.BASELINE_FRAMEWORK`)
    baseline: bool = False

    # -- facts the workflow, the environments, the probe and the report read (each
    # backend declares its own: tests/test_registry_complete.py) ---------------------------
    #: the environment it runs in (``workflow/envs/pip/<name>.txt``); on a GPU
    #: ``<name>-cuda<major>`` (:func:`gpubench.environments.env_name`)
    environment: str = ""
    #: how the report names the framework ("CuPy"), and its place among the frameworks
    #: in the report's header (ascending)
    display_name: str = ""
    order: float | None = None
    #: the keys of :meth:`start`'s versions that stand for the framework in the report's
    #: header, the framework's own first ("numba", then "numba-cuda")
    version_keys: tuple[str, ...] = ()
    #: packages whose versions the report shows beside its numbers (fnmatch patterns; a
    #: GPU environment adds its CUDA libraries, ``nvidia-*`` and ``cuda-*``)
    key_packages: tuple[str, ...] = ()
    #: distributions whose versions the probe records (:func:`gpubench.probe.packages`)
    probe_packages: tuple[str, ...] = ()
    #: how one process drives several devices (the MPI ``multi_gpu`` job), one row per
    #: mode: "cupy_devices", "torch_devices", "numba_p2p", "jax_sharding",
    #: "jax_shard_map"; empty: no such version (the job does not run on it)
    multi_device: tuple[str, ...] = ()
    #: copies between two GPUs of one process (the MPI ``peer_copy`` job: the measured
    #: link every device-buffer path between ranks is compared with)
    peer_copy: bool = False
    #: the MPI p2p/allreduce jobs also move device buffers through NCCL
    nccl: bool = False
    #: the probe of its allocator that reads a call's peak device memory, as
    #: "module:Class" (a :class:`gpubench.memory.Probe`); '' on CPUs, which get none
    memory_probe: str = ""

    # -- what the toolkit asks of a framework beyond the adapter: each framework's package
    # answers in its own terms, so no module outside the packages imports a framework ---
    #: the environment variables that put the framework's persistent compilation caches
    #: in the step's compile cache folder, each to its subfolder (config key
    #: ``compile_cache_dir``; :func:`gpubench.runner.step_environment`)
    compile_cache_vars: Mapping[str, str] = {}
    #: what goes with those folders (how much the framework stores in them)
    compile_cache_settings: Mapping[str, str] = {}
    #: variables every step gets, whatever its compile cache
    step_settings: Mapping[str, str] = {}
    #: the probe measures the GPU (its ceilings, the energy cross-check) through the
    #: installed framework of lowest rank; None: never through this one
    device_probe_rank: float | None = None

    @classmethod
    def measure_ceilings(cls, copy_bytes: int, gemm_n: int, transfer_bytes: list[int],
                         more_copies: Callable[[int, int], tuple[Any, Any]]
                         ) -> dict[str, Any]:
        """The GPU's ceilings through this framework (:func:`gpubench.ceilings.
        gpu_ceilings`), ``more_copies`` adding the other frameworks' copy methods;
        ImportError where the framework is not installed."""
        raise ImportError(f"{cls.framework} measures no GPU ceilings")

    @classmethod
    def measure_copies(cls, copy_bytes: int, l2_bytes: int
                       ) -> tuple[dict[str, float], dict[tuple[str, int], tuple[float, bool]]]:
        """This framework's device copy rates (of ``copy_bytes``, and L2-resident ones),
        recorded beside the measuring framework's own; empty where it has none here."""
        return {}, {}

    @classmethod
    def steady_copy(cls, elements: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
        """(one device copy of ``elements`` float32, the wait for the device): the work
        of the probe's energy cross-check; ImportError where not installed."""
        raise ImportError(f"{cls.framework} has no steady device copy")

    @classmethod
    def multi_device_steps(cls) -> Mapping[str, Callable[[Any, list[np.ndarray]],
                                                         Callable[[], float]]]:
        """Each mode of :attr:`multi_device` -> how it builds the ``multi_gpu`` job's step
        (from the job's context and one part of the data per device; the step returns
        the sum of squares)."""
        return {}

    def nccl_communicator(self, ctx: Any) -> Any:
        """The NCCL communicator over the MPI job's ranks (:attr:`nccl` backends)."""
        raise NotImplementedError(f"{self.backend_id} does not use NCCL")

    def nccl_send_recv(self, comm: Any, buf: Any, peer: int, sending: bool) -> None:
        """One NCCL send or receive of a device byte buffer, waited on."""
        raise NotImplementedError(f"{self.backend_id} does not use NCCL")

    def nccl_allreduce(self, ctx: Any, send: Any, recv: Any) -> Callable[[], None]:
        """An out-of-place NCCL sum of float32 device buffers over the job's ranks."""
        raise NotImplementedError(f"{self.backend_id} does not use NCCL")

    def peer_copy_setup(self, src: int, dst: int, pattern: np.ndarray
                        ) -> tuple[Callable[[], None], Callable[[], bool], bool]:
        """The ``peer_copy`` job's copy of ``pattern`` from GPU ``src`` to GPU ``dst``
        (:attr:`peer_copy` backends): (one copy, waited on; whether ``dst`` holds the
        pattern; whether the two GPUs have peer access)."""
        raise NotImplementedError(f"{self.backend_id} does not copy between GPUs")

    def capture_profile(self, on: bool) -> None:
        """Start (or stop) the profiler's capture range (``ncu --profile-from-start
        off``) around the profiled calls: CUDA's runtime API, for every GPU here."""
        from cuda.bindings import runtime as rt

        (rt.cudaProfilerStart if on else rt.cudaProfilerStop)()

    @classmethod
    def simulated(cls, env: Any) -> bool:
        """Whether ``env`` runs this GPU backend on a simulator (no GPU needed)."""
        return False

    @classmethod
    def prepare_devices(cls, devices: int) -> None:
        """Before the framework is imported in a process that drives ``devices``
        devices itself (the ``multi_gpu`` job): whatever makes it see that many."""
    #: the MPI jobs run on this backend (listed by :func:`gpubench.mpi.mpi_backends`)
    mpi: bool = False
    #: the module an MPI rank imports: the step checks it loads before launching
    probe_module: str = "numpy"
    #: arrays live in host memory (CPU ranks): MPI reads them in place, path "host"
    host_memory: bool = True
    #: device buffers may be handed to MPI (path "direct"; needs a CUDA-aware library)
    direct_capable: bool = False
    #: kernel -> implementation the MPI jobs use; unnamed: the first one registered for
    #: this framework and device that supports the case
    local_implementations: dict[str, str] = {}
    #: the device start() opens: 0, or the one an MPI rank was given (:meth:`start_rank`)
    device_index: int = 0
    #: the MPI rank's device selection (:class:`gpubench.mpi.devices.Selection`) or None
    selection: Any = None
    #: what measures a sample: a host clock here, device events on GPUs
    timer: str = "perf_counter"
    #: what measures the caller's clock: the host clock and :meth:`device_sync`
    caller_timer: str = "perf_counter"

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

    #: results this big come back for their check through one reused page-locked buffer
    staging_min_bytes: int = 1 << 20
    _staging: Any = None
    _staging_failed: str = ""

    def to_host_for_check(self, value: Any) -> Any:
        """A host copy of a result for the correctness check, valid until the next call.

        The check copies every result back twice per measurement; into fresh pageable
        memory a 2**26-element result took 0.1 s on an H100 host (page faults, ~2.5
        GB/s). GPU backends implement :meth:`_copy_to_staging` to copy big results into
        one reused page-locked buffer instead. A failure there falls back to
        :meth:`to_host` for the rest of the run (slower, same answer) and says so once.
        """
        nbytes = int(getattr(value, "nbytes", 0) or 0)
        if self._staging_failed or nbytes < self.staging_min_bytes:
            return self.to_host(value)
        try:
            out = self._copy_to_staging(value)
        except Exception as exc:  # noqa: BLE001 - only a speed-up: fall back, once, loudly
            import sys

            self._staging_failed = f"{type(exc).__name__}: {exc}"
            print(f"[{self.backend_id}] staged copy-back failed ({self._staging_failed}); "
                  "results come back through to_host from now on", file=sys.stderr)
            return self.to_host(value)
        return self.to_host(value) if out is None else out

    def _alloc_pinned(self, nbytes: int) -> np.ndarray:
        """A uint8 NumPy array over ``nbytes`` of page-locked host memory."""
        raise NotImplementedError

    def _staging_view(self, nbytes: int, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
        """The reused page-locked buffer (grown when too small) viewed as dtype and shape."""
        if self._staging is None or self._staging.nbytes < nbytes:
            self._staging = None  # free the smaller buffer before pinning a bigger one
            self._staging = self._alloc_pinned(nbytes)
        return self._staging[:nbytes].view(dtype).reshape(shape)

    def _copy_to_staging(self, value: Any) -> np.ndarray | None:
        """Copy a device result into :meth:`_staging_view` and return that view, finished;
        None if ``value`` is not a device array this backend stages."""
        return None

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
        fix to it reaches both. Which implementation: :attr:`local_implementations`,
        else the first registered for this framework and device that takes the case.
        ``inputs`` is handed over as is: a caller whose :meth:`upload` returns a new
        array (JAX) puts it there, and implementations of such frameworks read their
        inputs from it at call time.
        """
        from gpubench.spec import BuildContext, Case, implementations

        case = Case(kernel, variant, int(size), dtype)
        wanted = self.local_implementations.get(kernel)
        for impl in implementations(kernel, self.framework, self.device):
            if wanted and impl.name != wanted:
                continue
            if impl.supports(case)[0] and (impl.max_size is None or size <= impl.max_size):
                return impl.builder(BuildContext(case, self, inputs, dict(outputs or {}),
                                                 seed))
        raise LookupError(f"{self.backend_id} has no implementation of {kernel}/{variant} "
                          f"{dtype}" + (f" named {wanted!r}" if wanted else ""))

    # -- timing: primitives only; the loop is gpubench.timing's ------------------------
    #: whether flush_cache() really evicts the device cache (enables the cold mode)
    supports_cold: bool = False
    #: the device's start and end events on the caller's stream, which a GPU backend
    #: sets in start(); None: samples are on the host clock (:meth:`time_call`)
    event_pair: EventPair | None = None

    def flush_cache(self) -> None:
        """Evict the device's last-level cache before a cold sample (GPUs: write > L2)."""

    def hide_launch(self) -> None:
        """Queue a short busy kernel before a hot GPU sample (nvbench's blocking kernel).

        While the GPU spins, the host finishes launching the timed call, so the events
        bracket the device work, not Python's launch latency; the latter is what the
        launch_overhead kernel measures. The cold mode's flush does the same job.
        """

    def before_sample(self, cold: bool) -> None:
        """Prepare the device for one timed sample (outside the timed region)."""
        if cold:
            self.flush_cache()
        else:
            self.hide_launch()

    def device_timer(self, spec: Any) -> tuple[str, Callable[[Callable[[], Any]],
                                                        tuple[Any, float]]]:
        """The clock the samples of ``spec`` are taken on: (its name, which goes into
        the row; the timer, ``fn -> (result, seconds)``). The choice is returned, not
        kept: the harness hands the timer to the sampling loop.

        One timer per backend suffices (:meth:`time_call`) except where a device timer
        covers only some kinds of work (JAX's CUPTI kernel timing).
        """
        return self.timer, self.time_call

    def select_timer(self, spec: Any) -> str:
        """The name of :meth:`device_timer`'s choice for ``spec`` (and whatever the
        device needs for it, such as JAX detaching CUPTI from host-timed work)."""
        return self.device_timer(spec)[0]

    def block(self, result: Any) -> None:
        """Wait until the work that produced ``result`` has finished."""

    def device_sync(self, result: Any) -> None:
        """Wait until *everything* queued on the device has finished, not only the
        caller's stream: the caller's clock ends here, so work a call sent to another
        stream is paid for. ``result`` (may be None) serves frameworks whose only wait is
        on a value. On a CPU the same as :meth:`block`."""
        self.block(result)

    #: the device clock leaves the caller's clock slower for a while after it (JAX's
    #: CUPTI): its samples come before the caller's rounds, not
    #: between them (:func:`gpubench.harness.measure`)
    device_clock_apart: bool = False

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

    #: the implementations whose build or first call can use the folders of
    #: :meth:`compile_cache_dirs`; None: any of them can
    compiling: frozenset[str] | None = None

    def uses_compile_cache(self, implementation: str) -> bool:
        """Whether the implementation's build or first call can read or write the
        folders of :meth:`compile_cache_dirs` (:attr:`compiling`). Rows of one that
        cannot are not scanned and say ``cache_state`` none, so their first calls stay
        in the first-call figures (a cache it never touches says nothing of a warm
        start)."""
        return self.compiling is None or implementation in self.compiling

    def matmul_precision(self, dtype: str) -> str:
        """What the framework's own setting, read now, allows a ``dtype`` matrix product
        to round to (the row's ``matmul_precision``): :data:`FULL_PRECISION` (computed in
        the dtype) or a reduced format ("tf32", "bf16"). Here full: hand-written kernels
        and the CPU's BLAS have no reduced mode; frameworks with one read it."""
        return FULL_PRECISION

    def time_call(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``fn`` once to completion and return (result, seconds) on this backend's
        clock (:attr:`timer`): between :attr:`event_pair` where the backend has one (the
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
