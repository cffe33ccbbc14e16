"""What every CUDA backend shares: the cold-cache flush size and device checks, and the
facts of the backends that hold their own device buffers (:class:`CudaBuffersBackend`)."""

from __future__ import annotations

from gpubench.backends.base import Backend
from gpubench.backends.facts import Facts

#: Bytes written to evict L2 before a cold sample: 4x the largest L2 we target
#: (H200: 60 MB, H100: 50 MB), so no input line survives.
FLUSH_BYTES = 256 * 2**20


def no_gpu_reason(exc: BaseException) -> str:
    """A one-line reason for the report when a framework finds no usable GPU."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return f"no usable CUDA GPU: {text}"[:500]

#: Clock cycles of the busy kernel queued before a hot sample (about 100 us at 2 GHz):
#: longer than any framework's Python launch path, short next to the samples' budget.
HIDE_LAUNCH_CYCLES = 200_000

#: CUDA C of that busy kernel, for backends that compile their own (CuPy, CUDA Python).
SPIN_KERNEL = r"""
extern "C" __global__ void gpubench_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""


def nvml_uuid(physical: str) -> str:
    """UUID of a GPU named by index or UUID, through NVML; '' if NVML cannot tell."""
    if physical.startswith(("GPU-", "MIG-")):
        return physical
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(int(physical)))
            return uuid.decode() if isinstance(uuid, bytes) else str(uuid)
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML: the framework's own answer is used
        return ""


def capture_profile(on: bool) -> None:
    """Start (or stop) the profiler's capture range (``ncu --profile-from-start off``)
    around the profiled calls: CUDA's runtime API, which serves every GPU framework here
    (a framework's own profiler switch would reach only its own context)."""
    from cuda.bindings import runtime as rt

    (rt.cudaProfilerStart if on else rt.cudaProfilerStop)()


def selection_uuid(selection: object) -> str:
    """NVML's UUID of an MPI rank's selected GPU ('' without a selection)."""
    physical = getattr(selection, "physical", None)
    return nvml_uuid(str(physical)) if physical is not None else ""


#: what the backends that hold their own device buffers share; each adds its own with
#: :meth:`~gpubench.backends.facts.Facts.but`
CUDA_BUFFERS = Facts(timer="cuda_event", supports_cold=True, mpi=True, host_memory=False,
                     direct_capable=True)


class CudaBuffersBackend(Backend):
    """The backends CuPy, Numba CUDA and CUDA Python share: GPU rows timed with CUDA
    events, a cold-cache mode, and MPI ranks whose device buffers a CUDA-aware MPI takes
    directly (:data:`CUDA_BUFFERS`)."""

    device = "gpu"
    facts = CUDA_BUFFERS
