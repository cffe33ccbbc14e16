"""PyTorch's allocator read around one call (:mod:`gpubench.memory`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.memory import Probe


class TorchProbe(Probe):
    meter = "torch.cuda.max_memory_allocated"

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self.cuda = backend._torch.cuda

    def in_use(self) -> int:
        self.cuda.synchronize()
        return int(self.cuda.memory_allocated())

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        start = self.in_use()
        self.cuda.reset_peak_memory_stats()
        result = call()
        self.wait(result)
        return result, max(0, int(self.cuda.max_memory_allocated()) - start)
