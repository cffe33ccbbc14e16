"""axpy in CuPy: NumPy's expression on device arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.kernels.axpy.with_numpy import update
from gpubench.spec import BuildContext, implementation


@implementation("axpy", "cupy", "array_ops", devices=("gpu",))
def array_ops(ctx: BuildContext) -> Callable[..., Any]:
    return update
