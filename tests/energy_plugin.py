"""A stand-in CPU framework with two implementations of one kernel and a simulated
energy counter, for ``energy: best`` through the real runner and worker
(tests/test_energy.py).

Loaded through GPUBENCH_PLUGINS=energy_plugin. Backend ``ebest-cpu`` runs host NumPy;
``fast`` is a plain add, ``slow`` the same add and a 0.2 ms wait. The worker's CPU
energy meter is replaced by a counter that moves every 10 ms by 100 W's worth. With
``GPUBENCH_TEST_DIE_ON_REBUILD`` set, a second build of ``fast`` in one process ends
the process (a crash while its energy is read again).
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from gpubench import energy
from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend
from gpubench.spec import implementation

BACKENDS["ebest-cpu"] = "energy_plugin:EbestCPU"


class SimCounter(energy.Meter):
    name = "simulated"
    period_s = 0.01

    def __init__(self, watts: float = 100.0) -> None:
        self.watts, self.t0 = watts, time.perf_counter()

    def read(self) -> float:
        time.sleep(1e-4)
        return math.floor((time.perf_counter() - self.t0) / self.period_s) * (
            self.period_s * self.watts)


energy._METERS["cpu"] = SimCounter()


class EbestCPU(Backend):
    framework = "ebest"
    device = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        return {"ebest": "1.0"}


_builds: dict[str, int] = {}


def _add(ctx, wait_s: float):
    a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

    def call():
        np.add(a, b, out=c)
        if wait_s:
            end = time.perf_counter() + wait_s
            while time.perf_counter() < end:
                pass

    return call


@implementation("vector_add", "ebest", "fast")
def fast(ctx):
    _builds["fast"] = _builds.get("fast", 0) + 1
    if (os.environ.get("GPUBENCH_TEST_DIE_ON_REBUILD") and ctx.case.size > 1024
            and _builds["fast"] > 2):
        os._exit(3)
    return _add(ctx, 0.0)


@implementation("vector_add", "ebest", "slow")
def slow(ctx):
    return _add(ctx, 2e-4)
