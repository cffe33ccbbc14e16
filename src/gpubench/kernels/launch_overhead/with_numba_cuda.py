"""launch_overhead in Numba CUDA: one ``@cuda.jit`` launch (grid-stride loop, so bounds are
checked), configured once; the call pays Numba's argument marshalling and the launch."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by :func:`_kernel`: kernels must see it as a module global
#: (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None


@functools.cache
def _kernel() -> Any:
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()

    @cuda.jit
    def add_one(a, out):
        for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
            out[i] = a[i] + 1

    return add_one


@implementation("launch_overhead", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import grid_1d

    a, out = ctx.inputs["a"], ctx.out("out")
    launch = _kernel()[grid_1d(out.shape[0])]

    def call() -> None:
        launch(a, out)

    return call
