"""The allocation kernel: its facts, its check, the managed-memory guard, and
every implementation's build logic on this CPU machine.

NumPy, PyTorch and JAX rows run on their CPU paths (also in
test_kernels_cpu_smoke_and_checks.py). GPU implementations cannot run here: Numba's run
under its CUDA simulator (in a subprocess); CuPy's and CUDA Python's run against
stand-ins of ``cupy`` and ``cuda.bindings.driver`` that keep their memory in host
bytes, so the builders, the probe, the timed call and the frees are exercised, not the
allocators' speed.
"""

from __future__ import annotations

import ctypes
import math
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from kernel_helpers import SRC, cpu_backend, run_simulated

from gpubench.harness import Settings, measure
from gpubench.kernels import allocation as alloc
from gpubench.spec import BuildContext, Case, WrongResult, get_kernel, implementations

FAST = Settings(max_time_s=0.01, min_samples=2, warmup=1)


def case(size: int = 4096) -> Case:
    return Case("allocation", "alloc_free", size, "uint8")


def impl(framework: str, name: str) -> Any:
    return next(i for i in implementations("allocation", framework) if i.name == name)


def test_facts_and_registry() -> None:
    spec = get_kernel("allocation")
    assert spec.host_timed and not spec.hide_launch and not spec.place_inputs
    assert spec.bytes_moved(case()) == 0.0 and spec.memory_bytes(case()) == 2 * 4096
    got = {(i.framework, i.name): i.devices for i in implementations("allocation")}
    # every registered row has an allocator kind for the report, and every kind a row
    assert set(got) == set(alloc.ALLOCATORS)
    assert {k for k, d in got.items() if "cpu" in d} == {
        ("numpy", "empty"), ("torch", "empty"), ("jax", "zeros")}
    gpu = {k for k, d in got.items() if "gpu" in d}
    for framework in ("cupy", "torch", "numba", "cuda_python"):
        kinds = {alloc.ALLOCATORS[k] for k in gpu if k[0] == framework}
        assert "driver" in kinds, framework  # the raw allocation beside each framework
    assert {k[0] for k in gpu if alloc.ALLOCATORS[k] == "managed"} == {
        "cupy", "numba", "cuda_python"}
    assert alloc.allocator_kind("torch", "empty", "cpu") == "host"
    assert alloc.allocator_kind("torch", "empty", "gpu") == "pool"


def test_check_wants_exactly_the_bytes_asked_for() -> None:
    spec, c = get_kernel("allocation"), case(1024)
    ref = spec.reference(c, spec.make_inputs(c, np.random.default_rng(0)))
    assert spec.check(c, 1024, ref).passed
    assert spec.check(c, np.int64(1024), ref).passed
    short = spec.check(c, 1023, ref)
    assert not short.passed and "1023" in short.reason
    assert not spec.check(c, np.zeros(1024, np.uint8), ref).passed
    assert not spec.check(c, 1024.0, ref).passed


def test_probe_and_managed_guard() -> None:
    c = case(1 << 20)
    alloc.verify(c, 1 << 20, alloc.MARK)
    with pytest.raises(WrongResult, match="asked for"):
        alloc.verify(c, 1 << 19, alloc.MARK)
    with pytest.raises(WrongResult, match="last byte"):
        alloc.verify(c, 1 << 20, 0)
    alloc.require_free(c, int(1.5 * (1 << 20)), "x")
    with pytest.raises(MemoryError, match="never asked for beyond what is free"):
        alloc.require_free(c, (1 << 20) + 1, "x")
    with pytest.raises(MemoryError, match="cannot be read"):
        alloc.require_free(c, None, "x")


@pytest.mark.parametrize(("framework", "name"), [("numpy", "empty"), ("torch", "empty"),
                                                 ("jax", "zeros")])
def test_cpu_rows_pass_the_harness(framework: str, name: str) -> None:
    c = case(1 << 16)
    spec = get_kernel("allocation")
    m = measure(spec, impl(framework, name), c, cpu_backend(framework), FAST, {},
                spec.reference(c, {}))
    assert m.fields["status"] == "ok", m.fields.get("reason")
    assert m.fields["timer"] == "perf_counter+sync" and math.isnan(m.fields["gbps"])


# -- stand-ins for the GPU frameworks ------------------------------------------------------


