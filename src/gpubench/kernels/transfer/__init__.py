"""transfer: one host↔device copy of a float32 array, pageable vs pinned (the workshop
book, §5.10.1, §9.5).

Variants: ``h2d_pageable``, ``h2d_pinned`` (host → device) and ``d2h_pageable``,
``d2h_pinned`` (device → host). Pageable memory is an ordinary NumPy array: the driver
stages it through its own pinned buffer, an extra host copy. Pinned (page-locked) memory
is allocated by the framework (``cupyx.empty_pinned``, ``torch.empty(pin_memory=True)``,
``numba.cuda.pinned_array``) and the DMA engine reads or writes it directly; compare both
against the link's limit (PCIe 5.0 x16: 64 GB/s per direction). Seen on an H100 host
at 2**26 elements: pinned 53-55 GB/s both ways for CuPy, PyTorch and Numba; pageable
7-8 GB/s host to device and 12.5 GB/s back. Every row's % of ceiling is against the
probe's pinned rate of the bus in the row's direction at the row's size
(:func:`gpubench.ceilings.link_reference`); a pageable rate depends on the size and the
host, so it is a result, not a ceiling. The report ranks transfers on the sync caller's
clock (:attr:`rank_clock`).

The harness hands implementations the *host* array (``place_inputs = False``). Untimed,
in the builder, an implementation prepares the source (a pinned copy of the input for
h2d_pinned; a device copy for d2h) and the destination (a device buffer; or a host
buffer, pageable or pinned, poisoned with NaN). One call is exactly one copy into that
preallocated destination, complete when the backend's ``block``/event timing ends; h2d
returns the device array (the harness reads it back outside the timed region), d2h the
host array. JAX has no pinned host arrays a NumPy user can hand it, so it has pageable
rows only.

GPU backends only: on a CPU there is no second memory to copy to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, itemsize, random_array


class Transfer(KernelSpec):
    name = "transfer"
    memory_relative = False
    order = 100
    bound = "transfer"
    ceiling = "link"
    unit = "GB/s"
    report_class = None
    target_pct = 0
    description = "one host-to-device or device-to-host copy, pageable vs pinned host memory"
    size_meaning = "float32 elements copied"
    variants = ("h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned")
    dtypes = ("float32",)
    default_sizes = (1 << 16, 1 << 20, 1 << 24, 1 << 26)
    place_inputs = False
    #: ranked on the sync clock: pipelined, asynchronous copies overlap one another (JAX's
    #: ``device_put`` read 11.6 GB/s pipelined, 4.4 GB/s sync on an H100), and a caller
    #: moves data to use it: it waits for each copy
    rank_clock = "sync"
    #: a copy is exact: every bit must arrive
    tolerances: Mapping[str, float] = {"float32": 0.0}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": random_array(rng, case.size, case.dtype)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The host input itself (not a copy): a copy is exact, and keeping the very
        object lets the check reject an implementation that hands the input back."""
        return inputs["x"]

    def bytes_moved(self, case: Case) -> float:
        """The array crosses the link once."""
        return float(case.size * itemsize(case.dtype))

    def memory_bytes(self, case: Case) -> float:
        """On the device: the destination or source, plus the previous call's result
        while the next call runs (h2d allocations in JAX), plus slack."""
        return 3.0 * self.bytes_moved(case)

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """Bit-exact equality with the host input, and the result must be a copy."""
        tol = self.tolerance(case)
        out = np.asarray(result)
        ref = np.asarray(ref)
        if out.shape != ref.shape or out.dtype != ref.dtype:
            return Check(math.nan, tol, False, f"got {out.dtype}{list(out.shape)}, expected "
                                               f"{ref.dtype}{list(ref.shape)}")
        if np.shares_memory(out, ref):
            return Check(math.nan, tol, False, "result is the host input itself, not a copy")
        # compare bits, so NaN never equals NaN and -0.0 differs from 0.0
        wrong = int(np.count_nonzero(np.ascontiguousarray(out).view(np.uint32)
                                    != np.ascontiguousarray(ref).view(np.uint32)))
        if wrong:
            return Check(wrong / out.size, tol, False,
                         f"{wrong} of {out.size} elements differ from the source")
        return Check(0.0, tol, True)


SPEC = Transfer()


def one_copy(x: np.ndarray, variant: str, *, pinned_empty: Callable[[np.ndarray], Any],
             poisoned_device: Callable[[np.ndarray], Any], to_device: Callable[[np.ndarray], Any],
             h2d: Callable[[Any, Any], Any], d2h: Callable[[Any, Any], Any],
             synchronize: Callable[[], Any] = lambda: None) -> Callable[[], Any]:
    """The call one row times, from a framework's copy operations (see the module's
    docstring): untimed, the source (a pinned copy of ``x`` for h2d_pinned; a device
    copy for d2h) and the destination (a device array poisoned with NaN; or a host
    array, pinned or pageable, poisoned with NaN); timed, ``h2d(dev, src)`` or
    ``d2h(dst, dev)``, returning the destination.

    ``pinned_empty(x)``: an empty pinned host array like ``x``; ``poisoned_device(x)``: a
    device array of ``x``'s shape and dtype full of NaN; ``synchronize``: waits for the
    device copy of ``x`` before the d2h call is handed back."""
    direction, memory = variant.split("_")

    def host_buffer() -> Any:
        return pinned_empty(x) if memory == "pinned" else np.empty_like(x)

    if direction == "h2d":
        src = x
        if memory == "pinned":
            src = host_buffer()
            src[...] = x
        dev = poisoned_device(x)

        def to_dev() -> Any:
            h2d(dev, src)
            return dev

        return to_dev

    dev = to_device(x)
    dst = host_buffer()
    dst[...] = np.nan
    synchronize()

    def to_host() -> Any:
        d2h(dst, dev)
        return dst

    return to_host
