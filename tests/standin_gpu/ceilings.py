"""The stand-in GPU's ceilings: its copy and its GEMMs, through the toolkit's timers."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.backends.hooks import DeviceCeilings
from gpubench.ceilings import MoreCopies, best_copy, best_l2_copy
from gpubench.timing import median_time
from standin_gpu.device import device_empty, host_events


def standin_ceilings(copy_bytes: int, gemm_n: int, more_copies: MoreCopies
                     ) -> dict[str, Any]:
    ev = host_events()
    src = device_empty(copy_bytes // 4, np.float32)
    src[...] = 1.0
    dst = device_empty(copy_bytes // 4, np.float32)
    out: dict[str, Any] = {"measured_with": "standin_gpu 0.1"}
    t = median_time(ev.time, lambda: np.copyto(dst, src), 5)
    copies, l2 = more_copies(copy_bytes, 0)
    best_copy(out, {"np.copyto (stand-in)": 2 * copy_bytes / t / 1e9, **copies})
    best_l2_copy(out, l2)
    for dtype, key in ((np.float32, "sgemm_gflops"), (np.float64, "dgemm_gflops")):
        a = np.ones((gemm_n, gemm_n), dtype=dtype)
        t = median_time(ev.time, lambda a=a: a @ a, 3)
        out[key] = 2 * gemm_n**3 / t / 1e9
    return out


def standin_steady_copy(elements: int) -> tuple[Any, Any]:
    """One stand-in device copy of ``elements`` float32 (the wait: nothing to wait for)."""
    src = device_empty(elements, np.float32)
    src[...] = 1.0
    dst = device_empty(elements, np.float32)
    return (lambda: np.copyto(dst, src)), (lambda: None)


class StandinCeilings(DeviceCeilings):
    """The probe's ceilings and energy copy through the stand-in."""

    @classmethod
    def measure_ceilings(cls, copy_bytes: int, gemm_n: int, transfer_bytes: list[int],
                         more_copies: MoreCopies) -> dict[str, Any]:
        return standin_ceilings(copy_bytes, gemm_n, more_copies)

    steady_copy = staticmethod(standin_steady_copy)
