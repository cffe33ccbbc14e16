"""The CUDA driver API's allocations counted around one call (:mod:`gpubench.memory`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.memory import Probe

#: the driver API's allocation functions (size first) and frees (pointer first)
DRIVER_ALLOCS = ("cuMemAlloc", "cuMemAllocAsync", "cuMemAllocManaged")
DRIVER_FREES = ("cuMemFree", "cuMemFreeAsync")


class DriverProbe(Probe):
    """CUDA Python: ``cuda.bindings.driver``'s allocations and frees during the call
    (the row's resident part is its inputs' and outputs' sizes: the driver's only count
    is the whole device's)."""

    meter = "cuda_driver_hook"
    counts_build = False

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        from cuda.bindings import driver

        self.driver = driver

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        drv = self.driver
        sizes: dict[int, int] = {}
        live = high = 0

        def alloc(fn: Callable[..., Any]) -> Callable[..., Any]:
            def counted(size: int, *args: Any) -> Any:
                nonlocal live, high
                out = fn(size, *args)
                err, *rest = out
                if int(err) == 0 and rest:
                    sizes[int(rest[0])] = int(size)
                    live += int(size)
                    high = max(high, live)
                return out
            return counted

        def free(fn: Callable[..., Any]) -> Callable[..., Any]:
            def counted(ptr: Any, *args: Any) -> Any:
                nonlocal live
                out = fn(ptr, *args)
                live -= sizes.pop(int(ptr), 0)
                return out
            return counted

        originals = {n: getattr(drv, n) for n in DRIVER_ALLOCS + DRIVER_FREES
                     if hasattr(drv, n)}
        for n, fn in originals.items():
            setattr(drv, n, alloc(fn) if n in DRIVER_ALLOCS else free(fn))
        try:
            result = call()
            self.wait(result)
        finally:
            for n, fn in originals.items():
                setattr(drv, n, fn)
        return result, high
