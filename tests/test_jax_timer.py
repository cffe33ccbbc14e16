"""JAX on GPUs is timed through CUPTI where the timed work is kernels, and on the host
clock otherwise. The CUPTI hooks are faked here (they need a GPU); the JAX code runs on
the CPU device."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from gpubench.backends.jax.adapter import JaxGPU  # noqa: E402
from gpubench.harness import Settings, measure  # noqa: E402
from gpubench.spec import Case, get_kernel, implementations  # noqa: E402


class FakeCupti:
    """Two kernels of 0.5 and 0.25 ms per call, as jaxlib's hooks report them."""

    def __init__(self, kernels=(("fusion_1", 0.5), ("fusion_2", 0.25))):
        self.kernels = list(kernels)
        self.armed = 0
        self.attached = False

    def _cupti_init(self):
        self.armed += 1
        self.attached = True

    def _cupti_get_timings(self, finalize):
        assert self.armed, "timings read without init"
        self.armed -= 1
        if finalize:
            self.attached = False
        return list(self.kernels)


def jax_gpu_on_cpu(hooks) -> JaxGPU:
    """A JaxGPU whose device is JAX's CPU device: every code path but the GPU itself."""
    jax.config.update("jax_enable_x64", True)
    b = JaxGPU()
    b._jax = jax
    b._device = jax.devices("cpu")[0]
    b._scratch = jax.numpy.zeros(16)
    b._touch = jax.jit(lambda x: x + 1.0)
    b._cupti = hooks
    return b


def test_device_resident_kernels_are_timed_by_cupti():
    backend = jax_gpu_on_cpu(FakeCupti())
    spec = get_kernel("vector_add")
    case = Case("vector_add", "default", 4096, "float64", {})
    impl = next(i for i in implementations("vector_add", "jax", "gpu") if i.name == "jit")
    inputs = spec.make_inputs(case, np.random.default_rng(0))
    m = measure(spec, impl, case, backend, Settings(min_samples=5, max_time_s=0.01), inputs,
                spec.reference(case, inputs))
    assert m.fields["status"] == "ok", m.fields
    assert m.fields["timer"] == "cupti_kernels"
    assert m.samples and all(s == pytest.approx(0.75e-3) for s in m.samples)
    # the first call (compilation included) is the host's wait, not a CUPTI sum
    assert m.fields["first_call_s"] != pytest.approx(0.75e-3)


@pytest.mark.parametrize("kernel", ["transfer", "launch_overhead", "interop"])
def test_work_that_is_not_all_kernels_keeps_the_host_clock(kernel):
    backend = jax_gpu_on_cpu(FakeCupti())
    assert backend.device_timer(get_kernel(kernel))[0] == "perf_counter+sync"
    _, seconds = backend.device_timer(get_kernel(kernel))[1](lambda: jax.numpy.ones(3) + 1)
    assert seconds != pytest.approx(0.75e-3)


def test_without_hooks_everything_is_host_timed():
    backend = jax_gpu_on_cpu(None)
    assert backend.device_timer(get_kernel("vector_add"))[0] == "perf_counter+sync"


def test_a_call_without_kernels_is_an_error_not_a_zero():
    backend = jax_gpu_on_cpu(FakeCupti(kernels=()))
    _, timed = backend.device_timer(get_kernel("vector_add"))
    with pytest.raises(RuntimeError, match="no kernel"):
        timed(lambda: jax.numpy.ones(3))


def test_host_timed_work_runs_with_cupti_detached():
    """CUPTI's tracing adds to every launch: host-timed rows must not carry it."""
    hooks = FakeCupti()
    backend = jax_gpu_on_cpu(hooks)
    _, timed = backend.device_timer(get_kernel("vector_add"))
    timed(lambda: jax.numpy.ones(3) + 1)
    assert hooks.attached
    assert backend.device_timer(get_kernel("launch_overhead"))[0] == "perf_counter+sync"
    assert not hooks.attached
    _, timed = backend.device_timer(get_kernel("vector_add"))
    timed(lambda: jax.numpy.ones(3) + 1)
    assert hooks.attached
