"""``torch.compile`` as the kernels' compiled rows use it (elementwise, reduction,
moving_average): one place for dynamo's limits, so the three cannot drift."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def compile_static(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` compiled for static shapes with ``fullgraph=True``. The cases of a sweep
    share one code object, and dynamo's recompile limit (8 per code object; past it
    ``fullgraph=True`` fails) is raised to the sweep's size first."""
    import torch

    dynamo = torch._dynamo.config
    for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                  "accumulated_cache_size_limit"):
        if hasattr(dynamo, limit):
            setattr(dynamo, limit, max(int(getattr(dynamo, limit)), 256))
    return torch.compile(fn, dynamic=False, fullgraph=True)
