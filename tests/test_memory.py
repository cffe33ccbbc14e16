"""Peak device memory per row (:mod:`gpubench.memory`): each framework's probe on a
stand-in of its allocator, the multiple, the CPU rows' empty columns, the harness's
untimed pass, and the report's column and sentence."""

from __future__ import annotations

import contextlib
import importlib
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_data import row, write_set

from gpubench import memory, results
from gpubench.backends import Facts, backend_classes, find_backend_class
from gpubench.backends.cuda_python import memory as driver_memory
from gpubench.backends.jax import memory as jax_memory
from gpubench.backends.numba import memory as numba_memory
from gpubench.backends.numpy.adapter import NumpyCPU
from gpubench.harness import Settings, measure
from gpubench.report import cells as report_cells
from gpubench.report import load_inputs, matrix
from gpubench.spec import Case, Implementation, get_kernel

DATA = memory.RowData(inputs=600, outputs=400, resident=1000)


def gpu_backend(backend_id: str = "torch-gpu", **attrs: Any) -> SimpleNamespace:
    """A stand-in of a GPU backend, naming the probe its real class names."""
    cls = find_backend_class(backend_id)
    b = SimpleNamespace(device="gpu", backend_id=backend_id,
                        facts=cls.facts if cls else Facts(),
                        device_sync=lambda result: None, **attrs)
    return b


def test_every_gpu_backend_names_a_probe_and_no_cpu_backend_does() -> None:
    """The project's backends (a test's stand-in plugin, loaded earlier in the same
    process, may measure no memory)."""
    for backend_id, cls in backend_classes().items():
        if not cls.__module__.startswith("gpubench."):
            continue
        if cls.device == "gpu":
            module, _, name = cls.facts.memory_probe.partition(":")
            probe = getattr(importlib.import_module(module), name)
            assert issubclass(probe, memory.Probe) and probe.meter, backend_id
        else:
            assert cls.facts.memory_probe == "", backend_id


# -- PyTorch ----------------------------------------------------------------------------

class FakeTorchCuda:
    """torch.cuda's allocator counters: bytes allocated and a resettable peak."""

    def __init__(self, allocated: int) -> None:
        self.allocated = allocated
        self.high = allocated + 10_000  # an earlier row's peak, before any reset

    def synchronize(self) -> None:
        pass

    def memory_allocated(self) -> int:
        return self.allocated

    def max_memory_allocated(self) -> int:
        return self.high

    def reset_peak_memory_stats(self) -> None:
        self.high = self.allocated

    def alloc(self, n: int) -> None:
        self.allocated += n
        self.high = max(self.high, self.allocated)

    def free(self, n: int) -> None:
        self.allocated -= n


def torch_call(cuda: FakeTorchCuda, temp: int, out: int) -> Any:
    def call() -> str:
        cuda.alloc(temp)   # a temporary (autograd's saved tensors) ...
        cuda.alloc(out)    # ... the new result ...
        cuda.free(temp)    # ... the temporary freed before returning
        return "result"
    return call


@pytest.mark.parametrize("temp", [0, 5000, 20_000])
def test_torch_probe_reads_the_peak_since_its_reset(temp: int) -> None:
    cuda = FakeTorchCuda(allocated=3000)
    backend = gpu_backend(_torch=SimpleNamespace(cuda=cuda))
    base = memory.baseline(backend)
    assert base == 3000
    cuda.alloc(1000)  # the row's inputs and outputs
    f = memory.peak_fields(torch_call(cuda, temp, 0), backend, DATA, base)
    # the earlier peak (10,000 above) is not this call's: the probe resets it
    assert f["memory_call_bytes"] == temp
    assert f["memory_peak_bytes"] == 1000 + temp
    assert f["memory_multiple"] == pytest.approx((1000 + temp) / 1000)
    assert f["memory_meter"] == "torch.cuda.max_memory_allocated"
    assert f["memory_reason"] == ""


