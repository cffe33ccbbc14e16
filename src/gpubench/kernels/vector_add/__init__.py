"""vector_add: c = a + b. Memory-bound: reads two arrays, writes one (the workshop
book, §2.6.1, §4.11.1)."""

from __future__ import annotations

import numpy as np

from gpubench.hostpar import elementwise64
from gpubench.spec import Case, KernelSpec, itemsize, random_array


class VectorAdd(KernelSpec):
    name = "vector_add"
    order = 10
    bound = "memory"
    ceiling = "copy"
    unit = "GB/s"
    report_class = "elementwise work"
    #: Every framework's best implementation at 2^26 elements
    target_pct = 95.0
    description = "c = a + b on two distinct random vectors"
    size_meaning = "elements"
    default_sizes = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24)
    tolerances = {"float32": 1e-6, "float64": 1e-15}

    def make_inputs(self, case: Case, rng):
        return {"a": random_array(rng, case.size, case.dtype),
                "b": random_array(rng, case.size, case.dtype)}

    def reference(self, case: Case, inputs):
        return elementwise64(np.add, inputs["a"], inputs["b"])

    def outputs(self, case: Case):
        return {"c": ((case.size,), case.dtype)}

    def bytes_moved(self, case: Case) -> float:
        return 3.0 * case.size * itemsize(case.dtype)

    def flops(self, case: Case) -> float:
        return float(case.size)

    def memory_bytes(self, case: Case) -> float:
        # inputs + output on the device, plus host copies and the float64 reference
        return 3.0 * self.bytes_moved(case) + 8.0 * case.size


SPEC = VectorAdd()
