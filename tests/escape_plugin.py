"""A stand-in GPU on the CPU whose 'side stream' is a thread: the plausibility tests.

Loaded through GPUBENCH_PLUGINS=escape_plugin. Backend ``escape-gpu`` times a sample as
CUDA events on the caller's stream would: the work the calling thread does, nothing
else. Its device-wide wait joins the side thread too, as ``cudaDeviceSynchronize`` waits
for every stream. ``same_stream`` adds in the calling thread; ``side_stream`` hands the
add to the side thread and returns at once, as ``with torch.cuda.stream(s):`` does.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend, Facts
from gpubench.spec import implementation

BACKENDS["escape-gpu"] = "escape_plugin:EscapeGPU"


class EscapeGPU(Backend):
    framework = "escape"
    device = "gpu"
    #: the stand-in of device events: not a host clock, so the escape gate looks at it
    facts = Facts(timer="standin_events", caller_timer="perf_counter+join side thread")

    def start(self, threads: int) -> dict[str, str]:
        self._side = ThreadPoolExecutor(1)
        self._pending: list[Future[Any]] = []
        return {"escape": "1.0"}

    def device_name(self) -> str:
        return "stand-in GPU (a side thread)"

    def free_memory(self) -> int | None:
        return None

    def submit(self, fn: Any) -> None:
        self._pending.append(self._side.submit(fn))

    def device_sync(self, result: Any) -> None:
        while self._pending:
            self._pending.pop().result()

    def time_call(self, fn: Any) -> tuple[Any, float]:
        t0 = time.perf_counter()
        result = fn()
        return result, time.perf_counter() - t0


@implementation("vector_add", "escape", "same_stream", devices=("gpu",))
def same_stream(ctx):
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call():
        np.add(a, b, out=c)

    return call


@implementation("vector_add", "escape", "side_stream", devices=("gpu",))
def side_stream(ctx):
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")
    backend = ctx.backend

    def call():
        backend.submit(lambda: np.add(a, b, out=c))

    return call
