"""What a backend declares about itself: one frozen record per backend class.

The workflow, the environments, the probe, the MPI planner and the report read these
facts from the class without starting the framework, so they are plain data, set once
where the adapter is defined (``facts = Facts(...)``) and never changed at run time: a
backend that shares most of its facts with another derives them with
:func:`dataclasses.replace`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: the fields that hold mappings, made read-only on construction
_MAPPINGS = ("compile_cache_vars", "compile_cache_settings", "step_settings",
             "local_implementations")


@dataclasses.dataclass(frozen=True)
class Facts:
    """The static facts of one backend (a framework on a kind of device)."""

    # -- the registry and the report ----------------------------------------------------
    #: its place in :data:`gpubench.backends.BACKENDS`, which the scan of the framework
    #: packages fills in this order: the catalogue's columns and the report's tables
    #: follow it (CPU backends first)
    registry_order: float = float("inf")
    #: the framework every other is compared with (one in-tree framework says so:
    #: :data:`gpubench.backends.BASELINE_FRAMEWORK`)
    baseline: bool = False
    #: the environment it runs in (``workflow/envs/pip/<name>.txt``); on a GPU
    #: ``<name>-cuda<major>`` (:func:`gpubench.environments.env_name`)
    environment: str = ""
    #: how the report names the framework ("CuPy"), and its place among the frameworks
    #: in the report's header (ascending)
    display_name: str = ""
    order: float | None = None
    #: the keys of ``start()``'s versions that stand for the framework in the report's
    #: header, the framework's own first ("numba", then "numba-cuda")
    version_keys: tuple[str, ...] = ()
    #: packages whose versions the report shows beside its numbers (fnmatch patterns; a
    #: GPU environment adds its CUDA libraries, ``nvidia-*`` and ``cuda-*``)
    key_packages: tuple[str, ...] = ()
    #: distributions whose versions the probe records (:func:`gpubench.probe.packages`)
    probe_packages: tuple[str, ...] = ()

    # -- the MPI jobs (gpubench.mpi) -----------------------------------------------------
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
    local_implementations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: how one process drives several devices (the MPI ``multi_gpu`` job), one row per
    #: mode, each built by the backend's ``multi.steps()``; empty: the job does not run
    multi_device: tuple[str, ...] = ()
    #: copies between two GPUs of one process (the MPI ``peer_copy`` job: the measured
    #: link every device-buffer path between ranks is compared with)
    peer_copy: bool = False
    #: the MPI p2p/allreduce jobs also move device buffers through NCCL
    nccl: bool = False

    # -- measurement -------------------------------------------------------------------
    #: what measures a sample: a host clock here, device events on GPUs
    timer: str = "perf_counter"
    #: what measures the caller's clock: the host clock and ``device_sync``
    caller_timer: str = "perf_counter"
    #: whether ``flush_cache()`` really evicts the device cache (enables the cold mode)
    supports_cold: bool = False
    #: the device clock leaves the caller's clock slower for a while after it (JAX's
    #: CUPTI): its samples come before the caller's rounds, not between them
    #: (:func:`gpubench.harness.measure`)
    device_clock_apart: bool = False
    #: the probe of its allocator that reads a call's peak device memory, as
    #: "module:Class" (a :class:`gpubench.memory.Probe`); '' on CPUs, which get none
    memory_probe: str = ""
    #: the probe measures the GPU (its ceilings, the energy cross-check) through the
    #: installed framework of lowest rank; None: never through this one
    device_probe_rank: float | None = None

    # -- the step's environment and compile caches ---------------------------------------
    #: the environment variables that put the framework's persistent compilation caches
    #: in the step's compile cache folder, each to its subfolder (config key
    #: ``compile_cache_dir``; :func:`gpubench.runner.step_environment`)
    compile_cache_vars: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: what goes with those folders (how much the framework stores in them)
    compile_cache_settings: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: variables every step gets, whatever its compile cache
    step_settings: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: the implementations whose build or first call can use the folders of the
    #: backend's ``compile_cache_dirs()``; None: any of them can
    compiling: frozenset[str] | None = None

    def __post_init__(self) -> None:
        # a frozen record must not hand out a dict a reader could change for everyone
        for name in _MAPPINGS:
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.compiling is not None:
            object.__setattr__(self, "compiling", frozenset(self.compiling))

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuilt from its fields with plain dicts: a read-only mapping does not pickle
        or deep-copy, and a backend's facts may travel with it to another process."""
        return type(self), tuple(dict(getattr(self, f.name)) if f.name in _MAPPINGS
                                 else getattr(self, f.name) for f in dataclasses.fields(self))

    def uses_compile_cache(self, implementation: str) -> bool:
        """Whether the implementation's build or first call can read or write the
        compile cache folders (:attr:`compiling`). Rows of one that cannot are not
        scanned and say ``cache_state`` none, so their first calls stay in the
        first-call figures (a cache it never touches says nothing of a warm start)."""
        return self.compiling is None or implementation in self.compiling

    def but(self, **changes: Any) -> Facts:
        """These facts with ``changes`` (:func:`dataclasses.replace`): how a backend
        derives its own from those it shares with another."""
        return dataclasses.replace(self, **changes)
