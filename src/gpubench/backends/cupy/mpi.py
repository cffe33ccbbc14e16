"""What the MPI jobs need of CuPy: NCCL (its unique id travels by MPI), one process
driving several GPUs, and copies between two GPUs (:mod:`gpubench.mpi.jobs`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.backends.hooks import MultiDevice

#: one NCCL communicator per MPI communicator, kept for the step's later items
_NCCL_COMMS: dict[int, Any] = {}


def nccl_communicator(ctx: Any) -> Any:
    """CuPy's NCCL communicator over all ranks; the unique id travels by MPI broadcast,
    which is all NCCL needs from MPI (no CUDA-aware MPI required).

    Created once per step and reused by every message size: its set-up (a second or
    more per communicator on 4 GPUs) is not what the sweep measures and dominated it.
    Every rank runs the same items in the same order, so all hit or miss together.
    """
    key = id(ctx.comm)
    if key in _NCCL_COMMS:
        return _NCCL_COMMS[key]
    from cupy.cuda import nccl

    if not nccl.available:
        raise RuntimeError("NCCL is not available to CuPy (install nvidia-nccl-cu13)")
    uid = ctx.comm.bcast(nccl.get_unique_id() if ctx.rank == 0 else None, root=0)
    _NCCL_COMMS[key] = nccl.NcclCommunicator(ctx.size, uid, ctx.rank)
    return _NCCL_COMMS[key]


def nccl_send_recv(comm: Any, buf: Any, peer: int, sending: bool) -> None:
    """One NCCL send or receive of a CuPy byte buffer on the current stream, waited on."""
    import cupy
    from cupy.cuda import nccl

    stream = cupy.cuda.get_current_stream()
    if sending:
        comm.send(buf.data.ptr, buf.size, nccl.NCCL_UINT8, peer, stream.ptr)
    else:
        comm.recv(buf.data.ptr, buf.size, nccl.NCCL_UINT8, peer, stream.ptr)
    stream.synchronize()


def nccl_allreduce(ctx: Any, send: Any, recv: Any) -> Callable[[], None]:
    """CuPy's NCCL allreduce, out of place, on the current stream (CuPy ranks only)."""
    from cupy.cuda import nccl

    comm = nccl_communicator(ctx)
    import cupy

    def call() -> None:
        stream = cupy.cuda.get_current_stream()
        comm.allReduce(send.data.ptr, recv.data.ptr, send.size, nccl.NCCL_FLOAT32,
                       nccl.NCCL_SUM, stream.ptr)
        stream.synchronize()

    return call


def cupy_devices(_ctx: Any, parts: list[np.ndarray]) -> Callable[[], float]:
    """CuPy: one device context per part; every device's dot queued before any result is
    read back (each ``.get()`` waits for its own device only)."""
    import cupy

    have = cupy.cuda.runtime.getDeviceCount()
    if have < len(parts):
        raise RuntimeError(f"{len(parts)} GPUs needed, {have} visible")
    on_device = []
    for d, part in enumerate(parts):
        with cupy.cuda.Device(d):
            on_device.append(cupy.asarray(part))

    def step() -> float:
        partial = []
        for d, part in enumerate(on_device):
            with cupy.cuda.Device(d):
                partial.append(cupy.vdot(part, part))
        total = 0.0
        for d, p in enumerate(partial):
            with cupy.cuda.Device(d):
                total += float(p.get())
        return total

    return step


#: the ``multi_gpu`` job's modes (:meth:`~gpubench.backends.hooks.MultiDevice.steps`)
STEPS = {"cupy_devices": cupy_devices}


def peer_copy_setup(src: int, dst: int, pattern: np.ndarray
                    ) -> tuple[Callable[[], None], Callable[[], bool], bool]:
    """The ``peer_copy`` job's copy from GPU ``src`` to GPU ``dst``
    (``cudaMemcpyPeerAsync`` on a stream of its own, peer access enabled both ways where
    the GPUs allow it): (one copy, waited on; whether ``dst`` holds ``pattern``; whether
    the GPUs have peer access)."""
    import cupy

    nbytes = int(pattern.nbytes)
    runtime = cupy.cuda.runtime
    have = runtime.getDeviceCount()
    if max(src, dst) >= have:
        raise RuntimeError(f"GPUs {src} and {dst} needed, {have} visible")
    peer = bool(runtime.deviceCanAccessPeer(src, dst) and runtime.deviceCanAccessPeer(dst, src))
    for a, b in ((src, dst), (dst, src)):
        if not peer:
            break
        with cupy.cuda.Device(a):
            try:
                runtime.deviceEnablePeerAccess(b)
            except runtime.CUDARuntimeError as exc:  # enabled by an earlier item
                if "AlreadyEnabled" not in str(exc):
                    raise
    with cupy.cuda.Device(dst):
        out = cupy.zeros(nbytes, cupy.uint8)
    with cupy.cuda.Device(src):
        buf = cupy.asarray(pattern)
        stream = cupy.cuda.Stream(non_blocking=True)
    for d in (src, dst):  # the fill and the upload ran on other streams than the copy's
        cupy.cuda.Device(d).synchronize()

    def copy() -> None:
        with cupy.cuda.Device(src):
            runtime.memcpyPeerAsync(out.data.ptr, dst, buf.data.ptr, src, nbytes, stream.ptr)
            stream.synchronize()

    def received() -> bool:
        with cupy.cuda.Device(dst):
            return bool(np.array_equal(cupy.asnumpy(out), pattern))

    return copy, received, peer


class CupyMulti(MultiDevice):
    """CuPy's several-GPU step, its copies between GPUs and its NCCL."""

    @classmethod
    def steps(cls) -> dict[str, Callable[[Any, list[np.ndarray]], Callable[[], float]]]:
        return STEPS

    nccl_communicator = staticmethod(nccl_communicator)
    nccl_send_recv = staticmethod(nccl_send_recv)
    nccl_allreduce = staticmethod(nccl_allreduce)
    peer_copy_setup = staticmethod(peer_copy_setup)