class FakeDriver(types.ModuleType):
    """``cuda.bindings.driver`` over host bytes: allocations are bytearrays at made-up
    addresses; every call returns the bindings' (CUresult, value...) tuple."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUmemAttach_flags:  # the bindings' name
        CU_MEM_ATTACH_GLOBAL = 1

    def __init__(self) -> None:
        super().__init__("cuda.bindings.driver")
        self.blocks: dict[int, bytearray] = {}
        self.kinds: list[str] = []
        self._next = 1 << 20

    def _alloc(self, n: int, kind: str) -> tuple[int, int]:
        base, self._next = self._next, self._next + n + 4096
        self.blocks[base] = bytearray(n)
        self.kinds.append(kind)
        return 0, base

    def _find(self, ptr: int) -> tuple[bytearray, int]:
        base = max(b for b in self.blocks if b <= ptr)
        return self.blocks[base], ptr - base

    def cuMemAlloc(self, n: int) -> tuple[int, int]:
        return self._alloc(n, "alloc")

    def cuMemAllocAsync(self, n: int, stream: Any) -> tuple[int, int]:
        return self._alloc(n, "async")

    def cuMemAllocManaged(self, n: int, flags: int) -> tuple[int, int]:
        assert flags == self.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL
        return self._alloc(n, "managed")

    def cuMemFree(self, ptr: int) -> tuple[int]:
        del self.blocks[int(ptr)]
        return (0,)

    def cuMemFreeAsync(self, ptr: int, stream: Any) -> tuple[int]:
        return self.cuMemFree(ptr)

    def cuStreamSynchronize(self, stream: Any) -> tuple[int]:
        return (0,)

    def cuMemsetD8(self, ptr: int, value: int, count: int) -> tuple[int]:
        block, off = self._find(ptr)
        block[off:off + count] = bytes([value]) * count
        return (0,)

    def cuMemcpyDtoH(self, host: int, ptr: int, count: int) -> tuple[int]:
        block, off = self._find(ptr)
        ctypes.memmove(host, bytes(block[off:off + count]), count)
        return (0,)

    def cuGetErrorName(self, err: int) -> tuple[int, bytes]:
        return 0, b"CUDA_ERROR_FAKE"


@pytest.fixture
def fake_driver(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    driver = FakeDriver()
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver  # type: ignore[attr-defined]
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings  # type: ignore[attr-defined]
    for name, module in (("cuda", cuda), ("cuda.bindings", bindings),
                         ("cuda.bindings.driver", driver)):
        monkeypatch.setitem(sys.modules, name, module)
    return driver


def standin_backend(monkeypatch: pytest.MonkeyPatch, free: int | None) -> Any:
    """The NumPy CPU backend with a stream handle and a chosen free-memory figure: the
    harness's path, the GPU builders' view of a backend."""
    backend = cpu_backend("numpy")
    monkeypatch.setattr(backend, "stream", types.SimpleNamespace(handle=0), raising=False)
    monkeypatch.setattr(backend, "free_memory", lambda: free)
    return backend


@pytest.mark.parametrize(("name", "kind"), [("mem_alloc", "alloc"),
                                            ("mem_alloc_async", "async"),
                                            ("mem_alloc_managed", "managed")])
def test_cuda_python_rows_on_a_standin_driver(monkeypatch: pytest.MonkeyPatch,
                                              fake_driver: FakeDriver, name: str,
                                              kind: str) -> None:
    c, spec = case(1 << 16), get_kernel("allocation")
    backend = standin_backend(monkeypatch, 1 << 30)
    m = measure(spec, impl("cuda_python", name), c, backend, FAST, {}, c.size)
    assert m.fields["status"] == "ok", m.fields.get("reason")
    assert set(fake_driver.kinds) == {kind} and len(fake_driver.kinds) > 3
    assert fake_driver.blocks == {}  # every allocation freed, the probe's included


def test_cuda_python_managed_is_skipped_without_room(monkeypatch: pytest.MonkeyPatch,
                                                     fake_driver: FakeDriver) -> None:
    c, spec = case(1 << 16), get_kernel("allocation")
    # the builder's own guard (size x 1.5 against the card's free memory)...
    ctx = BuildContext(c, standin_backend(monkeypatch, (1 << 16) + 1), {}, {}, 0)
    with pytest.raises(MemoryError, match="cuMemAllocManaged"):
        impl("cuda_python", "mem_alloc_managed").builder(ctx)
    assert fake_driver.kinds == []  # nothing was asked for
    # ...and the harness's (memory_bytes x memory_headroom), which refuses it first
    m = measure(spec, impl("cuda_python", "mem_alloc_managed"), c,
                standin_backend(monkeypatch, (1 << 16) + 1), FAST, {}, c.size)
    assert m.fields["status"] == "skipped" and m.fields["reason"]


class _Scalar:
    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self) -> np.ndarray:
        return np.asarray(self.value)


class _Array:
    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.nbytes = data.nbytes

    def __setitem__(self, i: int, v: int) -> None:
        self.data[i] = v

    def __getitem__(self, i: int) -> _Scalar:
        return _Scalar(self.data[i])


def fake_cupy(free: int) -> tuple[types.ModuleType, dict[str, int]]:
    """``cupy`` over host memory: the calls the allocation rows make, counting live
    ``Memory`` blocks and every allocation by kind."""
    counts = {"live": 0, "pool": 0, "device": 0, "managed": 0}

    class Memory:
        kind = "device"

        def __init__(self, size: int) -> None:
            self.size = size
            self.buf = np.zeros(size, np.uint8)
            counts["live"] += 1
            counts[self.kind] += 1

        def __del__(self) -> None:
            counts["live"] -= 1

    class ManagedMemory(Memory):
        kind = "managed"

    def empty(n: int, dtype: Any) -> _Array:
        counts["pool"] += 1
        return _Array(np.zeros(n, dtype))

    cupy = types.ModuleType("cupy")
    cupy.uint8 = np.uint8  # type: ignore[attr-defined]
    cupy.empty = empty  # type: ignore[attr-defined]
    cupy.ndarray = lambda shape, dtype, ptr: _Array(ptr.buf)  # type: ignore[attr-defined]
    cupy.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        Memory=Memory, ManagedMemory=ManagedMemory, MemoryPointer=lambda mem, off: mem,
        runtime=types.SimpleNamespace(memGetInfo=lambda: (free, 2 * free)))
    return cupy, counts


@pytest.mark.parametrize(("name", "kind"), [("pool", "pool"), ("no_pool", "device"),
                                            ("managed", "managed")])
def test_cupy_rows_on_a_standin(monkeypatch: pytest.MonkeyPatch, name: str,
                                kind: str) -> None:
    cupy, counts = fake_cupy(free=1 << 30)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    c, spec = case(1 << 16), get_kernel("allocation")
    m = measure(spec, impl("cupy", name), c, cpu_backend("numpy"), FAST, {}, c.size)
    assert m.fields["status"] == "ok", m.fields.get("reason")
    assert counts[kind] > 3 and counts["live"] == 0


def test_cupy_managed_reads_the_raw_free_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    cupy, counts = fake_cupy(free=1 << 16)  # the card: less than size x 1.5 free
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    c = case(1 << 16)
    ctx = BuildContext(c, cpu_backend("numpy"), {}, {}, 0)
    with pytest.raises(MemoryError, match=r"cupy\.cuda\.ManagedMemory"):
        impl("cupy", "managed").builder(ctx)
    assert counts["managed"] == 0


def test_gpu_modules_import_without_their_frameworks() -> None:
    """The CuPy and CUDA Python modules import nothing of their framework at import
    time: registering them needs neither (cupy is not installed here)."""
    code = ("import sys; from gpubench.spec import implementations; "
            "names = {(i.framework, i.name) for i in implementations('allocation')}; "
            "assert ('cupy', 'pool') in names and ('cuda_python', 'mem_alloc') in names; "
            "assert 'cupy' not in sys.modules and 'cuda.bindings.driver' not in sys.modules")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]


_SIMULATED = r"""
import json
from gpubench.backends import load_backend
from gpubench.harness import Settings, measure
from gpubench.spec import Case, get_kernel, implementations

