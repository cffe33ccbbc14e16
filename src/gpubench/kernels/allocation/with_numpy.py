"""allocation in NumPy (CPU): ``np.empty`` of ``size`` bytes, then dropped (``malloc`` and
``free``; glibc serves large blocks with ``mmap``/``munmap``, and an untouched page is
never faulted in)."""

from __future__ import annotations

from collections.abc import Callable

from gpubench.kernels.allocation import MARK, verify
from gpubench.spec import BuildContext, implementation


@implementation("allocation", "numpy", "empty")
def empty(ctx: BuildContext) -> Callable[[], int]:
    import numpy as np

    n = ctx.case.size
    probe = np.empty(n, dtype=np.uint8)
    probe[-1] = MARK
    verify(ctx.case, probe.nbytes, int(probe[-1]))
    del probe

    def call() -> int:
        buf = np.empty(n, dtype=np.uint8)
        nbytes = buf.nbytes
        del buf
        return nbytes

    return call
