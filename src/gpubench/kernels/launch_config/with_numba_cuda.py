"""launch_config in Numba CUDA: ``@cuda.jit`` kernels launched at the variant's threads
per block.

``add`` is vector_add's own ``cuda_jit`` kernel (the same dispatcher), ``poly`` the same
grid-stride loop around the multiply-add chain; both launch with vector_add's rule
(:func:`gpubench.backends.numba.gpu.grid_1d`: at most one full wave) at the variant's
block size. The occupancy comes from Numba's own query on the compiled kernel
(``max_cooperative_grid_blocks``: the driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor``
times the SM count); Numba's CUDA simulator has none.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench import occupancy
from gpubench.kernels.launch_config import POLY_STEPS, parse_variant
from gpubench.spec import BuildContext, implementation

#: ``numba.cuda``, bound by the kernel factory below: kernels must see it as a module
#: global (see :data:`gpubench.backends.numba.gpu.cuda`)
cuda: Any = None


@functools.cache
def _poly() -> Any:
    """``c = y`` after ``y = a`` and :data:`POLY_STEPS` times ``y = y * a + b``."""
    from gpubench.backends.numba.gpu import import_cuda

    global cuda
    cuda = import_cuda()
    steps = POLY_STEPS

    @cuda.jit
    def poly(a, b, c):
        for i in range(cuda.grid(1), c.shape[0], cuda.gridsize(1)):
            x, y0 = a[i], b[i]
            y = x
            for _ in range(steps):
                y = y * x + y0
            c[i] = y

    return poly


def kernel_for(work: str) -> Any:
    """The dispatcher of ``work``: vector_add's kernel for ``add``, :func:`_poly` else."""
    if work == "add":
        from gpubench.kernels.vector_add.with_numba_cuda import _kernel

        return _kernel()
    return _poly()


def numba_occupancy(dispatcher: Any, args: tuple[Any, ...], threads: int) -> float:
    """Theoretical occupancy of ``dispatcher``'s kernel compiled for ``args`` (after a
    launch compiled it) at ``threads`` per block."""
    from gpubench.backends.numba.gpu import device_limits, is_simulator

    if is_simulator():
        raise NotImplementedError("Numba's CUDA simulator has no occupancy calculator")
    kernel = dispatcher.overloads[tuple(dispatcher.typeof_pyval(x) for x in args)]
    sms, most = device_limits()
    # Numba's occupancy query: resident blocks per SM (the driver's
    # cuOccupancyMaxActiveBlocksPerMultiprocessor) times the SM count
    blocks = int(kernel.max_cooperative_grid_blocks(threads)) // sms
    return occupancy.theoretical(blocks, threads, most)


@implementation("launch_config", "numba", "cuda_jit", devices=("gpu",))
def cuda_jit(ctx: BuildContext) -> Callable[[], None]:
    from gpubench.backends.numba.gpu import grid_1d

    work, threads = parse_variant(ctx.case.variant)
    args = (ctx.inputs["a"], ctx.inputs["b"], ctx.out("c"))
    dispatcher = kernel_for(work)
    launch = dispatcher[grid_1d(args[2].shape[0], threads)]
    occupancy.attach(ctx, lambda: numba_occupancy(dispatcher, args, threads))

    def call() -> None:
        launch(*args)

    return call
