"""matmul: C = A·B on square n×n matrices. Compute-bound (the workshop book,
§4.9.1, §5.10.2).

Library GEMM (BLAS, XLA, ATen) against hand-written Numba loops. The inputs are drawn
from [-1, 1], so the products cancel: a path that silently rounds float32 inputs to TF32
(a common GPU default) then misses the tolerance 25-fold (~2.6e-4 at n=1024), where with
all-positive [0.5, 1.5] inputs it would sit right at it (~1.0e-5).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gpubench.hostpar import matmul64
from gpubench.spec import Case, KernelSpec, itemsize, random_array


class Matmul(KernelSpec):
    name = "matmul"
    order = 40
    bound = "compute"
    ceiling = "gemm"
    unit = "GFLOP/s"
    report_class = "GEMM"
    #: The library GEMM of every framework
    target_pct = 98.0
    description = "C = A·B for two distinct random square matrices"
    size_meaning = "matrix order n (n×n)"
    dtypes = ("float32", "float64")
    default_sizes = (64, 128, 256, 512, 1024, 2048)
    # Rounding error of a length-n dot product grows like sqrt(n)·eps in practice.
    # Seen on the CPU: float32 <= 4.1e-7 for the library GEMMs at n=2048 and 5.8e-7 for
    # the Numba sequential-k loops at n=1024; float64 <= 1.6e-15. Inputs rounded to TF32
    # would give ~2.6e-4 and bfloat16 ~2.1e-3 (simulated at n=1024), far outside.
    tolerances: Mapping[str, float] = {"float32": 1e-5, "float64": 1e-12}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        n = case.size
        return {"a": random_array(rng, (n, n), case.dtype, -1.0, 1.0),
                "b": random_array(rng, (n, n), case.dtype, -1.0, 1.0)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The float64 product, with no BLAS threads left spinning after it."""
        return matmul64(inputs["a"], inputs["b"])

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        return {"c": ((case.size, case.size), case.dtype)}

    def bytes_moved(self, case: Case) -> float:
        """A and B read once, C written once: the floor, not what a GEMM really moves."""
        return 3.0 * case.size**2 * itemsize(case.dtype)

    def flops(self, case: Case) -> float:
        """2·n³: one multiply and one add per (i, j, k)."""
        return 2.0 * float(case.size) ** 3

    def memory_bytes(self, case: Case) -> float:
        # A, B, C on the device and on the host, plus the float64 reference and the
        # float64 temporaries of the check.
        return 2.0 * self.bytes_moved(case) + 3 * 8.0 * case.size**2


SPEC = Matmul()
