"""JAX through XLA. float64 is switched on, so float64 rows are really float64."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.backends.base import Backend, Unavailable


class JaxBase(Backend):
    framework = "jax"
    platform = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        try:
            import jax
        except Exception as exc:
            raise Unavailable(f"import jax failed: {type(exc).__name__}: {exc}") from exc
        # Without x64, jnp silently computes float64 requests in float32.
        jax.config.update("jax_enable_x64", True)
        try:
            self._device = jax.devices(self.platform)[0]
        except RuntimeError as exc:
            raise Unavailable(f"JAX has no {self.platform} device: {exc}") from exc
        jax.config.update("jax_default_device", self._device)
        self._jax = jax
        import jaxlib

        return {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                "jax_device": str(self._device)}

    def device_name(self) -> str:
        if self.platform == "cpu":
            return super().device_name()
        return str(getattr(self._device, "device_kind", self._device))

    def to_device(self, array: np.ndarray) -> Any:
        return self._jax.device_put(array, self._device).block_until_ready()

    def to_host(self, value: Any) -> Any:
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        # JAX arrays are immutable: implementations return fresh results instead.
        return None

    def poison(self, buffer: Any) -> None:
        return None

    def block(self, result: Any) -> None:
        # Dispatch is asynchronous even on the CPU: wait for every leaf.
        self._jax.block_until_ready(result)


class JaxCPU(JaxBase):
    device = "cpu"
    platform = "cpu"


class JaxGPU(JaxBase):
    """JAX on the first CUDA device.

    JAX has no public device-event API, so a sample is a host clock around the call
    and ``block_until_ready``: a synchronised host timing (timer ``perf_counter+sync``),
    which adds the dispatch and wake-up cost (a few microseconds) to every sample.
    """

    device = "gpu"
    platform = "gpu"
    timer = "perf_counter+sync"
    supports_cold = True

    def start(self, threads: int) -> dict[str, str]:
        versions = super().start(threads)
        import jax.numpy as jnp

        from gpubench.backends.cuda_common import FLUSH_BYTES

        self._scratch = jnp.zeros(FLUSH_BYTES // 4, dtype=jnp.float32)
        self._touch = self._jax.jit(lambda x: x + 1.0)
        self._touch(self._scratch).block_until_ready()
        return versions

    def flush_cache(self) -> None:
        self._touch(self._scratch).block_until_ready()

    def free_memory(self) -> int | None:
        stats = getattr(self._device, "memory_stats", lambda: None)() or {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
        return None
