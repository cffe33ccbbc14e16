"""Fault-injection plugin: a fake framework whose implementations misbehave on purpose.

Loaded through GPUBENCH_PLUGINS=fault_plugin by the tests; registers backends
``fault-cpu`` (starts fine) and ``broken-cpu`` (cannot start), and vector_add
implementations that are correct, leave outputs unwritten, return wrong values,
raise, crash the process, or hang.
"""

from __future__ import annotations

import os
import signal
import time

from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend, Unavailable
from gpubench.spec import implementation

BACKENDS["fault-cpu"] = "fault_plugin:FaultCPU"
BACKENDS["broken-cpu"] = "fault_plugin:BrokenCPU"

BAD_SIZE = 4096  # size at which the crashing and hanging implementations misbehave


class FaultCPU(Backend):
    framework = "fault"
    device = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        return {"fault": "1.0"}


class BrokenCPU(Backend):
    framework = "broken"
    device = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        raise Unavailable("import broken failed: ModuleNotFoundError: No module named 'broken'")


def _abc(ctx):
    return ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")


@implementation("vector_add", "fault", "correct")
def correct(ctx):
    import numpy as np

    a, b, c = _abc(ctx)

    def call():
        np.add(a, b, out=c)

    return call


@implementation("vector_add", "fault", "unwritten")
def unwritten(ctx):
    return lambda: None


@implementation("vector_add", "fault", "wrong")
def wrong(ctx):
    a, b, c = _abc(ctx)

    def call():
        c[:] = a + b
        c[-1] += 1.0  # one element off: a plausible indexing bug

    return call


@implementation("vector_add", "fault", "wrong_after_first")
def wrong_after_first(ctx):
    a, b, c = _abc(ctx)
    calls = [0]

    def call():
        calls[0] += 1
        c[:] = a + b if calls[0] == 1 else a - b

    return call


@implementation("vector_add", "fault", "raises")
def raises(ctx):
    def call():
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS (injected)")

    return call


@implementation("vector_add", "fault", "fails_to_compile")
def fails_to_compile(ctx):
    raise SyntaxError("kernel source does not compile (injected)")


@implementation("vector_add", "fault", "segfault")
def segfault(ctx):
    a, b, c = _abc(ctx)

    def call():
        if ctx.case.size == BAD_SIZE:
            os.kill(os.getpid(), signal.SIGSEGV)
        c[:] = a + b

    return call


@implementation("vector_add", "fault", "hang")
def hang(ctx):
    a, b, c = _abc(ctx)

    def call():
        if ctx.case.size == BAD_SIZE:
            time.sleep(3600)
        c[:] = a + b

    return call