def test_what_the_build_keeps_on_the_device_counts_too() -> None:
    cuda = FakeTorchCuda(allocated=0)
    backend = gpu_backend(_torch=SimpleNamespace(cuda=cuda))
    base = memory.baseline(backend)
    cuda.alloc(1000 + 4000)  # inputs and outputs, and a workspace the builder allocated
    f = memory.peak_fields(torch_call(cuda, 0, 0), backend, DATA, base)
    assert f["memory_peak_bytes"] == 5000 and f["memory_multiple"] == 5.0


def test_without_a_baseline_the_data_sizes_stand_in() -> None:
    cuda = FakeTorchCuda(allocated=7_000_000)  # other rows' leftovers: not this row's
    backend = gpu_backend(_torch=SimpleNamespace(cuda=cuda))
    f = memory.peak_fields(torch_call(cuda, 500, 0), backend, DATA, None)
    assert f["memory_peak_bytes"] == 1000 + 500


# -- CuPy -------------------------------------------------------------------------------

class FakePool:
    def __init__(self, used: int) -> None:
        self.used = used

    def used_bytes(self) -> int:
        return self.used

    def malloc(self, size: int) -> Any:
        self.used += size
        pool = self

        class Mem:
            def free(self) -> None:
                pool.used -= size
        return Mem()


def fake_cupy(pool: FakePool) -> SimpleNamespace:
    """CuPy's allocator switch: arrays allocate through the current allocator."""
    state: dict[str, Any] = {"alloc": pool.malloc}

    @contextlib.contextmanager
    def using_allocator(fn: Any) -> Any:
        old, state["alloc"] = state["alloc"], fn
        try:
            yield
        finally:
            state["alloc"] = old

    cuda = SimpleNamespace(using_allocator=using_allocator,
                           runtime=SimpleNamespace(deviceSynchronize=lambda: None))
    return SimpleNamespace(cuda=cuda, get_default_memory_pool=lambda: pool,
                           alloc=lambda n: state["alloc"](n), state=state)


def test_cupy_probe_sees_the_high_water_between_frees() -> None:
    pool = FakePool(used=2000)
    cp = fake_cupy(pool)
    backend = gpu_backend("cupy-gpu", _cupy=cp)
    base = memory.baseline(backend)
    pool.malloc(1000)  # the row's data

    def call() -> Any:
        a = cp.alloc(300)
        b = cp.alloc(700)   # high-water: 1,000 above the start
        a.free()
        b.free()
        return cp.alloc(400)  # the result stays

    f = memory.peak_fields(call, backend, DATA, base)
    assert f["memory_call_bytes"] == 1000 and f["memory_peak_bytes"] == 2000
    assert f["memory_meter"] == "cupy_pool_used_bytes"
    # the pool's own allocator is back once the call is read
    assert cp.state["alloc"] == pool.malloc


# -- JAX --------------------------------------------------------------------------------

class FakeJaxDevice:
    """A device's memory_stats: bytes in use and a high-water mark that never resets."""

    def __init__(self, in_use: int, peak: int) -> None:
        self.in_use, self.peak = in_use, peak

    def memory_stats(self) -> dict[str, int]:
        return {"bytes_in_use": self.in_use, "peak_bytes_in_use": self.peak}

    def alloc(self, n: int) -> None:
        self.in_use += n
        self.peak = max(self.peak, self.in_use)


class Pad:
    def __init__(self, dev: FakeJaxDevice, n: int) -> None:
        self.dev, self.n = dev, n
        dev.alloc(n)

    def delete(self) -> None:
        self.dev.in_use -= self.n


def jax_backend(dev: FakeJaxDevice) -> SimpleNamespace:
    return gpu_backend("jax-gpu", _device=dev, _jax=SimpleNamespace())


def jax_call(dev: FakeJaxDevice, temp: int, out: int) -> Any:
    def call() -> str:
        dev.alloc(temp + out)
        dev.in_use -= temp
        return "result"
    return call


