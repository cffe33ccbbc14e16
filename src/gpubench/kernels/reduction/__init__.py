"""reduction: sum of squares, dot product and weighted mean of long vectors to one scalar.

The workshop book's §4.8.3 (``prange`` reductions) and §5.5.2 (CuPy ReductionKernel
weighted sum), and the sum-of-squares example of the NumPy/CuPy/Numba Q&A. Memory-bound:
each input is read once and one scalar is written. The result is 0-d, so there are no
output buffers.

Flop convention, per element: one multiply and one add (2); the weighted mean also adds
the weight into the denominator (3). The final division is not counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from gpubench.hostpar import dot64, sum64
from gpubench.spec import Case, KernelSpec, itemsize, random_array

#: the inputs each variant reads
INPUTS: dict[str, tuple[str, ...]] = {
    "sumsq": ("a",),
    "dot": ("a", "b"),
    "weighted_mean": ("a", "w"),
}
FLOPS_PER_ELEMENT: dict[str, int] = {"sumsq": 2, "dot": 2, "weighted_mean": 3}
UNIT_ROUNDOFF: dict[str, float] = {"float32": 2.0**-24, "float64": 2.0**-53}


class Reduction(KernelSpec):
    name = "reduction"
    order = 30
    bound = "memory"
    ceiling = "copy"
    unit = "GB/s"
    report_class = "reductions"
    #: Every framework's best implementation at 2^26 elements
    target_pct = 95.0
    ceiling_note = ("a reduction only reads, while the copy ceiling also writes (and "
                    "pays for reading the lines it writes): reads alone can go faster")
    description = "sum(a*a), sum(a*b) and sum(w*a)/sum(w) to a scalar"
    size_meaning = "elements"
    variants = ("sumsq", "dot", "weighted_mean")
    default_sizes = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24)
    #: floors; tolerance() raises them with the length of the sum
    tolerances: Mapping[str, float] = {"float32": 1e-5, "float64": 1e-12}

    def tolerance(self, case: Case) -> float:
        """``max(floor, 2 * sqrt(n) * u)``, u the unit roundoff of the dtype.

        Libraries sum in different orders: Numba in a float64 accumulator (~1e-11 at
        2**24 in float32), XLA in trees, BLAS ``sdot`` in a few float32 SIMD
        accumulators. Recursive summation of n positive terms has a relative rounding
        error of about ``u * sqrt(n / 3)`` (a random walk; Higham & Mary's probabilistic
        bound is ``lambda * sqrt(n) * u``); a flat 1e-5 rejects correct float32 sums:
        MKL's sdot under PyTorch (sum of squares) is off by 8e-5 at n = 2**24. Once its
        partial sums are large its error grows faster than sqrt(n) (3e-4 at 2**25,
        1e-4 at 2**26 against bounds of 7e-4 and 1e-3), so re-check before running
        float32 CPU reductions beyond 2**26.
        """
        bound = 2.0 * math.sqrt(case.size) * UNIT_ROUNDOFF[case.dtype]
        return max(float(self.tolerances[case.dtype]), bound)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Seeded random inputs in [0.5, 1.5): positive, so the sums have no cancellation."""
        return {name: random_array(rng, case.size, case.dtype) for name in INPUTS[case.variant]}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        a = inputs["a"]
        if case.variant == "sumsq":
            return np.asarray(dot64(a, a))
        if case.variant == "dot":
            return np.asarray(dot64(a, inputs["b"]))
        w = inputs["w"]
        return np.asarray(dot64(w, a) / sum64(w))

    def bytes_moved(self, case: Case) -> float:
        """Each input the variant reads, once, plus the scalar written."""
        return float((len(INPUTS[case.variant]) * case.size + 1) * itemsize(case.dtype))

    def flops(self, case: Case) -> float:
        return float(FLOPS_PER_ELEMENT[case.variant] * case.size)

    def memory_bytes(self, case: Case) -> float:
        """Device inputs, slack for one temporary, host inputs, float64 reference copies."""
        n, isz, k = case.size, itemsize(case.dtype), len(INPUTS[case.variant])
        return float(n * ((2 * k + 1) * isz + 8 * k))


SPEC = Reduction()
