"""launch_overhead: the fixed cost of one call on a tiny array (the workshop
book, §1.8.3).

One call computes ``out = a + 1`` on 1 or 1024 elements: so little work that the
time is the framework's fixed cost per operation: Python dispatch, argument checks,
the kernel launch (and on GPUs the driver's launch path), and for JAX the jit cache
lookup. It is why arrays under ~10⁴ elements run slower on a GPU than on a CPU; read the
rows as µs per call (``median_s``), not as GB/s.

Timing caveat for GPU rows: the launch is the quantity measured, so the harness must
not hide it. Hot GPU samples normally queue a busy kernel first (``Backend.hide_launch``)
so the events bracket device work only; that would leave just the tiny kernel's device
time here. :attr:`LaunchOverhead.hide_launch` is False to say so: a harness that honours
it skips ``hide_launch`` for this kernel, and the events then span the host's launch
path plus the kernel (the GPU sits idle at the start event until the launch arrives).
Seen on an H100 with and without the busy kernel: PyTorch 3.5 µs vs 25.6 µs, CuPy
3.4 µs vs 11.7-15.8 µs, so only the second is the launch overhead. JAX on GPUs has no
events (host clock and sync, ~75-90 µs either way).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gpubench.spec import Case, KernelSpec, itemsize, random_array


class LaunchOverhead(KernelSpec):
    name = "launch_overhead"
    memory_relative = False
    order = 110
    bound = "latency"
    ceiling = "none"
    unit = "GB/s"
    report_class = None
    target_pct = 0
    description = "out = a + 1 on a tiny array: the fixed cost per call"
    size_meaning = "elements"
    variants = ("add_one",)
    # The fixed cost does not depend on the dtype; one dtype halves the run time.
    dtypes = ("float32",)
    default_sizes = (1, 1024)
    #: False: the launch latency is the measurement (see the module docstring)
    hide_launch: bool = False
    # a + 1 in float32 is one correctly rounded operation: relative error <= 2**-24
    # (6.0e-8) per element against the float64 sum.
    tolerances: Mapping[str, float] = {"float32": 1e-6, "float64": 1e-15}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"a": random_array(rng, case.size, case.dtype)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        return inputs["a"].astype(np.float64) + 1.0

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        return {"out": ((case.size,), case.dtype)}

    def bytes_moved(self, case: Case) -> float:
        return 2.0 * case.size * itemsize(case.dtype)

    def flops(self, case: Case) -> float:
        return float(case.size)

    def memory_bytes(self, case: Case) -> float:
        return 4.0 * self.bytes_moved(case) + 8.0 * case.size


SPEC = LaunchOverhead()
