"""The stand-in GPU's ``vector_add`` (in-tree: ``kernels/vector_add/with_standin_gpu.py``):
a temporary on its device (what its memory probe reads) and a "compiled" kernel whose
binary goes into the persistent compilation cache (what ``cache_state`` reads)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.spec import BuildContext, implementation
from standin_gpu.device import CACHE_ENV, device_empty


@implementation("vector_add", "standin_gpu", "add", devices=("gpu",))
def add(ctx: BuildContext) -> Callable[[], Any]:
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    state = {"compiled": False}

    def call() -> None:
        if not state["compiled"]:  # the first call compiles, or loads from the cache
            where = os.environ.get(CACHE_ENV)
            if where:
                binary = Path(where) / f"vector_add-{a.dtype}.bin"
                if not binary.exists():
                    binary.parent.mkdir(parents=True, exist_ok=True)
                    binary.write_bytes(b"stand-in")
            state["compiled"] = True
        tmp = device_empty(a.shape, a.dtype)
        np.add(a, b, out=tmp)
        c[...] = tmp

    return call
