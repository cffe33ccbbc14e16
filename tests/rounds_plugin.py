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
import sys
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend, Facts
from gpubench.spec import implementation

BACKENDS["rounds-gpu"] = "rounds_plugin:RoundsGPU"

#: the stand-in's cache folder (unset: it declares none)
CACHE_ENV = "GPUBENCH_TEST_CACHE_DIR"


#: the stand-in's free memory before its arrays (unset: it cannot tell)
FREE_ENV = "GPUBENCH_TEST_FREE_BYTES"
#: set: the worker dies in its spread rounds (RoundsGPU.before_caller_clock)
DIE_ENV = "GPUBENCH_TEST_DIE_IN_SPREAD"


def _frames(frame: Any) -> list[Any]:
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out


#: id -> bytes of the device arrays alive
_LIVE: dict[int, int] = {}


def _track(array: np.ndarray) -> np.ndarray:
    _LIVE[id(array)] = array.nbytes
    weakref.finalize(array, _LIVE.pop, id(array), None)
    return array


def cache_dir() -> Path | None:
    where = os.environ.get(CACHE_ENV)
    return Path(where) if where else None


class RoundsGPU(Backend):
    framework = "rounds"
    device = "gpu"
    facts = Facts(timer="standin_events", caller_timer="perf_counter+standin wait")

    def start(self, threads: int) -> dict[str, str]:
        where = cache_dir()
        if where is not None:
            where.mkdir(parents=True, exist_ok=True)  # as a framework's start-up would
        return {"rounds": "1.0"}

    def device_name(self) -> str:
        return "stand-in GPU (host NumPy)"

    def free_memory(self) -> int | None:
        """None, or ``GPUBENCH_TEST_FREE_BYTES`` less the bytes of the stand-in's live
        device arrays (as a GPU's free memory would read)."""
        total = os.environ.get(FREE_ENV)
        return None if total is None else int(total) - sum(_LIVE.values())

    def to_device(self, array: np.ndarray) -> Any:
        return _track(super().to_device(array))

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return _track(super().empty(shape, dtype))

    def before_caller_clock(self) -> float:
        """With ``GPUBENCH_TEST_DIE_IN_SPREAD`` set, the process dies when the spread
        rounds settle the device (between the items or after them), as a worker lost
        there would."""
        if os.environ.get(DIE_ENV) and any(
                f.f_globals.get("__name__") == "gpubench.spread"
                for f in _frames(sys._getframe())):
            os._exit(3)
        return 0.0

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


def capped(ctx):
    """Skipped above 1,024 elements by its cap, not for memory."""
    return _add(ctx)


def register_capped() -> None:
    """Add ``capped`` to the registry (a test's, which restores it after; a worker's,
    when ``GPUBENCH_TEST_CAPPED`` is set)."""
    implementation("vector_add", "rounds", "capped", devices=("gpu",), max_size=1024)(capped)


if os.environ.get("GPUBENCH_TEST_CAPPED"):
    register_capped()
