"""CuPy's memory pool read around one call (:mod:`gpubench.memory`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.memory import Probe


class CupyProbe(Probe):
    meter = "cupy_pool_used_bytes"

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self.cupy = backend._cupy
        self.pool = self.cupy.get_default_memory_pool()

    def in_use(self) -> int:
        return int(self.pool.used_bytes())

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        self.cupy.cuda.runtime.deviceSynchronize()
        start = high = self.in_use()
        pool = self.pool

        def malloc(size: int) -> Any:
            nonlocal high
            mem = pool.malloc(size)
            high = max(high, int(pool.used_bytes()))
            return mem

        with self.cupy.cuda.using_allocator(malloc):
            result = call()
            self.wait(result)
        return result, max(0, high - start)
