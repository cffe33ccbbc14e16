"""Numba's memory manager counted around one call (:mod:`gpubench.memory`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.memory import LiveBytes, NotMeasured, Probe


def _numba_context() -> Any:
    from gpubench.backends.numba.gpu import import_cuda

    return import_cuda().current_context()


class NumbaProbe(Probe):
    """Numba counts no bytes in use of its own: only the call's allocations are seen
    (the row's resident part is its inputs' and outputs' sizes)."""

    meter = "numba_memalloc_hook"
    counts_build = False

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        if getattr(backend, "_sim", False):
            raise NotMeasured("Numba's CUDA simulator has no device memory")
        self.ctx = _numba_context()

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        mm = self.ctx.memory_manager
        counter = LiveBytes()
        names = [n for n in ("memalloc", "memallocmanaged") if hasattr(mm, n)]
        own = {n: n in vars(mm) for n in names}
        originals = {n: getattr(mm, n) for n in names}
        for n in names:
            setattr(mm, n, counter.wrap(originals[n], lambda mem, size: (
                mem, int(getattr(mem, "size", size) or size))))
        try:
            result = call()
            self.wait(result)
        finally:
            for n in names:
                if own[n]:
                    setattr(mm, n, originals[n])
                else:
                    delattr(mm, n)
        return result, counter.high
