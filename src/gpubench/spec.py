"""Kernel specifications and the implementation registry.

A kernel spec says *what* is computed (inputs, float64 reference, bytes and flops,
tolerance); implementations say *how* one framework computes it. Implementation modules
import their framework only inside their builder, so listing what exists never needs
the framework installed.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpubench.hostpar import fill_uniform, map_chunks
from gpubench.plugins import load_plugins

#: what limits a kernel (:attr:`KernelSpec.bound`)
BOUNDS = ("memory", "compute", "transfer", "latency")
#: the measured ceilings a kernel can be read against (:attr:`KernelSpec.ceiling`), and
#: the :func:`kernel_bound` name each has in :mod:`gpubench.ceilings`; "none": no ceiling
CEILINGS = {"copy": "memory", "gemm": "compute", "link": "transfer", "none": None}
#: throughput units (:attr:`KernelSpec.unit`) and what each counts per call
UNITS = {"GB/s": "bytes_moved", "GFLOP/s": "flops", "Msamples/s": "size"}

DTYPE_BYTES = {"float32": 4, "float64": 8, "complex64": 8, "complex128": 16}


@dataclass(frozen=True)
class Case:
    """One problem instance: what a single result row is about (minus who runs it)."""

    kernel: str
    variant: str
    size: int
    dtype: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def seed(self, base_seed: int) -> int:
        """A per-case seed, so every case draws its own random data."""
        text = f"{base_seed}:{self.kernel}:{self.variant}:{self.size}:{self.dtype}"
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


class WrongResult(Exception):
    """Raised by a builder that finds its result wrong before any timing (for example a
    zero-copy hand-off that copied): recorded as ``wrong_result``, never timed."""


class NotOffered(Exception):
    """Raised by a builder for a case its framework has no meaningful path for on this
    device (TF32 on a CPU, where the products would simply be float32): recorded as
    ``skipped`` with the message as its reason, never timed."""


@dataclass
class Check:
    """Outcome of comparing a result with the reference."""

    rel_err: float
    tolerance: float
    passed: bool
    reason: str = ""


class KernelSpec:
    """Base class for a kernel: subclass it in ``gpubench/kernels/<name>/__init__.py``.

    Sizes mean what :attr:`size_meaning` says (elements, matrix order, samples).
    """

    name: str = ""
    description: str = ""
    size_meaning: str = "elements"
    variants: tuple[str, ...] = ("default",)
    dtypes: tuple[str, ...] = ("float32", "float64")
    default_sizes: tuple[int, ...] = (1 << 10, 1 << 16, 1 << 20)
    default_params: Mapping[str, Any] = {}
    #: False for kernels that measure host-device movement itself (transfer): the
    #: harness then hands implementations the host arrays instead of device copies
    place_inputs: bool = True
    #: False where the launch latency is the measurement (no busy kernel before samples)
    hide_launch: bool = True
    #: True where the call is host work (a hand-off between frameworks): samples are the
    #: host clock around the call and a wait, not device events around an idle stream
    host_timed: bool = False
    #: the caller's clock the report ranks this kernel's rows on: "pipelined" (calls
    #: back to back, one wait: what a loop that does not look at its results pays) or
    #: "sync" (one call, then a wait for its result), where pipelined calls overlap
    #: in a way a caller who needs each result cannot use (asynchronous copies)
    rank_clock: str = "pipelined"
    #: whether a call's peak device memory reads as a multiple of its inputs plus
    #: outputs (the report's "memory" column): False where the call makes its own data
    #: (allocation, Monte Carlo's samples), its inputs are host memory (transfers,
    #: hand-offs) or there is next to none (launch latency); their peaks stay in the rows
    memory_relative: bool = True
    # -- facts the run, the checks and the report read (tests/test_registry_complete.py
    # fails where one is left undeclared) ------------------------------------------------
    #: position in the run and in the report (ascending; ties by name)
    order: float | None = None
    #: what limits it: one of :data:`BOUNDS`
    bound: str = ""
    #: the measured ceiling its % of ceiling and its plausibility gate read: one of
    #: :data:`CEILINGS` ("copy": memory bandwidth, "gemm": the GEMM rate of the row's
    #: dtype, "link": the host-device copy, "none")
    ceiling: str = ""
    #: its throughput unit, one of :data:`UNITS`: GB/s counts :meth:`bytes_moved`,
    #: GFLOP/s :meth:`flops` (GB/s where none are counted), Msamples/s the case's size
    unit: str = ""
    #: the key of its workload class (a record of :mod:`gpubench.workloads`); None: in
    #: no class
    report_class: str | None = ""
    #: the share (%) of its ceiling the best implementation of every GPU framework should
    #: reach at the largest size; 0: no target
    target_pct: float | None = None
    #: why a row may read above its ceiling and still be right ('' where nothing special)
    ceiling_note: str = ""
    #: its GPU rows are refused above the measured GEMM rate of their dtype (no arithmetic
    #: of that dtype runs faster); False where the work runs in a faster format than the
    #: dtype of its inputs (reduced-precision GEMMs on tensor cores)
    gemm_gate: bool = True
    #: its first call is the framework's own (False: a hand-off that starts another
    #: framework, which no claim about compilation reads)
    own_first_call: bool = True
    #: a case of the single-device suite (run, checked, catalogued and reported). False:
    #: a computation other parts of the package build from its implementations (the MPI
    #: jobs' local work that no suite kernel does: ``stencil``, ``linear_grad``,
    #: ``axpy``), which :func:`kernel_names` and everything reading it leave out; its
    #: builders return an operation with arguments, not the zero-argument call to time
    suite: bool = True
    #: variants that are one computation launched at several threads per block:
    #: variant -> (computation, threads per block); the report's block-size section
    #: compares the variants of one computation (empty: not such a kernel)
    block_sweep: Mapping[str, tuple[str, int]] = {}
    #: framework -> the threads per block its own hand-written kernels launch with (the
    #: default that section reads each framework's sweep against)
    default_blocks: Mapping[str, int] = {}
    #: relative tolerance of ||out - ref|| / ||ref|| per dtype
    tolerances: Mapping[str, float] = {
        "float32": 1e-5,
        "float64": 1e-12,
        "complex64": 1e-5,
        "complex128": 1e-12,
    }

    # -- what to compute -------------------------------------------------------------
    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Host inputs for the case: seeded random data, never zeros, distinct buffers."""
        raise NotImplementedError

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> Any:
        """The float64 (or complex128) NumPy answer."""
        raise NotImplementedError

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        """Preallocated output buffers (name -> (shape, dtype)) the harness poisons."""
        return {}

    # -- what it costs ---------------------------------------------------------------
    def bytes_moved(self, case: Case) -> float:
        """Fewest bytes through memory per call: each input read once, output written once."""
        raise NotImplementedError

    def flops(self, case: Case) -> float:
        """Floating-point operations per call (by the convention the kernel documents)."""
        return 0.0

    def memory_bytes(self, case: Case) -> float:
        """Peak bytes the case needs on one device: inputs, outputs, reference, slack."""
        return 3.0 * self.bytes_moved(case)

    def unoffered(self, case: Case, device: str) -> str:
        """Why ``case`` has no meaningful path on ``device`` in any framework (a GPU-only
        number format on a CPU), or '': such a row is ``skipped`` with this reason,
        before inputs are made."""
        return ""

    # -- how to check ----------------------------------------------------------------
    def tolerance(self, case: Case) -> float:
        return float(self.tolerances[case.dtype])

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """Relative error in the 2-norm; NaN (an unwritten output) never passes."""
        tol = self.tolerance(case)
        out = np.asarray(result)
        ref_arr = np.asarray(ref)
        if out.shape != ref_arr.shape:
            return Check(float("nan"), tol, False, f"shape {out.shape} != expected {ref_arr.shape}")
        err = relative_error(out, ref_arr)
        if not math.isfinite(err):
            n_nan = int(np.count_nonzero(~np.isfinite(out)))
            return Check(
                float("nan"), tol, False, f"{n_nan} of {out.size} outputs not finite (unwritten?)"
            )
        passed = err <= tol
        return Check(err, tol, passed, "" if passed else f"relative error {err:.3g} > {tol:.3g}")

    # -- helpers ---------------------------------------------------------------------
    def cases(
        self,
        sizes: list[int] | None = None,
        dtypes: list[str] | None = None,
        variants: list[str] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> list[Case]:
        """Cases in run order: variant, dtype, then ascending size (so JIT cost lands first)."""
        merged = {**self.default_params, **(params or {})}
        return [
            Case(self.name, v, int(s), d, merged)
            for v in (variants or self.variants)
            for d in (dtypes or self.dtypes)
            for s in sorted(sizes or self.default_sizes)
        ]


def relative_error(out: np.ndarray, ref: np.ndarray, chunk: int = 1 << 16) -> float:
    """||out - ref|| / ||ref|| in ``ref``'s precision; NaN if ``out`` has a non-finite value.

    The check runs twice per measurement on results of up to gigabytes; done simply
    (a fresh temporary per chunk, BLAS dot products) it cost 0.17 s per 2**26-element
    check on the H100 host, more than the kernel's samples. So: cache-sized chunks into
    one reused buffer per block, sums by ``einsum`` (BLAS would start its own threads
    inside each pool thread), blocks spread over the cores (:mod:`gpubench.hostpar`).
    """
    a = np.ascontiguousarray(out).reshape(-1)
    b = np.ascontiguousarray(ref).reshape(-1)
    if a.size != b.size:
        raise ValueError(f"relative_error: {a.size} elements against {b.size}")
    real = b.real.dtype  # a complex chunk is summed as its interleaved real/imag parts

    def sumsq(v: np.ndarray) -> float:
        r = v.view(real)
        return float(np.einsum("i,i->", r, r))

    def block(lo: int, hi: int) -> tuple[float, float]:
        buf = np.empty(min(chunk, hi - lo), dtype=b.dtype)
        num = den = 0.0
        for i in range(lo, hi, chunk):
            j = min(i + chunk, hi)
            x, d = b[i:j], buf[:j - i]
            d[...] = a[i:j]
            d -= x
            num += sumsq(d)
            den += sumsq(x)
        return num, den

    parts = map_chunks(block, b.size)
    num = math.fsum(p[0] for p in parts)
    den = math.fsum(p[1] for p in parts)
    if not math.isfinite(num):  # a NaN or infinity in out makes the sum non-finite
        return float("nan")
    return math.sqrt(num) / (math.sqrt(den) if den > 0 else 1.0)


def itemsize(dtype: str) -> int:
    return DTYPE_BYTES[dtype]


def random_array(rng: np.random.Generator, shape: Any, dtype: str, low: float = 0.5,
                 high: float = 1.5) -> np.ndarray:
    """Uniform random data away from zero (no cancellation traps), in the case's dtype.

    Drawn directly in the target precision and scaled in place (an order of magnitude
    faster than float64 draws cast down), over all cores for large arrays
    (:func:`gpubench.hostpar.fill_uniform`): that matters at 2**26 elements per case.
    """
    if dtype.startswith("complex"):
        real = "float32" if dtype == "complex64" else "float64"
        out = np.empty(shape, dtype=dtype)
        out.real = random_array(rng, shape, real, low, high)
        out.imag = random_array(rng, shape, real, low, high)
        return out
    out = np.empty(shape, dtype=dtype)
    fill_uniform(rng, out, low, high)
    return out


# -- implementations -----------------------------------------------------------------


@dataclass
class BuildContext:
    """What a builder gets: the case, device-resident inputs and poisoned output buffers."""

    case: Case
    backend: Any
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    seed: int
    #: the same inputs in host memory, for implementations that time their transfers
    host_inputs: dict[str, Any] = field(default_factory=dict)
    #: the row's theoretical occupancy, as a function the harness calls after the first
    #: call (:func:`gpubench.occupancy.attach`); None: the row records none
    occupancy: Callable[[], float] | None = None

    def out(self, name: str) -> Any:
        return self.outputs[name]


#: A builder returns the callable the harness times. The callable returns the result
#: (a device object), or None when it wrote into ``ctx.outputs``.
Builder = Callable[[BuildContext], Callable[[], Any]]


@dataclass(frozen=True)
class Implementation:
    kernel: str
    framework: str
    name: str
    builder: Builder
    devices: tuple[str, ...] = ("cpu",)
    #: uses several CPU threads, so it runs once per thread count in the sweep
    parallel: bool = False
    variants: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    #: hand-written O(n^3) loops and the like cap the size they are run at
    max_size: int | None = None
    source_file: str = ""
    #: other frameworks whose packages the builder imports (an interop hand-off's
    #: producer): a per-framework environment lacks them, so the plan leaves it out there
    needs: tuple[str, ...] = ()

    def supports(self, case: Case) -> tuple[bool, str]:
        """Whether this implementation exists for the case; a reason when not."""
        if self.variants is not None and case.variant not in self.variants:
            return False, ""
        if self.dtypes is not None and case.dtype not in self.dtypes:
            return False, ""
        return True, ""


_IMPLEMENTATIONS: list[Implementation] = []


def implementation(
    kernel: str,
    framework: str,
    name: str,
    *,
    devices: tuple[str, ...] = ("cpu",),
    parallel: bool = False,
    variants: tuple[str, ...] | None = None,
    dtypes: tuple[str, ...] | None = None,
    max_size: int | None = None,
    needs: tuple[str, ...] = (),
) -> Callable[[Builder], Builder]:
    """Register a builder as an implementation of ``kernel`` in ``framework``; ``needs``
    names the other frameworks it imports."""

    def register(builder: Builder) -> Builder:
        _IMPLEMENTATIONS.append(
            Implementation(
                kernel=kernel,
                framework=framework,
                name=name,
                builder=builder,
                devices=devices,
                parallel=parallel,
                variants=variants,
                dtypes=dtypes,
                max_size=max_size,
                source_file=getattr(builder, "__module__", ""),
                needs=tuple(needs),
            )
        )
        return builder

    return register


# -- the kernel registry ----------------------------------------------------------------

#: kernels found in ``gpubench.kernels`` (name -> package), filled on first use
_in_tree: dict[str, str] = {}
#: kernels a plugin registered (:func:`register_kernel`)
_registered: dict[str, KernelSpec] = {}
_loaded: dict[str, KernelSpec] = {}


def register_kernel(spec: KernelSpec) -> KernelSpec:
    """Add a kernel from outside ``gpubench.kernels`` (a plugin named in
    ``GPUBENCH_PLUGINS``); its implementations register with :func:`implementation`."""
    _registered[spec.name] = spec
    _loaded.pop(spec.name, None)
    return spec


def _specs() -> dict[str, KernelSpec]:
    """Every kernel's spec: the packages under ``gpubench.kernels`` (each one's ``SPEC``)
    and the plugins' (:func:`gpubench.backends.load_plugins`)."""
    load_plugins()
    if not _in_tree:
        import gpubench.kernels as package

        for info in pkgutil.iter_modules(package.__path__):
            if info.ispkg:
                module = importlib.import_module(f"gpubench.kernels.{info.name}")
                if isinstance(getattr(module, "SPEC", None), KernelSpec):
                    _in_tree[module.SPEC.name] = module.__name__
    specs = {name: importlib.import_module(mod).SPEC for name, mod in _in_tree.items()}
    return {**specs, **_registered}


def kernel_names(suite_only: bool = True) -> tuple[str, ...]:
    """The suite's kernels in the order they run and appear in the report
    (:attr:`KernelSpec.order`); not ``suite_only``: the kernels of no suite case too
    (:attr:`KernelSpec.suite` false, by name after them)."""
    specs = {n: s for n, s in _specs().items() if s.suite or not suite_only}
    return tuple(sorted(specs, key=lambda n: (not specs[n].suite, _order(specs[n]), n)))


def _order(spec: KernelSpec) -> float:
    return float(spec.order) if spec.order is not None else math.inf


def kernel_order(name: str) -> float:
    """A kernel's place in the report (unknown kernels last)."""
    spec = _specs().get(name)
    return _order(spec) if spec is not None else math.inf


def kernel_specs() -> list[KernelSpec]:
    """Every kernel's spec, in :func:`kernel_names` order (implementations registered)."""
    return [get_kernel(n) for n in kernel_names()]


def get_kernel(name: str) -> KernelSpec:
    """Load a kernel's spec and register all its implementations (no framework imports)."""
    if name in _loaded:
        return _loaded[name]
    specs = _specs()
    if name not in specs:
        raise KeyError(f"unknown kernel {name!r}; known: {', '.join(kernel_names())}")
    if name in _in_tree:
        package = importlib.import_module(_in_tree[name])
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("with_"):
                importlib.import_module(f"{package.__name__}.{info.name}")
    _loaded[name] = specs[name]
    return _loaded[name]


def find_kernel(name: object) -> KernelSpec | None:
    """The spec of a kernel named in a result row, or None for one not known here."""
    try:
        return get_kernel(str(name))
    except (KeyError, ImportError):
        return None


#: the largest size a case may have: sizes are the results' keys, which the report reads
#: as floats, and a float holds every whole number up to 2**53 exactly
MAX_SIZE = 2**53
#: the most bytes one case may need (:meth:`KernelSpec.memory_bytes`): what a 64-bit
#: address space holds, and the largest array NumPy can make
MAX_CASE_BYTES = 2**63 - 1


def size_problem(kernel: object, size: float, dtype: str, variant: str | None = None,
                 params: Mapping[str, Any] | None = None) -> str:
    """Why a case of ``size`` can be neither run nor measured, or '' if it can: a whole
    number from 1 to :data:`MAX_SIZE` whose data (its kernel's :meth:`~KernelSpec.
    memory_bytes`, for a kernel and dtype known here) fits in :data:`MAX_CASE_BYTES`.
    The config and the results' readers both ask, so that a size a run would fail on
    (OverflowError, no row) is refused before it starts, and a row of such a size was
    not measured."""
    if not (math.isfinite(size) and size == math.floor(size) and 1 <= size <= MAX_SIZE):
        return "must be a whole number from 1 to 2**53"
    spec = find_kernel(kernel)
    if spec is None:
        return ""
    case = Case(spec.name, variant if variant in spec.variants else spec.variants[0],
                int(size), dtype, {**spec.default_params, **(params or {})})
    try:
        need = float(spec.memory_bytes(case))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return ""  # a dtype or parameter this kernel does not know: checked elsewhere
    if not need <= MAX_CASE_BYTES:
        return (f"{spec.name} at {int(size):,} {spec.size_meaning} of {dtype} needs about "
                f"{need:.3g} bytes, more than a 64-bit machine can address (2**63)")
    return ""


def link_kernel() -> str:
    """The kernel the host-device link is measured with (its :attr:`~KernelSpec.ceiling`
    is "link"; the probe measures the bus at its sizes); '' where none is registered."""
    return next((s.name for s in kernel_specs() if s.ceiling == "link"), "")


def kernel_bound(name: object) -> str | None:
    """Which ceiling a kernel's rows are read against, by its :mod:`gpubench.ceilings`
    name: "memory" (copy bandwidth), "compute" (GEMM), "transfer" (host-device link),
    or None (no ceiling, or a kernel not known here)."""
    spec = find_kernel(name)
    return CEILINGS.get(spec.ceiling) if spec is not None else None


def report_classes() -> dict[str, tuple[str, ...]]:
    """Workload class key (:mod:`gpubench.workloads`) -> its kernels, classes in the
    order of their first kernel."""
    out: dict[str, tuple[str, ...]] = {}
    for spec in kernel_specs():
        if spec.report_class:
            out[spec.report_class] = (*out.get(spec.report_class, ()), spec.name)
    return out


def implementations(kernel: str, framework: str | None = None,
                    device: str | None = None) -> list[Implementation]:
    """Registered implementations of a kernel, optionally for one framework and device."""
    get_kernel(kernel)
    return [
        i
        for i in _IMPLEMENTATIONS
        if i.kernel == kernel
        and (framework is None or i.framework == framework)
        and (device is None or device in i.devices)
    ]


def __getattr__(name: str) -> Any:
    """``KERNELS``: :func:`kernel_names` under its old name, for callers that read it
    as a constant (derived on each read: plugins may add kernels)."""
    if name == "KERNELS":
        return kernel_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
