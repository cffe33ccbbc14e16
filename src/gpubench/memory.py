"""Peak device memory of one call, read from each framework's own allocator.

"Will my problem fit?" needs what a call holds on the device at its high-water mark,
not what the driver reports (pools keep freed blocks). So each GPU framework is asked
in its own terms (the probe its backend names in ``memory_probe``):

- PyTorch: ``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``
  (tensors of the caching allocator; not its cached free blocks, not the context).
- CuPy: the default memory pool's ``used_bytes``, read after every allocation the call
  makes through a wrapping allocator (``cupy.cuda.using_allocator``): the pool has no
  high-water mark of its own, and used bytes only grow at an allocation. Memory CuPy
  does not allocate through its allocator (cuBLAS' workspace) is not seen.
- JAX: ``memory_stats()["peak_bytes_in_use"]``. JAX keeps one high-water mark per
  process and has no reset, so an earlier, larger call would hide this one's. Before
  the call, the probe therefore allocates a pad that brings the bytes in use up to that
  mark; the mark then grows by exactly the call's own peak. Where the pad cannot be
  allocated (or the call does not fit beside it: it runs again without), the reading
  counts only if the mark grew, and the row says why otherwise.
- Numba: every allocation of the context's memory manager (``memalloc``,
  ``memallocmanaged``) during the call, counted until its pointer object is garbage.
  Numba frees device memory later, in batches, so the driver may hold it longer; what
  the call *needs* is the count (Numba flushes its pending frees before it fails).
- CUDA Python: the driver API's ``cuMemAlloc*``/``cuMemFree*`` during the call.

The reading is one extra, untimed call after the row's timed samples, energy window
and final check: timing is never affected. The row gets the peak as the bytes its
inputs, outputs and build keep on the device (what the framework had in use before the
call over what it had before the inputs were placed, at least the inputs and outputs'
own sizes; Numba and CUDA Python, which count no bytes in use of their own: those
sizes) plus the call's high-water above its start; and that as a multiple of the
inputs plus outputs. CPU rows get no reading and no claim (empty columns).

What no allocator sees is not counted: the CUDA context, loaded modules, library
workspaces allocated outside the framework's allocator (cuBLAS' in CuPy).
"""

from __future__ import annotations

import importlib
import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["NotMeasured", "Probe", "RowData", "baseline", "nbytes", "peak_fields",
           "probe_for", "row_data"]


class NotMeasured(Exception):
    """The probe cannot read this call; the message says why (recorded, never raised on)."""


class Probe:
    """One framework's allocator, read around one call.

    :meth:`in_use`: bytes the framework holds for arrays now, where it keeps that count
    (``counts_build``: then what a row's build keeps on the device is measured from a
    baseline taken before its inputs are placed); :meth:`peak`: run the call once, wait,
    and return (result, its high-water in bytes above what was in use at its start)."""

    meter = ""
    #: :meth:`in_use` counts this framework's own arrays (not the whole device's memory,
    #: whose 2 MiB pages, loaded modules and other processes would swamp small rows)
    counts_build = True

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def in_use(self) -> int:
        raise NotImplementedError

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        raise NotImplementedError

    def wait(self, result: Any) -> None:
        self.backend.device_sync(result)


class LiveBytes:
    """Bytes allocated and not yet garbage, and their high-water mark: an allocation
    counts until the object that owns it is collected (:func:`weakref.finalize`)."""

    def __init__(self) -> None:
        self.live = 0
        self.high = 0

    def add(self, owner: Any, size: int) -> None:
        self.live += size
        self.high = max(self.high, self.live)
        weakref.finalize(owner, self.drop, size)

    def drop(self, size: int) -> None:
        self.live -= size

    def wrap(self, alloc: Callable[..., Any],
             sized: Callable[[Any, int], tuple[Any, int]]) -> Callable[..., Any]:
        """``alloc(size, ...)`` counting what it returns (``sized``: (owner, bytes))."""
        def counted(size: int, *args: Any, **kwargs: Any) -> Any:
            mem = alloc(size, *args, **kwargs)
            owner, n = sized(mem, int(size))
            self.add(owner, n)
            return mem
        return counted


