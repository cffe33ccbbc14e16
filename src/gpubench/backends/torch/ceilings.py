"""The GPU's ceilings measured through PyTorch: copies, GEMMs (TF32 off) and the bus."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gpubench.backends.hooks import DeviceCeilings
from gpubench.backends.torch.events import torch_events
from gpubench.ceilings import (
    L2_COPY_BATCH,
    MoreCopies,
    batch_seconds,
    best_copy,
    best_l2_copy,
    l2_footprints,
    link_rates,
    pageable_rates,
)
from gpubench.timing import median_time


def torch_ceilings(copy_bytes: int, gemm_n: int, transfer_bytes: Sequence[int],
                   more_copies: MoreCopies) -> dict[str, Any]:
    """The GPU's ceilings through PyTorch (:func:`gpubench.ceilings.gpu_ceilings`), its
    copy methods with the other frameworks' (``more_copies``) beside its own."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    n = copy_bytes // 4
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    ev = torch_events(torch)

    props = torch.cuda.get_device_properties(0)
    l2_bytes = int(getattr(props, "L2_cache_size", 0))
    out: dict[str, Any] = {"measured_with": f"torch {torch.__version__}"}
    t = median_time(ev.time, lambda: dst.copy_(src), 20)
    copies = {"torch.Tensor.copy_": 2 * copy_bytes / t / 1e9}
    more, l2 = more_copies(copy_bytes, l2_bytes)
    copies.update(more)
    best_copy(out, copies)

    def busy() -> None:
        dst.copy_(src)

    busy_s = t
    for footprint in l2_footprints(l2_bytes):
        small = torch.rand(footprint // 8, device=dev)
        into = torch.empty_like(small)
        t, ahead = batch_seconds(ev, lambda a=into, b=small: a.copy_(b), L2_COPY_BATCH, 5,
                                 busy, busy_s)
        l2[("torch.Tensor.copy_", footprint)] = (footprint / t / 1e9, ahead)
        del small, into
    best_l2_copy(out, l2)
    for dtype, key in ((torch.float32, "sgemm_gflops"), (torch.float64, "dgemm_gflops")):
        a = torch.rand(gemm_n, gemm_n, device=dev, dtype=dtype)
        b = torch.rand(gemm_n, gemm_n, device=dev, dtype=dtype)
        c = torch.empty_like(a)
        t = median_time(ev.time, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), 10)
        out[key] = 2 * gemm_n**3 / t / 1e9
        del a, b, c
    link_n = max([n, *(b // 4 for b in transfer_bytes)])
    pinned = torch.empty(link_n, dtype=torch.float32).pin_memory()
    pageable = torch.empty(link_n, dtype=torch.float32)
    pinned.fill_(1.0)
    pageable.fill_(1.0)
    on_dev = dst if link_n <= n else torch.empty(link_n, device=dev)
    t = median_time(ev.time, lambda: dst.copy_(pinned[:n], non_blocking=True), 10)
    out["h2d_pinned_gbps"] = copy_bytes / t / 1e9
    t = median_time(ev.time, lambda: dst.copy_(pageable[:n]), 5)
    out["h2d_pageable_gbps"] = copy_bytes / t / 1e9

    def copier(host: Any, non_blocking: bool) -> Callable[[str, int], Callable[[], Any]]:
        def copy(direction: str, nbytes: int) -> Callable[[], Any]:
            h, d = host[:nbytes // 4], on_dev[:nbytes // 4]
            if direction == "h2d":
                return lambda: d.copy_(h, non_blocking=non_blocking)
            return lambda: h.copy_(d, non_blocking=non_blocking)
        return copy

    out["pinned_gbps"], out["pinned_queued"] = link_rates(
        ev, copier(pinned, True), transfer_bytes, busy, busy_s)
    out["pageable_gbps"] = pageable_rates(ev, copier(pageable, False), transfer_bytes)
    out.update(gpu_name=props.name, sm_count=props.multi_processor_count, l2_bytes=l2_bytes)
    return out


def torch_steady_copy(elements: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """One PyTorch device copy of ``elements`` float32, and the wait for the device."""
    import torch

    src = torch.rand(elements, device="cuda")
    dst = torch.empty_like(src)
    return (lambda: dst.copy_(src)), torch.cuda.synchronize


class TorchCeilings(DeviceCeilings):
    """The GPU measured through PyTorch (its own copy methods: none beside the
    measuring framework's)."""

    measure_ceilings = staticmethod(torch_ceilings)
    steady_copy = staticmethod(torch_steady_copy)
