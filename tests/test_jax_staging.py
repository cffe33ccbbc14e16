"""Issue 27: JAX's results come back for the correctness checks through one reused
page-locked buffer (``cuMemcpyDtoH`` from the array's device pointer), as CuPy's, CUDA
Python's, Numba's and PyTorch's do; ``np.asarray`` into fresh pageable memory made the
H100 JAX step's checks three times as slow a row. Run here on JAX's CPU device with a
stand-in for the CUDA driver whose copy is a real ``memmove`` from the array's buffer."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from gpubench.backends.jax_backend import Driver, JaxGPU  # noqa: E402


class StandInDriver:
    """libcuda's calls as Driver makes them: pinned memory is ordinary memory kept
    alive here, a device-to-host copy is a memmove (a CPU array's pointer is a host
    address), and ``corrupt`` flips a byte after each copy."""

    def __init__(self, corrupt: bool = False) -> None:
        self.corrupt, self.buffers, self.calls = corrupt, {}, []

        def record(name, fn):
            def call(*args):
                self.calls.append(name)
                return fn(*args)
            setattr(self, name, call)

        record("cuInit", lambda flags: 0)
        record("cuDeviceGet", lambda dev, ordinal: setattr(dev._obj, "value", ordinal) or 0)
        record("cuDevicePrimaryCtxRetain",
               lambda ctx, dev: setattr(ctx._obj, "value", 4096) or 0)
        record("cuCtxSetCurrent", lambda ctx: 0 if getattr(ctx, "value", ctx) == 4096 else 201)
        record("cuMemHostAlloc", self._alloc)
        record("cuMemFreeHost", lambda ptr: 1 if self.buffers.pop(ptr, None) is None else 0)
        record("cuMemcpyDtoH_v2", self._copy)

    def _alloc(self, pptr, nbytes, flags) -> int:
        buf = ctypes.create_string_buffer(nbytes)
        self.buffers[ctypes.addressof(buf)] = buf
        pptr._obj.value = ctypes.addressof(buf)
        return 0

    def _copy(self, dst, src, nbytes) -> int:
        ctypes.memmove(dst, src, nbytes)
        if self.corrupt:
            ctypes.memset(dst, 0x7F, 1)
        return 0


def _backend(lib: StandInDriver) -> JaxGPU:
    backend = JaxGPU.__new__(JaxGPU)
    backend._device, backend._jax = jax.devices("cpu")[0], jax
    backend._driver = Driver(0, lib=lib)
    return backend


@pytest.fixture(autouse=True)
def _x64():
    """float64 on, as the JAX backends switch it on."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def _result(n: int, dtype: str = "float32") -> jax.Array:
    """A computed JAX array, waited for as the check waits (device_sync) first."""
    rng = np.random.default_rng(7)
    x = jax.device_put(rng.standard_normal(n).astype(dtype).reshape(-1, 4),
                       jax.devices("cpu")[0])
    return (x * 3 + 1).block_until_ready()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_big_results_come_back_through_the_pinned_buffer(dtype):
    lib = StandInDriver()
    backend = _backend(lib)
    value = _result(1 << 19, dtype)  # 2-8 MiB: over staging_min_bytes
    host = backend.to_host_for_check(value)
    np.testing.assert_array_equal(host, np.asarray(value))
    assert host.shape == value.shape and host.dtype == value.dtype
    assert lib.calls.count("cuMemcpyDtoH_v2") == 1 and len(lib.buffers) == 1
    # the buffer is reused, not grown, for a second result of the same size
    again = (_result(1 << 19, dtype) * 2).block_until_ready()
    np.testing.assert_array_equal(backend.to_host_for_check(again), np.asarray(again))
    assert lib.calls.count("cuMemHostAlloc") == 1 and backend._staging_verified
    # a bigger one grows it: the smaller buffer is freed once no view of it is left
    del host
    bigger = _result(1 << 20, dtype)
    np.testing.assert_array_equal(backend.to_host_for_check(bigger), np.asarray(bigger))
    assert lib.calls.count("cuMemHostAlloc") == 2 and len(lib.buffers) == 1


def test_small_results_skip_the_staging():
    lib = StandInDriver()
    value = _result(1024)
    np.testing.assert_array_equal(_backend(lib).to_host_for_check(value), np.asarray(value))
    assert "cuMemcpyDtoH_v2" not in lib.calls


def test_a_wrong_staged_copy_is_caught_and_jax_copies_from_then_on(capsys):
    lib = StandInDriver(corrupt=True)
    backend = _backend(lib)
    for _ in range(2):
        value = _result(1 << 19)
        np.testing.assert_array_equal(backend.to_host_for_check(value), np.asarray(value))
    assert lib.calls.count("cuMemcpyDtoH_v2") == 1  # tried once, then never again
    assert "differs from JAX's own copy" in backend._staging_failed
    assert capsys.readouterr().err.count("staged copy-back failed") == 1


def test_a_driver_error_names_the_call():
    lib = StandInDriver()
    lib.cuMemHostAlloc = lambda *args: 2  # CUDA_ERROR_OUT_OF_MEMORY
    with pytest.raises(RuntimeError, match="cuMemHostAlloc failed with CUresult 2"):
        Driver(0, lib=lib).pinned(1 << 20)
