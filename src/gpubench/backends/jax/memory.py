"""JAX's device memory statistics read around one call (:mod:`gpubench.memory`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.memory import NotMeasured, Probe

#: the granularity of JAX's pads (:meth:`JaxProbe.pad`)
PAD_UNIT = 1 << 20


class PadChunks:
    """A pad's arrays, deleted together."""

    def __init__(self) -> None:
        self.arrays: list[Any] = []

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays)

    def delete(self) -> None:
        for array in self.arrays:
            array.delete()
        self.arrays = []


class JaxProbe(Probe):
    meter = "jax_peak_bytes_in_use"

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self.device = backend._device
        self.jax = backend._jax

    def stats(self) -> dict[str, int]:
        stats = self.device.memory_stats() if hasattr(self.device, "memory_stats") else None
        if not stats or "peak_bytes_in_use" not in stats or "bytes_in_use" not in stats:
            raise NotMeasured(f"JAX's {self.device} reports no peak_bytes_in_use")
        return stats

    def in_use(self) -> int:
        return int(self.stats()["bytes_in_use"])

    def pad(self, nbytes: int) -> PadChunks | None:
        """At least ``nbytes`` of device memory (less than :data:`PAD_UNIT` more) held
        until deleted, or None where it cannot be had. Made of power-of-two multiples of
        the unit: each new array shape costs JAX a compile (35-40 ms on this project's
        CPU), and with one pad of the exact size per row the memory stage took the H100
        suite's JAX step 22-27 s (about 60 ms a row) of its 170-250 s;
        chunks reuse a few dozen shapes at most. A pad larger than the gap to the mark
        reads the same: the call's peak is taken above the floor read after it."""
        chunks = PadChunks()
        try:
            import jax.numpy as jnp

            units = max(1, -(-int(nbytes) // PAD_UNIT))
            with self.jax.default_device(self.device):
                for bit in range(units.bit_length()):
                    if units >> bit & 1:
                        chunks.arrays.append(jnp.zeros((PAD_UNIT << bit,), dtype=jnp.uint8))
            for chunk in chunks.arrays:
                chunk.block_until_ready()
            return chunks
        except Exception:  # noqa: BLE001 - out of memory: the unpadded rule applies
            chunks.delete()
            return None

    def peak(self, call: Callable[[], Any]) -> tuple[Any, int]:
        try:
            return self.read(call, padded=True)
        except NotMeasured:
            raise
        except Exception:  # noqa: BLE001 - the pad and the call did not fit together
            return self.read(call, padded=False)

    def read(self, call: Callable[[], Any], padded: bool) -> tuple[Any, int]:
        s = self.stats()
        pad = None
        if padded and s["peak_bytes_in_use"] > s["bytes_in_use"]:
            pad = self.pad(s["peak_bytes_in_use"] - s["bytes_in_use"])
        try:
            s = self.stats()
            floor, mark = int(s["bytes_in_use"]), int(s["peak_bytes_in_use"])
            result = call()
            self.wait(result)
            after = int(self.stats()["peak_bytes_in_use"])
        finally:
            if pad is not None:
                pad.delete()
        if after > mark:
            return result, after - floor
        if floor >= mark:  # the bytes in use never went above where they started
            return result, 0
        raise NotMeasured(
            f"JAX keeps one peak_bytes_in_use per process and has no reset: an earlier "
            f"high-water mark ({mark} bytes) hides this call's, and no pad of "
            f"{mark - floor} bytes could be allocated (or the call did not fit beside "
            "it) to lift the bytes in use to that mark")
