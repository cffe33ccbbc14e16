"""JAX through XLA. float64 is switched on, so float64 rows are really float64."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.backends.base import (
    FULL_PRECISION,
    REDUCIBLE_DTYPES,
    Backend,
    Facts,
    Unavailable,
)
from gpubench.backends.jax.mpi import JaxCpuMulti, JaxMulti

#: what JAX's CPU and GPU backends both declare
JAX = Facts(
    compile_cache_vars={"JAX_COMPILATION_CACHE_DIR": "jax"},  # XLA executables, autotuning
    # JAX stores every compile (its defaults keep only those over 1 s, which leaves the
    # first call of most kernels uncached) of any size
    compile_cache_settings={"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"},
    display_name="JAX", order=30, version_keys=("jax",),
    key_packages=("jax", "jaxlib", "jax-cuda*", "ml-dtypes", "numpy"),
    probe_packages=("jax", "jaxlib"), mpi=True, probe_module="jax",
    # MPI cannot receive into immutable arrays: communication is staged through host
    # buffers, on CPU ranks too
    host_memory=False,
    # sharding over several devices, and (newer JAX) shard_map
    multi_device=("jax_sharding", "jax_shard_map"))


class JaxBase(Backend):
    framework = "jax"
    facts = JAX
    multi = JaxMulti
    platform = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        try:
            import jax
        except Exception as exc:
            raise Unavailable(f"import jax failed: {type(exc).__name__}: {exc}") from exc
        # Without x64, jnp silently computes float64 requests in float32.
        jax.config.update("jax_enable_x64", True)
        # float32 products in float32: XLA's default lets a GPU round them to TF32
        jax.config.update("jax_default_matmul_precision", "highest")
        try:
            self._device = jax.devices(self.platform)[self.device_index]
        except RuntimeError as exc:
            raise Unavailable(f"JAX has no {self.platform} device: {exc}") from exc
        jax.config.update("jax_default_device", self._device)
        self._jax = jax
        import jaxlib

        return {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                "jax_device": str(self._device)}

    def compile_cache_dirs(self) -> list[Path]:
        """JAX's persistent compilation cache, where one is configured
        (``jax_compilation_cache_dir``, or the ``JAX_COMPILATION_CACHE_DIR`` it reads;
        unset by default; the benchmark step sets it, see
        :func:`gpubench.runner.step_environment`): XLA executables whose compile took at
        least ``jax_persistent_cache_min_compile_time_secs`` (1 s by default, 0 in the
        step) are stored there. A remote location (``gs://``) is not watched."""
        config = getattr(getattr(self, "_jax", None), "config", None)
        if config is None or not getattr(config, "jax_enable_compilation_cache", True):
            return []
        where = getattr(config, "jax_compilation_cache_dir", None)
        if not where or "://" in str(where):
            return []
        return [Path(os.path.expanduser(str(where)))]

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

    def matmul_precision(self, dtype: str) -> str:
        """``jax_default_matmul_precision``: "highest"/"float32" is full; any other
        (XLA's default included) lets a GPU compute float32 products in TF32."""
        if dtype not in REDUCIBLE_DTYPES or self.device == "cpu":
            return FULL_PRECISION
        level = str(self._jax.config.jax_default_matmul_precision or "default").lower()
        return FULL_PRECISION if level in ("highest", "float32") else "tf32"

    def block(self, result: Any) -> None:
        """Wait for ``result`` (dispatch is asynchronous even on the CPU). A single array
        waits through its own ``block_until_ready`` method, as a JAX user writes it: the
        module function walks the pytree first (about 0.8 µs more a call, measured on
        this project's CPU); anything else waits for every leaf."""
        wait = getattr(result, "block_until_ready", None)
        if callable(wait):
            wait()
        else:
            self._jax.block_until_ready(result)

    def uuid(self) -> str:
        if self.platform == "cpu":
            return ""
        from gpubench.backends.cuda_common import selection_uuid

        return selection_uuid(self.selection)

    # -- MPI: JAX arrays are immutable, so copies in return new arrays --------------------
    def download(self, src: Any, host: np.ndarray) -> None:
        host[...] = np.asarray(src)

    def upload(self, host: np.ndarray, dst: Any) -> Any:
        return self.to_device(host.reshape(dst.shape).astype(dst.dtype))


class JaxCPU(JaxBase):
    device = "cpu"
    platform = "cpu"
    facts = JAX.but(registry_order=3, environment="jax-cpu")
    #: several CPU "devices" for the sharding path (the XLA flag; newer JAX's option)
    multi = JaxCpuMulti


class JaxGPU(JaxBase):
    """JAX on the first CUDA device, timed on the device through CUPTI where it can be.

    JAX has no public device-event API. A host clock around the call and
    ``block_until_ready`` adds JAX's dispatch and wake-up (measured on an H100: 150-250
    µs on a 264 µs kernel, so ``x + y`` showed 55-80% of the copy ceiling while its kernel
    ran at 95%). jaxlib's CUDA plugin ships the CUPTI hooks that
    ``jax.experimental.mosaic.gpu.profiler.measure`` uses; with them a sample is the sum
    of the device durations of the kernels the call launched (timer ``cupti_kernels``):
    device clocks, like events, but without the idle gaps between kernels that events
    would include. Implementations whose timed work is not all kernels (copies:
    ``transfer``, host hand-offs, the launch latency itself) keep the host timer
    (``perf_counter+sync``), as does everything when the hooks are missing.
    """

    device = "gpu"
    platform = "gpu"
    facts = JAX.but(
        registry_order=7, environment="jax", timer="perf_counter+sync",
        # JAX has no device-wide wait: the result's, and every pending effect's
        caller_timer="perf_counter+block_until_ready",
        memory_probe="gpubench.backends.jax.memory:JaxProbe", supports_cold=True,
        # CUPTI, once let go, leaves JAX's calls slower for a while
        # (``tools/jax_detach_transient.py``, evidence/jax-sync-clock): the device
        # clock's samples come first, then the caller's rounds, after
        # ``detach_settle_s`` of untimed calls
        device_clock_apart=True)
    _cupti: Any = None
    _cupti_attached = False

    def start(self, threads: int) -> dict[str, str]:
        versions = super().start(threads)
        import jax.numpy as jnp

        from gpubench.backends.cuda_common import FLUSH_BYTES

        self._scratch = jnp.zeros(FLUSH_BYTES // 4, dtype=jnp.float32)
        self._touch = self._jax.jit(lambda x: x + 1.0)
        self._touch(self._scratch).block_until_ready()
        self._cupti = cupti_hooks()
        versions["jax_timer"] = "cupti_kernels" if self._cupti else "perf_counter+sync"
        return versions

    def device_timer(self, spec: Any) -> tuple[str, Callable[[Callable[[], Any]],
                                                        tuple[Any, float]]]:
        """CUPTI (:meth:`cupti_time_call`) for device-resident kernel work, the host
        clock (:meth:`time_call`) for anything else.

        Choosing the host clock detaches CUPTI: while attached, its kernel tracing
        adds to every launch, which is exactly what host-timed rows (launch_overhead,
        transfers, hand-offs) measure. It attaches again at the next CUPTI sample.
        """
        if self._cupti and spec.place_inputs and spec.hide_launch and not spec.host_timed:
            return "cupti_kernels", self.cupti_time_call
        self.detach_cupti()
        return self.facts.timer, self.time_call

    def device_sync(self, result: Any) -> None:
        """The caller's clock's wait: what a JAX user waits for, ``jax.block_until_ready``
        on the result (every array leaf of it), not a device-wide synchronize, which JAX
        does not have. A jitted call's kernels all run on JAX's compute stream and its
        result is ready when they are. ``effects_barrier`` is not called: on the H100 it
        added 10-55 µs a call that no JAX user pays, and no kernel here has ordered
        effects. Checked against a plain ``block_until_ready`` loop by
        ``tools/jax_sync_check.py``."""
        self.block(result)

    #: untimed calls after CUPTI is let go, before the caller's clock
    #: (``facts.device_clock_apart``)
    detach_settle_s = 0.0

    def before_caller_clock(self) -> float:
        return self.detach_settle_s if self.detach_cupti() else 0.0

    def detach_cupti(self) -> bool:
        """Let CUPTI go (its tracing slows launches; another profiler may want it);
        True if it was attached."""
        if not self._cupti_attached:
            return False
        self._cupti._cupti_init()
        self._cupti._cupti_get_timings(True)  # finalize: detach CUPTI
        self._cupti_attached = False
        return True

    def cupti_time_call(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """One sample on CUPTI: the sum of the device durations of the kernels the call
        launched (the timer ``cupti_kernels``); attaches CUPTI if it is not."""
        ext = self._cupti
        ext._cupti_init()
        self._cupti_attached = True
        try:
            result = fn()
            self.block(result)
        finally:
            timings = ext._cupti_get_timings(False)
        if not timings:
            raise RuntimeError("CUPTI saw no kernel in the call: nothing to time on the device")
        return result, sum(float(ms) for _, ms in timings) / 1e3

    def flush_cache(self) -> None:
        self._touch(self._scratch).block_until_ready()

    def free_memory(self) -> int | None:
        stats = getattr(self._device, "memory_stats", lambda: None)() or {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
        return None


def cupti_hooks() -> Any:
    """jaxlib's CUPTI kernel-timing hooks (its Mosaic GPU extension), or None.

    A private module of jaxlib, so every failure (absent, renamed, no CUPTI library)
    means "not available" and the host timer is used instead.
    """
    try:
        from jax._src.lib import mosaic_gpu
    except Exception:  # noqa: BLE001 - any import failure: the hooks are not there
        return None
    ext = getattr(mosaic_gpu, "_mosaic_gpu_ext", None)
    if ext is None or not all(hasattr(ext, n) for n in ("_cupti_init", "_cupti_get_timings")):
        return None
    return ext
