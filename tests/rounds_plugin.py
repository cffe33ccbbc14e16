"""A stand-in GPU on the CPU with a persistent compilation cache: the caller's rounds
and the ``cache_state`` column through the real runner and worker
(tests/test_caller_rounds.py, tests/test_cache_state.py).

Loaded through GPUBENCH_PLUGINS=rounds_plugin. Backend ``rounds-gpu`` runs host NumPy,
times a sample with the host clock as device events would time the calling stream, and
declares the folder named by ``GPUBENCH_TEST_CACHE_DIR`` as its compilation cache.
``compiles`` writes one "compiled kernel" per case into that folder at build time,
unless an earlier process left it there (as CuPy's kernel cache does); ``plain``
compiles nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend
from gpubench.spec import implementation

BACKENDS["rounds-gpu"] = "rounds_plugin:RoundsGPU"

#: the stand-in's cache folder (unset: it declares none)
CACHE_ENV = "GPUBENCH_TEST_CACHE_DIR"


def cache_dir() -> Path | None:
    where = os.environ.get(CACHE_ENV)
    return Path(where) if where else None


class RoundsGPU(Backend):
    framework = "rounds"
    device = "gpu"
    timer = "standin_events"
    caller_timer = "perf_counter+standin wait"

    def start(self, threads: int) -> dict[str, str]:
        where = cache_dir()
        if where is not None:
            where.mkdir(parents=True, exist_ok=True)  # as a framework's start-up would
        return {"rounds": "1.0"}

    def device_name(self) -> str:
        return "stand-in GPU (host NumPy)"

    def free_memory(self) -> int | None:
        return None

    def compile_cache_dirs(self) -> list[Path]:
        where = cache_dir()
        return [where] if where is not None else []

    def time_call(self, fn: Any) -> tuple[Any, float]:
        t0 = time.perf_counter()
        result = fn()
        return result, time.perf_counter() - t0


def _add(ctx):
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call():
        np.add(a, b, out=c)

    return call


@implementation("vector_add", "rounds", "compiles", devices=("gpu",))
def compiles(ctx):
    where = cache_dir()
    if where is not None:
        kernel = where / f"vector_add-{ctx.case.dtype}-{ctx.case.size}.cubin"
        if not kernel.exists():
            kernel.write_bytes(b"\x7fELF compiled for this case")
    return _add(ctx)


@implementation("vector_add", "rounds", "plain", devices=("gpu",))
def plain(ctx):
    return _add(ctx)
