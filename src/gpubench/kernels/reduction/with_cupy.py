"""reduction in CuPy: ``cupy.dot``, ReductionKernels and ``cupy.fuse`` (the workshop
book, §5.5.2, §5.6).

Every result is a 0-d device array: nothing is read back inside the timed call.

- ``array_op``: ``cupy.dot`` as NumPy users write it (the NumPy row is ``np.dot``).
  For two vectors CuPy does not call cuBLAS ``?dot``: with its default CUB accelerator
  it computes the product into a temporary and CUB-sums it (two passes), otherwise it
  runs a multiply-sum ReductionKernel. The weighted mean adds ``w.sum()`` and a 0-d
  divide on the device.
- ``reduction_kernel``: ``cupy.ReductionKernel`` with the product as the map expression,
  one pass over the inputs. The weighted mean is two kernels (sum of w*x, sum of w),
  so it reads w twice, plus a 0-d divide.
- ``fuse``: ``cupy.sum(x * y)`` under ``@cupy.fuse()``, which becomes one reduction
  kernel. Only sum of squares and dot: a fused function holds one reduction.

All accumulate in the input dtype (float32 rows sum in float32, in trees).

CuPy sends a ReductionKernel (fused ones too) with *one* input array through CUB's
device-wide reduction, but reduces *several* inputs to a scalar in a single thread
block: on the H100 (CuPy 14.2) sumsq ran at ~2.0-2.5 TB/s, dot and the weighted sum
at 10-20 GB/s (14 ms at 2**24). That is what the book's two-input ReductionKernel
costs as written (reducing along axis 1 of a 2-D view first, one block per row,
should avoid it; not measured).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("reduction", "cupy", "array_op", devices=("gpu",))
def array_op(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "sumsq":
        return lambda: cupy.dot(a, a)
    if variant == "dot":
        b = ctx.inputs["b"]
        return lambda: cupy.dot(a, b)
    w = ctx.inputs["w"]
    return lambda: cupy.dot(w, a) / w.sum()


@functools.cache
def _reduction_kernels() -> dict[str, Any]:
    """The ReductionKernels, made once per process; CuPy compiles each per dtype of ``T``.

    Argument order is (in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name); ``a`` and ``b`` are the reduce expression's own names, so no input
    may be called that.
    """
    import cupy

    return {
        "sumsq": cupy.ReductionKernel(
            "T x", "T y", "x * x", "a + b", "y = a", "0", "gpubench_sumsq"),
        "dot": cupy.ReductionKernel(
            "T x, T v", "T y", "x * v", "a + b", "y = a", "0", "gpubench_dot"),
        "weighted_sum": cupy.ReductionKernel(
            "T x, T w", "T y", "w * x", "a + b", "y = a", "0", "gpubench_weighted_sum"),
        "sum": cupy.ReductionKernel(
            "T w", "T y", "w", "a + b", "y = a", "0", "gpubench_sum"),
    }


@implementation("reduction", "cupy", "reduction_kernel", devices=("gpu",))
def reduction_kernel(ctx: BuildContext) -> Callable[[], Any]:
    k = _reduction_kernels()
    a = ctx.inputs["a"]
    variant = ctx.case.variant
    if variant == "sumsq":
        sumsq = k["sumsq"]
        return lambda: sumsq(a)
    if variant == "dot":
        dot, b = k["dot"], ctx.inputs["b"]
        return lambda: dot(a, b)
    weighted_sum, total, w = k["weighted_sum"], k["sum"], ctx.inputs["w"]
    return lambda: weighted_sum(a, w) / total(w)


@functools.cache
def _fused() -> dict[str, Any]:
    """Fused reductions, decorated once per process (fuse caches kernels per function)."""
    import cupy

    @cupy.fuse(kernel_name="gpubench_fused_sumsq")
    def sumsq(x: Any) -> Any:
        return cupy.sum(x * x)

    @cupy.fuse(kernel_name="gpubench_fused_dot")
    def dot(x: Any, y: Any) -> Any:
        return cupy.sum(x * y)

    return {"sumsq": sumsq, "dot": dot}


@implementation("reduction", "cupy", "fuse", devices=("gpu",), variants=("sumsq", "dot"))
def fuse(ctx: BuildContext) -> Callable[[], Any]:
    fused = _fused()
    a = ctx.inputs["a"]
    if ctx.case.variant == "sumsq":
        sumsq = fused["sumsq"]
        return lambda: sumsq(a)
    dot, b = fused["dot"], ctx.inputs["b"]
    return lambda: dot(a, b)
