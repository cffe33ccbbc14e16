"""elementwise: per-element formulas, fused (Numba, JAX) against unfused (NumPy, PyTorch eager).

The workshop book's §4.8.2 (``sqrt(a**2 + b**2)`` with ``prange``), §5.5.1 (sigmoid as a CuPy
ElementwiseKernel) and §5.6 (``cupy.fuse`` of ``(x*2 + y*3) / (x + y + 1)``). A fused
kernel reads each input once and writes the output once; unfused array code also writes
and re-reads one temporary per operation, which is what this kernel exposes.

Flop convention, per element: each ``+ - * /``, each negation and each call of ``sqrt``
or ``exp`` counts as one flop (transcendentals are not weighted):

=========  ==============================  ==================================  =====
variant    formula                         operations                          flops
=========  ==============================  ==================================  =====
hypot      sqrt(a*a + b*b)                 2 mul, 1 add, 1 sqrt                4
sigmoid    1 / (1 + exp(-a))               1 neg, 1 exp, 1 add, 1 div          4
rational   (x*2 + y*3) / (x + y + 1)       2 mul, 3 add, 1 div                 6
=========  ==============================  ==================================  =====
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gpubench.hostpar import elementwise64
from gpubench.spec import Case, KernelSpec, itemsize, random_array

#: the inputs each variant reads (sigmoid reads only ``a``, so it moves less)
INPUTS: dict[str, tuple[str, ...]] = {
    "hypot": ("a", "b"),
    "sigmoid": ("a",),
    "rational": ("a", "b"),
}
FLOPS_PER_ELEMENT: dict[str, int] = {"hypot": 4, "sigmoid": 4, "rational": 6}


class Elementwise(KernelSpec):
    name = "elementwise"
    order = 20
    bound = "memory"
    ceiling = "copy"
    unit = "GB/s"
    report_class = "elementwise work"
    #: Every framework's best implementation at 2^26 elements
    target_pct = 95.0
    description = "hypot, sigmoid and a rational function, element by element"
    size_meaning = "elements"
    variants = ("hypot", "sigmoid", "rational")
    default_sizes = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24)
    # float32: a few roundings per element (plus ~1 ulp for expf/sqrtf) stay below 2e-7
    # in the 2-norm; 2e-6 leaves room for library differences, not for wrong results.
    tolerances: Mapping[str, float] = {"float32": 2e-6, "float64": 1e-14}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Seeded random inputs: sigmoid spans its curved range, the others stay positive.

        The rational function needs ``x + y + 1`` far from zero, so a and b are drawn
        from [0.5, 1.5) (denominator in [2, 4)) rather than a symmetric range.
        """
        if case.variant == "sigmoid":
            return {"a": random_array(rng, case.size, case.dtype, -4.0, 4.0)}
        return {name: random_array(rng, case.size, case.dtype) for name in INPUTS[case.variant]}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        if case.variant == "hypot":
            return elementwise64(lambda a, b: np.sqrt(a * a + b * b), inputs["a"], inputs["b"])
        if case.variant == "sigmoid":
            return elementwise64(lambda a: 1.0 / (1.0 + np.exp(-a)), inputs["a"])
        return elementwise64(lambda a, b: (a * 2.0 + b * 3.0) / (a + b + 1.0),
                             inputs["a"], inputs["b"])

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        return {"out": ((case.size,), case.dtype)}

    def bytes_moved(self, case: Case) -> float:
        """Each input the variant reads, once, plus the output written once."""
        return float((len(INPUTS[case.variant]) + 1) * case.size * itemsize(case.dtype))

    def flops(self, case: Case) -> float:
        return float(FLOPS_PER_ELEMENT[case.variant] * case.size)

    def memory_bytes(self, case: Case) -> float:
        """Device inputs and output, two unfused temporaries, host inputs, float64 reference."""
        n, isz, k = case.size, itemsize(case.dtype), len(INPUTS[case.variant])
        return float(n * ((k + 1) * isz + 2 * isz + k * isz + 8 * (k + 2)))


SPEC = Elementwise()
