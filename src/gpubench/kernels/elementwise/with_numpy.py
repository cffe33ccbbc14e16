"""elementwise in NumPy: the formula as a user writes it, one pass over memory per
operation, each into a scratch buffer made once.

Unfused, as CuPy's ``array_ops`` is: the same operations in the same order and
precision, so the same result to the bit. Only where the temporaries live differs from
``a * a + b * b``: there a fresh temporary per call is, at 2**24 elements, a fresh
mapping from the OS (glibc maps blocks above its mmap threshold, at most 32 MB, anew and
unmaps them on free), and its first-touch page faults add to the arithmetic; CuPy's and
PyTorch's GPU temporaries come from their pools, already mapped. Scratch made and
written at build keeps page faults out of the samples, so the baseline of every speedup
times the arithmetic alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("elementwise", "numpy", "array_ops")
def array_ops(ctx: BuildContext) -> Callable[[], Any]:
    """Unfused array operations, each written into one of two scratch buffers; only the
    last one writes into the output.

    Python scalars keep float32 arrays in float32 (NEP 50), so no silent upcast.
    """
    import numpy as np

    a, b, out = ctx.inputs["a"], ctx.inputs.get("b"), ctx.out("out")
    variant = ctx.case.variant
    # written now (np.full_like, not np.empty_like), so no call maps them page by page
    t1 = np.full_like(a, 0)
    t2 = np.full_like(a, 0) if b is not None else None

    if variant == "hypot":
        def call() -> None:
            np.multiply(a, a, out=t1)
            np.multiply(b, b, out=t2)
            np.add(t1, t2, out=t1)
            np.sqrt(t1, out=out)
    elif variant == "sigmoid":
        def call() -> None:
            np.negative(a, out=t1)
            np.exp(t1, out=t1)
            np.add(1.0, t1, out=t1)
            np.divide(1.0, t1, out=out)
    else:
        def call() -> None:
            np.multiply(a, 2, out=t1)
            np.multiply(b, 3, out=t2)
            np.add(t1, t2, out=t1)
            np.add(a, b, out=t2)
            np.add(t2, 1, out=t2)
            np.divide(t1, t2, out=out)

    return call