def probe_for(backend: Any) -> Probe | None:
    """The backend's probe (None on a CPU): its facts name it in ``memory_probe``
    ("module:Class"); made once per backend. Raises :class:`NotMeasured` for a GPU
    backend that names none or whose probe cannot start."""
    if backend.device != "gpu":
        return None
    where = backend.facts.memory_probe
    if not where:
        raise NotMeasured(f"no memory probe for {backend.backend_id} (its memory_probe)")
    cached = getattr(backend, "_memory_probe", None)
    if cached is None:
        module, _, name = where.partition(":")
        cached = getattr(importlib.import_module(module), name)(backend)
        backend._memory_probe = cached
    return cached


def baseline(backend: Any) -> int | None:
    """Bytes the framework has in use before a row's inputs are placed (None: on a CPU,
    or unreadable): what the row's build keeps on the device is measured from here."""
    try:
        probe = probe_for(backend)
        return probe.in_use() if probe is not None and probe.counts_build else None
    except Exception:  # noqa: BLE001 - the peak pass says why; a baseline is optional
        return None


def nbytes(value: Any) -> int:
    """Bytes of an array or of every array in a tuple, list or dict (0 for None)."""
    if value is None:
        return 0
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes(v) for v in value)
    n = getattr(value, "nbytes", None)
    if n is not None:
        try:
            return int(n)
        except (TypeError, ValueError):
            return 0
    return int(np.asarray(value).nbytes) if isinstance(value, int | float | complex) else 0


class RowData:
    """The sizes a row's reading is put against: ``data`` (inputs plus outputs, the
    multiple's denominator) and ``resident`` (what of that sits on the device before the
    call: placed inputs and preallocated outputs)."""

    def __init__(self, inputs: int, outputs: int, resident: int) -> None:
        self.data = inputs + outputs
        self.resident = resident


def row_data(place_inputs: bool, host_inputs: dict[str, Any], outputs: dict[str, Any],
             result: Any) -> RowData:
    """The row's sizes: its inputs, and its preallocated outputs or, where it has none
    (JAX, functions that return new arrays), the result it returned."""
    inputs = nbytes(host_inputs)
    pre = nbytes(outputs)
    out = pre if outputs else nbytes(result)
    return RowData(inputs, out, (inputs if place_inputs else 0) + pre)


def _columns(data: RowData, peak: float = math.nan, call: float = math.nan,
             meter: str = "", reason: str = "") -> dict[str, Any]:
    multiple = peak / data.data if data.data > 0 and math.isfinite(peak) else math.nan
    return {"memory_peak_bytes": peak, "memory_call_bytes": call,
            "memory_data_bytes": float(data.data) if data.data > 0 else math.nan,
            "memory_multiple": multiple, "memory_meter": meter, "memory_reason": reason}


def peak_fields(call: Callable[[], Any], backend: Any, data: RowData,
                base: int | None) -> dict[str, Any]:
    """The row's ``memory_*`` fields from one more, untimed call (see the module doc);
    {} on a CPU. Never raises: a failure is ``not measured`` with the reason."""
    if backend.device != "gpu":
        return {}
    meter = ""
    try:
        probe = probe_for(backend)
        assert probe is not None
        meter = probe.meter
        before = probe.in_use() if base is not None else 0
        _, extra = probe.peak(call)
    except NotMeasured as exc:
        return _columns(data, meter=meter, reason=f"not measured: {exc}"[:300])
    except Exception as exc:  # noqa: BLE001 - the row's timings stand without it
        return _columns(data, meter=meter, reason=f"not measured: the memory pass failed: "
                                                   f"{type(exc).__name__}: {exc}"[:300])
    kept = before - base if base is not None else 0
    resident = max(kept, data.resident)
    return _columns(data, float(resident + max(0, extra)), float(max(0, extra)), meter)

