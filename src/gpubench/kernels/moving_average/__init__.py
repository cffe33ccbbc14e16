"""moving_average: trailing windowed mean of many series (the workshop book, §4.7.2,
``@guvectorize``).

The input ``x`` is a batch of independent series, shape ``(rows, L)`` with
``L = params["series_length"]``: ``(size // L, L)`` when ``size >= L``, else
``(1, size)``. A size that is not a multiple of L is rounded *down* to whole series, so
bytes and flops count ``rows * L`` elements, not ``size``. For each row::

    out[r, i] = mean(x[r, max(0, i - window + 1) : i + 1])

i.e. the first ``window - 1`` outputs average the partial window, as in the book.

Flop convention, per element: a running sum adds the new element, subtracts the one
leaving the window and divides by the count: 3 flops. (The book's direct loop does
``window`` adds per element; the running-sum and cumsum forms all do O(1).)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, KernelSpec, itemsize, random_array


def series_shape(case: Case) -> tuple[int, int]:
    """``(rows, L)`` for the case: whole series of length L, or one short series."""
    length = int(case.params["series_length"])
    if case.size >= length:
        return case.size // length, length
    return 1, case.size


def window_counts(n: int, window: int) -> np.ndarray:
    """How many elements each output averages: 1, 2, ..., window, window, ..."""
    return np.minimum(np.arange(1, n + 1), window)


class MovingAverage(KernelSpec):
    name = "moving_average"
    order = 70
    bound = "memory"
    ceiling = "copy"
    unit = "GB/s"
    report_class = "elementwise work"
    #: Every framework's best implementation at 2^26 elements
    target_pct = 95.0
    description = "trailing windowed mean along each of many series"
    size_meaning = "elements (rows x series_length, rounded down to whole series)"
    default_sizes = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24)
    default_params: Mapping[str, Any] = {"window": 16, "series_length": 1024}
    # float32 at the default params (L = 1024, window 16). The cumsum forms store prefix
    # sums of size ~i in float32 and difference them w apart: the rounding error of the
    # steps inside the window, ~eps * i * sqrt(w), over a window sum ~w gives a relative
    # error ~eps * L / sqrt(w) (3.5e-6 seen). tolerance() scales it for other params.
    tolerances: Mapping[str, float] = {"float32": 1e-5, "float64": 1e-12}

    def tolerance(self, case: Case) -> float:
        """The dtype's tolerance, loosened in proportion to L / sqrt(window) beyond defaults."""
        tol = float(self.tolerances[case.dtype])
        length = series_shape(case)[1]
        w = int(case.params["window"])
        scale = (length / 1024) * (16 / w) ** 0.5
        return tol * max(1.0, scale)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Seeded random series in [0.5, 1.5): positive, no cancellation in the windows."""
        return {"x": random_array(rng, series_shape(case), case.dtype)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """float64 cumulative sums, differenced ``window`` apart, divided by the counts."""
        w = int(case.params["window"])
        c = np.cumsum(inputs["x"].astype(np.float64), axis=-1)
        s = c.copy()
        s[:, w:] -= c[:, :-w]
        return s / window_counts(c.shape[-1], w)

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        return {"out": (series_shape(case), case.dtype)}

    def elements(self, case: Case) -> int:
        rows, length = series_shape(case)
        return rows * length

    def bytes_moved(self, case: Case) -> float:
        """x read once, out written once."""
        return 2.0 * self.elements(case) * itemsize(case.dtype)

    def flops(self, case: Case) -> float:
        return 3.0 * self.elements(case)

    def memory_bytes(self, case: Case) -> float:
        """Device x and out, a cumsum temporary and a difference, host x, float64 reference."""
        n, isz = self.elements(case), itemsize(case.dtype)
        return float(n * (4 * isz + isz + 3 * 8))


SPEC = MovingAverage()
