"""A stand-in kernel added from outside the package: the dry run of docs/extending.md's
"Adding a kernel" for a plugin (``GPUBENCH_PLUGINS=standin_kernel_plugin``,
tests/test_registry_complete.py).

Everything a kernel needs is here, and nothing else was edited: the spec with its facts
(what bounds it, its unit, its report class, its target and ceiling, its place in the
report), the registration line, and one implementation. In-tree the same pieces are a
package ``src/gpubench/kernels/<name>/`` (``SPEC`` in its ``__init__.py``, found by the
scan) and its ``with_<framework>.py`` files.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.spec import (
    BuildContext,
    Case,
    KernelSpec,
    implementation,
    itemsize,
    random_array,
    register_kernel,
)


# -- the spec and its facts -------------------------------------------------------------
class Scale(KernelSpec):
    """out = 3 * a: one read, one write, like a copy."""

    name = "standin_scale"
    description = "out = 3 * a (a stand-in kernel from a plugin)"
    order = 15  # between vector_add and elementwise
    bound = "memory"
    ceiling = "copy"
    unit = "GB/s"
    report_class = "elementwise work"
    target_pct = 80.0
    default_sizes = (1 << 10, 1 << 14)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"a": random_array(rng, case.size, case.dtype)}

    def reference(self, case: Case, inputs: Any) -> np.ndarray:
        return 3.0 * inputs["a"].astype(np.float64)

    def bytes_moved(self, case: Case) -> float:
        return 2.0 * case.size * itemsize(case.dtype)


# -- the registration line -------------------------------------------------------------------
SPEC = register_kernel(Scale())


# -- an implementation ------------------------------------------------------------------------
@implementation("standin_scale", "numpy", "multiply")
def multiply(ctx: BuildContext) -> Callable[[], Any]:
    a = ctx.inputs["a"]
    return lambda: np.multiply(a, 3)
