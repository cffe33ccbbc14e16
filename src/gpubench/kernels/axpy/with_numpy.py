"""axpy in NumPy: one array expression (a new array)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


def update(p: Any, g: Any, scale: float) -> Any:
    """``p - scale * g`` of any NumPy-like arrays."""
    return p - scale * g


@implementation("axpy", "numpy", "array_ops")
def array_ops(ctx: BuildContext) -> Callable[..., Any]:
    return update
