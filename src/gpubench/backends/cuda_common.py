"""What every CUDA backend shares: the cold-cache flush size and device checks."""

from __future__ import annotations

#: Bytes written to evict L2 before a cold sample: 4x the largest L2 we target
#: (H200: 60 MB, H100: 50 MB), so no input line survives.
FLUSH_BYTES = 256 * 2**20


def no_gpu_reason(exc: BaseException) -> str:
    """A one-line reason for the report when a framework finds no usable GPU."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return f"no usable CUDA GPU: {text}"[:500]