@pytest.mark.parametrize("pads", [True, False])
def test_jax_reads_a_call_that_lifts_the_mark(monkeypatch: pytest.MonkeyPatch,
                                              pads: bool) -> None:
    dev = FakeJaxDevice(in_use=1000, peak=1000)
    if not pads:
        monkeypatch.setattr(jax_memory.JaxProbe, "pad", lambda self, n: None)
    else:
        monkeypatch.setattr(jax_memory.JaxProbe, "pad", lambda self, n: Pad(dev, n))
    backend = jax_backend(dev)
    base = memory.baseline(backend)
    dev.alloc(600)  # inputs (JAX has no preallocated outputs)
    data = memory.RowData(600, 400, 600)
    f = memory.peak_fields(jax_call(dev, 3000, 400), backend, data, base)
    assert f["memory_call_bytes"] == 3400 and f["memory_peak_bytes"] == 4000
    assert f["memory_multiple"] == pytest.approx(4.0)


@pytest.mark.parametrize("overshoot", [0, 777])
def test_jax_pads_up_to_an_earlier_mark_so_a_smaller_call_still_shows(
        monkeypatch: pytest.MonkeyPatch, overshoot: int) -> None:
    """The pad lifts the bytes in use to an earlier, higher mark. A pad in whole chunks
    overshoots the gap by up to PAD_UNIT: the floor is read after it, so the call's peak
    comes out the same."""
    dev = FakeJaxDevice(in_use=1000, peak=50_000)  # an earlier row peaked far higher
    asked: list[int] = []
    monkeypatch.setattr(jax_memory.JaxProbe, "pad",
                        lambda self, n: asked.append(n) or Pad(dev, n + overshoot))
    backend = jax_backend(dev)
    base = memory.baseline(backend)
    dev.alloc(600)
    f = memory.peak_fields(jax_call(dev, 3000, 400), backend,
                           memory.RowData(600, 400, 600), base)
    assert f["memory_call_bytes"] == 3400 and f["memory_peak_bytes"] == 4000
    assert asked == [50_000 - 1600]
    assert dev.in_use == 1600 + 400  # the pad is gone again; the result stays