backend = load_backend("numba-gpu")
backend.start(1)
spec = get_kernel("allocation")
rows = []
for size in (1024, 1 << 20):
    case = Case("allocation", "alloc_free", size, "uint8")
    for impl in implementations("allocation", "numba", "gpu"):
        m = measure(spec, impl, case, backend, Settings(max_time_s=0.01, min_samples=2,
                                                        warmup=1), {}, size)
        rows.append([impl.name, size, m.fields["status"], m.fields.get("reason", "")])
print(json.dumps(rows))
"""


def test_numba_rows_under_the_simulator() -> None:
    """device_array runs; the simulator has no managed arrays, so that row is
    ``unavailable`` with the reason (on a GPU it runs, guarded like the others)."""
    rows = run_simulated(_SIMULATED)
    assert len(rows) == 4
    for name, size, status, reason in rows:
        if name == "device_array":
            assert status == "ok", (size, reason)
        else:
            assert status == "unavailable" and "no managed arrays" in reason, (size, reason)


# -- the report ------------------------------------------------------------------------


def _allocation_rows() -> list[dict[str, Any]]:
    """Allocation rows as a GPU machine would give them: CuPy's pool 2 µs, cudaMalloc
    60 µs (1 MiB) and 400 µs (1 GiB), managed 80 µs / 500 µs; NumPy on the CPU."""
    from report_data import row

    out = []
    for size, drv in ((1 << 20, 60e-6), (1 << 30, 400e-6)):
        for fw, dev, name, t in (("cupy", "gpu", "pool", 2e-6), ("cupy", "gpu", "no_pool", drv),
                                 ("cupy", "gpu", "managed", drv * 1.25),
                                 ("numpy", "cpu", "empty", 1e-6)):
            out.append(row(fw, dev, name, "allocation", size, "uint8", t,
                           variant="alloc_free", seed=size % 97 + len(out))[0])
    return out


def test_report_says_what_allocating_in_a_loop_loses(tmp_path: Path) -> None:
    from report_data import write_set

    from gpubench import results
    from gpubench.report import build_report
    from gpubench.report.base import prepare
    from gpubench.report.sections import allocation as section

    rows = _allocation_rows()
    built = section.build(prepare(results.rows_frame(rows)))
    assert built.table is not None
    assert list(built.table.columns) == ["backend", "size", "pool or cache",
                                         "driver, no pool", "managed", "host allocator",
                                         "driver ÷ pool"]
    (line,) = built.sentences  # one backend has a pool and a driver row
    assert line.startswith("cupy-gpu: one 1.0 GiB allocate-and-free costs")
    assert "from pool" in line and "from no_pool" in line and "managed memory" in line
    # the pipelined caller's clock: device samples + 3 µs in the stand-in data
    assert "(pool)" in built.table.iloc[0]["pool or cache"]
    assert section.build(prepare(results.rows_frame(rows[3:4]))).sentences == []

    paths = write_set(tmp_path / "in")
    timings = pd.concat([pd.read_csv(paths["timings"]), results.rows_frame(rows)],
                        ignore_index=True)
    results.atomic_write_csv(paths["timings"], timings)
    html, md = tmp_path / "index.html", tmp_path / "summary.md"
    build_report(paths["timings"], paths["env"], html, md, workers=1)
    page, summary = html.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")
    assert 'id="allocation-loop"' in page and 'href="#allocation-loop"' in page
    assert "## Allocating inside a loop" in summary and "cupy-gpu: one 1.0 GiB" in summary


def test_report_without_allocation_rows_has_no_section(tmp_path: Path) -> None:
    from report_data import write_set

    from gpubench.report import build_report

    paths = write_set(tmp_path / "in")
    html, md = tmp_path / "index.html", tmp_path / "summary.md"
    build_report(paths["timings"], paths["env"], html, md, workers=1)
    assert "allocation-loop" not in html.read_text(encoding="utf-8")
    assert "Allocating inside a loop" not in md.read_text(encoding="utf-8")


class _Managed(np.ndarray):
    """Numba's ManagedNDArray as the H100 showed it: a NumPy array over host-readable
    memory whose slices lack ``alloc_size``, so ``copy_to_host`` on one fails."""

    def copy_to_host(self) -> np.ndarray:
        raise AttributeError("'ManagedNDArray' object has no attribute 'alloc_size'")


class _FakeCuda:
    def __init__(self) -> None:
        self.synced = 0
        self.deallocations: list[Any] = []

    def managed_array(self, n: int, dtype: Any) -> _Managed:
        return np.zeros(n, dtype=dtype).view(_Managed)

    def current_context(self) -> Any:
        return self

    def synchronize(self) -> None:
        self.synced += 1


def test_numba_managed_probe_reads_the_host_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """The managed row's probe reads its last byte through the host (after a sync), not
    through a slice's copy_to_host, which failed on the H100 for every size."""
    from gpubench.backends.numba import gpu as numba_gpu
    from gpubench.kernels.allocation import with_numba_cuda
    from gpubench.spec import BuildContext, Case

    fake = _FakeCuda()
    monkeypatch.setattr(numba_gpu, "import_cuda", lambda: fake)

    class _Backend:
        def free_memory(self) -> int:
            return 1 << 34

    case = Case("allocation", "alloc_free", 4096, "uint8")
    ctx = BuildContext(case=case, backend=_Backend(), inputs={}, outputs={}, seed=1)
    call = with_numba_cuda.managed_array(ctx)
    assert fake.synced == 1 and call() == 4096


def test_a_pool_slower_than_the_driver_is_said_so() -> None:
    """CUDA Python's stream-ordered pool read slower than a plain cuMemAlloc at 1 GiB on
    the H100: the sentence says so instead of "0.90x the pooled cost, -306 µs more"."""
    from report_data import row

    from gpubench import results
    from gpubench.report.base import prepare
    from gpubench.report.sections import allocation as section

    rows = [row("cupy", "gpu", name, "allocation", 1 << 30, "uint8", t,
                variant="alloc_free", seed=i)[0]
            for i, (name, t) in enumerate((("pool", 500e-6), ("no_pool", 400e-6)))]
    (line,) = section.build(prepare(results.rows_frame(rows))).sentences
    assert "here the pool is the slower, by 1.2" in line and "more per iteration" in line
    assert "-" not in line.split("costs", 1)[1].replace("allocate-and-free", "")
