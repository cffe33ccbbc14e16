"""launch_overhead in CUDA Python: ``launch_overhead.cu`` (NVRTC), one ``cuda.core.launch``
per call on the backend's stream: the lowest-level launch path Python has, so its row
is the floor the other frameworks' fixed costs are read against."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpubench.spec import BuildContext, implementation


def blocks(n: int, threads: int) -> int:
    """One thread per element: the smallest grid, as a tiny launch would use."""
    return max(1, -(-n // threads))


@implementation("launch_overhead", "cuda_python", "nvrtc", devices=("gpu",))
def nvrtc(ctx: BuildContext) -> Callable[[], None]:
    from gpubench import cuda_sources
    from gpubench.cuda_launch import THREADS

    be = ctx.backend
    a, out = ctx.inputs["a"], ctx.out("out")
    kernel = be.kernel(cuda_sources.source("launch_overhead"),
                       f"launch_overhead_{cuda_sources.suffix(ctx.case.dtype)}")
    grid = blocks(a.size, THREADS)
    args = (a.ptr, out.ptr, np.int64(a.size))

    def call() -> None:
        be.launch(kernel, grid, THREADS, *args)

    return call