def test_jax_pads_in_few_shapes_and_let_them_go() -> None:
    """The real pad, on JAX's CPU device: at least the bytes asked, under a unit more,
    in power-of-two multiples of the unit, so many sizes reuse a few compiled shapes."""
    jax = pytest.importorskip("jax")
    probe = jax_memory.JaxProbe.__new__(jax_memory.JaxProbe)
    probe.device, probe.jax = jax.devices("cpu")[0], jax
    shapes: set[int] = set()
    for n in (1, jax_memory.PAD_UNIT - 1, jax_memory.PAD_UNIT, 3 * jax_memory.PAD_UNIT + 5,
              5 * jax_memory.PAD_UNIT, 11 * jax_memory.PAD_UNIT - 3):
        pad = probe.pad(n)
        assert pad is not None
        assert n <= pad.nbytes < n + jax_memory.PAD_UNIT
        sizes = [int(a.size) for a in pad.arrays]
        assert len(set(sizes)) == len(sizes)
        assert all(s % jax_memory.PAD_UNIT == 0 and (s // jax_memory.PAD_UNIT).bit_count() == 1
                   for s in sizes)
        shapes.update(sizes)
        arrays = list(pad.arrays)
        pad.delete()
        assert all(a.is_deleted() for a in arrays)
    assert len(shapes) <= 4  # 1, 2, 4 and 8 units


def test_jax_without_a_pad_says_the_earlier_mark_hides_the_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    dev = FakeJaxDevice(in_use=1000, peak=50_000)
    monkeypatch.setattr(jax_memory.JaxProbe, "pad", lambda self, n: None)
    backend = jax_backend(dev)
    f = memory.peak_fields(jax_call(dev, 3000, 400), backend, DATA, memory.baseline(backend))
    assert math.isnan(f["memory_peak_bytes"]) and math.isnan(f["memory_multiple"])
    assert f["memory_reason"].startswith("not measured: JAX keeps one peak_bytes_in_use")
    assert f["memory_data_bytes"] == 1000


def test_jax_runs_the_call_again_without_the_pad_where_both_do_not_fit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    dev = FakeJaxDevice(in_use=1000, peak=5000)
    monkeypatch.setattr(jax_memory.JaxProbe, "pad", lambda self, n: Pad(dev, n))
    backend = jax_backend(dev)
    tries: list[int] = []

    def call() -> str:
        tries.append(dev.in_use)
        if dev.in_use >= 5000:  # beside the pad: out of memory
            raise RuntimeError("RESOURCE_EXHAUSTED: out of memory")
        return jax_call(dev, 6000, 0)()  # alone it lifts the mark: readable

    f = memory.peak_fields(call, backend, DATA, memory.baseline(backend))
    assert tries == [5000, 1000]  # padded, then not
    assert f["memory_call_bytes"] == 6000 and f["memory_reason"] == ""
    assert dev.in_use == 1000  # no pad left behind


def test_jax_on_a_device_without_memory_stats_is_not_measured() -> None:
    """Real JAX, on this machine's CPU device: memory_stats() gives None."""
    jax = pytest.importorskip("jax")
    backend = gpu_backend("jax-gpu", _device=jax.devices("cpu")[0], _jax=jax)
    assert memory.baseline(backend) is None
    f = memory.peak_fields(lambda: None, backend, DATA, None)
    assert "reports no peak_bytes_in_use" in f["memory_reason"]
    assert math.isnan(f["memory_peak_bytes"])


# -- Numba ------------------------------------------------------------------------------

class FakePointer:
    def __init__(self, size: int) -> None:
        self.size = size


class FakeMemoryManager:
    def __init__(self) -> None:
        self.deallocations = SimpleNamespace(clear=lambda: None)

    def memalloc(self, size: int) -> FakePointer:
        return FakePointer(size)


def test_numba_probe_counts_allocations_until_they_are_garbage(
        monkeypatch: pytest.MonkeyPatch) -> None:
    mm = FakeMemoryManager()
    ctx = SimpleNamespace(memory_manager=mm, get_memory_info=lambda: (9000, 10_000))
    monkeypatch.setattr(numba_memory, "_numba_context", lambda: ctx)
    backend = gpu_backend("numba-gpu", _sim=False)
    base = memory.baseline(backend)
    assert base is None  # Numba keeps no count of bytes in use: the data sizes stand in

    def call() -> FakePointer:
        tmp = mm.memalloc(800)   # a temporary, garbage before the next allocation
        del tmp
        a = mm.memalloc(300)
        b = mm.memalloc(200)     # high-water: 500 live
        del a, b
        return mm.memalloc(100)

    f = memory.peak_fields(call, backend, DATA, base)
    assert f["memory_call_bytes"] == 800 and f["memory_meter"] == "numba_memalloc_hook"
    assert f["memory_peak_bytes"] == 1000 + 800
    assert "memalloc" not in vars(mm)  # the class's method is back


def test_numba_simulator_is_not_measured() -> None:
    f = memory.peak_fields(lambda: None, gpu_backend("numba-gpu", _sim=True), DATA, None)
    assert f["memory_reason"] == "not measured: Numba's CUDA simulator has no device memory"


# -- CUDA Python ------------------------------------------------------------------------

def fake_driver() -> SimpleNamespace:
    ptrs = iter(range(1, 1000))

    def alloc(size: int, *args: Any) -> tuple[int, int]:
        return 0, next(ptrs)

    return SimpleNamespace(cuMemAlloc=alloc, cuMemAllocAsync=alloc,
                           cuMemAllocManaged=alloc, cuMemFree=lambda p: (0,),
                           cuMemFreeAsync=lambda p, s: (0,),
                           cuMemGetInfo=lambda: (0, 70_000, 80_000))


def test_cuda_python_probe_follows_the_driver_calls() -> None:
    drv = fake_driver()
    originals = dict(vars(drv))
    probe = driver_memory.DriverProbe.__new__(driver_memory.DriverProbe)
    probe.backend, probe.driver = gpu_backend("cuda_python-gpu"), drv
    backend = probe.backend
    backend._memory_probe = probe
    assert memory.baseline(backend) is None  # the driver counts the whole device only

    def call() -> int:
        _, a = drv.cuMemAlloc(4096)
        _, b = drv.cuMemAllocAsync(1024, "stream")
        drv.cuMemFree(a)
        drv.cuMemFreeAsync(b, "stream")
        _, c = drv.cuMemAllocManaged(2048, 1)
        return c

    f = memory.peak_fields(call, backend, DATA, None)
    assert f["memory_call_bytes"] == 5120 and f["memory_meter"] == "cuda_driver_hook"
    assert f["memory_peak_bytes"] == 1000 + 5120
    assert vars(drv) == originals


# -- the row's sizes, failures and CPU rows -----------------------------------------------

def test_row_data_counts_outputs_or_the_returned_result() -> None:
    inputs = {"a": np.zeros(10), "b": np.zeros(10, np.float32)}
    pre = memory.row_data(True, inputs, {"c": np.zeros(10)}, None)
    assert (pre.data, pre.resident) == (120 + 80, 120 + 80)
    new = memory.row_data(True, inputs, {}, (np.zeros(5), np.zeros(5)))
    assert (new.data, new.resident) == (120 + 80, 120)
    host = memory.row_data(False, inputs, {"c": np.zeros(10)}, None)
    assert (host.data, host.resident) == (200, 80)


def test_cpu_rows_get_no_reading_and_no_claim() -> None:
    cpu = SimpleNamespace(device="cpu", backend_id="numpy-cpu", facts=Facts())
    assert memory.baseline(cpu) is None
    assert memory.peak_fields(lambda: 1 / 0, cpu, DATA, None) == {}


def test_a_gpu_backend_without_a_probe_says_so() -> None:
    f = memory.peak_fields(lambda: None, gpu_backend("other-gpu"), DATA, None)
    assert f["memory_reason"] == ("not measured: no memory probe for other-gpu (its "
                                  "memory_probe)")


def test_a_failing_memory_pass_is_a_reason_not_an_exception() -> None:
    backend = gpu_backend(_torch=SimpleNamespace(cuda=FakeTorchCuda(0)))

    def call() -> None:
        raise RuntimeError("CUDA out of memory")

    f = memory.peak_fields(call, backend, DATA, 0)
    assert "the memory pass failed: RuntimeError: CUDA out of memory" in f["memory_reason"]


# -- the harness: one untimed call after the samples ------------------------------------

SPEC = get_kernel("vector_add")
CASE = Case("vector_add", "default", 1000, "float64", {})
QUICK = Settings(max_time_s=0.05, min_samples=3, warmup=1, caller_clocks=False)


class CountingBackend(NumpyCPU):
    """NumPy arrays on a pretend GPU whose allocator counts the bytes it placed."""

    framework = "fakemem"
    device = "gpu"
    facts = NumpyCPU.facts.but(memory_probe="the test's own")
    used = 0

    def to_device(self, array: np.ndarray) -> Any:
        self.used += array.nbytes
        return super().to_device(array)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        out = super().empty(shape, dtype)
        self.used += out.nbytes
        return out


class CountingProbe(memory.Probe):
    meter = "fake"
    seen: list[int] = []

    def in_use(self) -> int:
        return self.backend.used

    def peak(self, call: Any) -> tuple[Any, int]:
        CountingProbe.seen.append(len(CALLS))
        return call(), 8000


CALLS: list[int] = []


def _measure(backend: Any) -> Any:
    CALLS.clear()

    def builder(ctx: Any) -> Any:
        a, b, c = ctx.inputs["a"], ctx.inputs["b"], ctx.out("c")

        def call() -> None:
            CALLS.append(1)
            np.add(a, b, out=c)

        return call

    inputs = SPEC.make_inputs(CASE, np.random.default_rng(0))
    impl = Implementation("vector_add", backend.framework, "test", builder)
    return measure(SPEC, impl, CASE, backend, QUICK, inputs, SPEC.reference(CASE, inputs))


def test_the_harness_reads_memory_once_after_the_timed_samples() -> None:
    CountingProbe.seen = []
    backend = CountingBackend()
    backend.start(1)
    backend._memory_probe = CountingProbe(backend)
    backend.used = 5_000_000  # what the framework held before the row
    m = _measure(backend)
    f = m.fields
    assert f["status"] == "ok", f
    # first call + warm-up + samples, then the memory call, never inside a sample
    assert CountingProbe.seen == [1 + 1 + len(m.samples)]
    assert len(CALLS) == 1 + 1 + len(m.samples) + 1
    data = 3 * 1000 * 8
    assert f["memory_data_bytes"] == data
    assert f["memory_peak_bytes"] == data + 8000
    assert f["memory_multiple"] == pytest.approx((data + 8000) / data)
    frame = results.rows_frame([{**results.empty_row(), **_key(), **f}])
    results.validate(frame)


def _key() -> dict[str, Any]:
    return dict(framework="fakemem", device="gpu", backend="fakemem-gpu",
                implementation="test", kernel="vector_add", variant="default", size=1000,
                dtype="float64", threads=1, schema_version=results.SCHEMA_VERSION)


def test_a_cpu_row_through_the_harness_leaves_the_columns_empty() -> None:
    backend = NumpyCPU()
    backend.start(1)
    f = _measure(backend).fields
    assert f["status"] == "ok"
    assert not any(k.startswith("memory_") for k in f)
    row_ = {**results.empty_row(), **f}
    assert math.isnan(row_["memory_peak_bytes"]) and row_["memory_reason"] == ""


def test_the_schema_refuses_a_negative_peak() -> None:
    r = {**results.empty_row(), **_key(), "status": "ok", "median_s": 1.0, "mode": "hot",
         "memory_peak_bytes": -1.0}
    with pytest.raises(results.SchemaError, match="memory_peak_bytes"):
        results.validate(results.rows_frame([r]))


# -- the report ---------------------------------------------------------------------------

def _set_memory(paths: dict[str, Path], backend: str, multiple: float,
                reason: str = "") -> None:
    t = pd.read_csv(paths["timings"], dtype={"energy_meter": object, "energy_reason": object,
                                             "memory_meter": object, "memory_reason": object})
    rows = (t["backend"] == backend) & (t["status"] == "ok")
    if reason:
        t.loc[rows, "memory_reason"] = reason
    else:
        data = t.loc[rows, "bytes"]
        # matmul needs more than its data, vector_add exactly its data
        mult = np.where(t.loc[rows, "kernel"] == "matmul", multiple, 1.0)
        t.loc[rows, "memory_data_bytes"] = data
        t.loc[rows, "memory_peak_bytes"] = data * mult
        t.loc[rows, "memory_multiple"] = mult
        t.loc[rows, "memory_meter"] = "fake"
    t.to_csv(paths["timings"], index=False)


def test_the_memory_column_follows_the_rows(tmp_path: Path) -> None:
    paths = write_set(tmp_path)
    _set_memory(paths, "cupy-gpu", 3.0)
    _set_memory(paths, "torch-gpu", 1.0, reason="not measured: no memory probe for x")
    inputs = load_inputs(paths["timings"], paths["env"], paths["samples"])
    m = inputs.choice[0]
    cupy = m.cells[("cupy-gpu", "memory")]
    # 4 cases (2 kernels x 2 dtypes) at the largest size: median of 1, 1, 3, 3
    assert cupy.value == pytest.approx(2.0) and (cupy.lo, cupy.hi) == (1.0, 3.0)
    assert cupy.text.startswith("2× its inputs+outputs (median of 4 cases")
    assert "most: matmul/default" in cupy.text
    used = inputs.df.loc[cupy.rows]
    assert len(used) == 4 and len(set(zip(used["kernel"], used["dtype"], strict=True))) == 4
    ok = inputs.df[(inputs.df["backend"] == "cupy-gpu") & (inputs.df["status"] == "ok")
                   & (inputs.df["mode"] == "hot")]
    largest = ok.groupby(["kernel", "dtype"])["size_key"].max()
    for r in used.itertuples():
        assert r.size_key == largest[(r.kernel, r.dtype)]  # each case at its largest size
    assert m.cells[("torch-gpu", "memory")].text == "not measured: no memory probe for x"
    assert m.cells[("numpy-cpu", "memory")].text == "— (CPU)"
    assert any(a == "memory" for a in matrix.ASPECTS)


def _pinn_set(tmp_path: Path, torch_x: float, jax_x: float) -> dict[str, Path]:
    """The synthetic set plus autodiff/pinn rows of PyTorch and JAX with readings."""
    paths = write_set(tmp_path)
    t = pd.read_csv(paths["timings"], dtype=object)
    extra = []
    for fw, x in (("torch", torch_x), ("jax", jax_x)):
        for size, mult in ((4096, x * 2), (65536, x)):  # the larger size is the one named
            r, _ = row(fw, "gpu", "grad", "autodiff", size, "float32", 1e-3, variant="pinn",
                       seed=size)
            r.update(memory_peak_bytes=1e6 * mult, memory_data_bytes=1e6,
                     memory_multiple=mult, memory_meter="fake")
            extra.append(r)
    t = pd.concat([t, results.rows_frame(extra).astype(object)], ignore_index=True)
    t.to_csv(paths["timings"], index=False)
    return paths


def _memory_lines(paths: dict[str, Path]) -> list[str]:
    lines = load_inputs(paths["timings"], paths["env"], paths["samples"]).choice[1]
    return [s for s in lines if s.startswith("Device memory")]


def test_the_pinn_sentence_is_computed_from_the_rows(tmp_path: Path) -> None:
    first = _memory_lines(_pinn_set(tmp_path / "a", 1.8, 1.2))
    assert first == ["Device memory: PyTorch on GPU needs 1.8× the inputs plus outputs for "
                     "the PINN gradient (autodiff/pinn float32, size 65,536), JAX on GPU "
                     "1.2×."]
    second = _memory_lines(_pinn_set(tmp_path / "b", 1.1, 2.5))
    assert second == ["Device memory: JAX on GPU needs 2.5× the inputs plus outputs for the "
                      "PINN gradient (autodiff/pinn float32, size 65,536), PyTorch on GPU "
                      "1.1×."]


def test_no_sentence_without_readings(tmp_path: Path) -> None:
    assert _memory_lines(write_set(tmp_path)) == []
    paths = write_set(tmp_path / "x")
    _set_memory(paths, "cupy-gpu", 3.0)  # readings, but no autodiff rows
    assert _memory_lines(paths) == []


_SIMULATED = r"""
import json
import numpy as np
from gpubench.backends import load_backend
from gpubench.harness import Settings, measure
from gpubench.spec import Case, get_kernel, implementations

backend = load_backend("numba-gpu")
backend.start(1)
spec = get_kernel("vector_add")
case = Case("vector_add", "default", 256, "float64")
inputs = spec.make_inputs(case, np.random.default_rng(0))
impl = implementations("vector_add", "numba", "gpu")[0]
m = measure(spec, impl, case, backend, Settings(max_time_s=0.01, min_samples=2, warmup=1,
                                                caller_clocks=False),
            inputs, spec.reference(case, inputs))
f = m.fields
print(json.dumps([f["status"], f.get("memory_reason"), f.get("memory_data_bytes")]))
"""


def test_a_numba_row_under_the_simulator_says_why_it_has_no_reading() -> None:
    from kernel_helpers import run_simulated

    status, reason, data = run_simulated(_SIMULATED)
    assert status == "ok"
    assert reason == "not measured: Numba's CUDA simulator has no device memory"
    assert data == 3 * 256 * 8


@pytest.mark.parametrize("kernel", ["allocation", "monte_carlo_pi", "transfer", "interop",
                                    "launch_overhead"])
def test_kernels_without_data_to_scale_by_stay_out_of_the_memory_column(kernel: str) -> None:
    """An allocation of 1 GiB over a 8-byte input reads 1.3e8x on the H100: a multiple a
    user cannot scale by. Such kernels keep their peaks in the rows and stay out of the
    column; vector_add (its data is its working set) stays in."""
    df = pd.DataFrame({"status": "ok", "mode": "hot", "implementation": "x",
                       "backend": "cupy-gpu", "kernel": [kernel, "vector_add"],
                       "memory_multiple": [1.3e8, 1.5]})
    got = report_cells._memory_rows(df, "cupy-gpu")
    assert list(got["kernel"]) == ["vector_add"]
    assert get_kernel(kernel).memory_relative is False
    assert get_kernel("vector_add").memory_relative is True
