"""The CUDA C kernels and their CUDA Python / CuPy RawKernel launchers, checked without a GPU.

- every ``kernels/*/*.cu`` compiles with NVRTC for compute_90 (H100) on its own, and
  for sm_90 without register spills;
- every launch the ``with_cuda_python`` and ``with_cupy_raw`` builders make (run against
  a recording fake backend / fake ``cupy``) names an entry point of the compiled PTX,
  passes as many 8-byte arguments as it declares and a block within its ``.maxntid``;
  both frameworks launch the same geometry;
- the CUDA Python backend refuses to start here with :class:`Unavailable` and a reason;
- the Philox4x32-10 generator of ``monte_carlo_pi.cu`` matches the Random123 known-answer
  vectors (a Python port here, and the C++ itself compiled for the host when g++ exists).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from gpubench import cuda_sources
from gpubench.backends import Unavailable, load_backend
from gpubench.kernels.moving_average.with_cuda_python_sliding import (
    CTYPES,
    UNROLL2_MAX_WINDOW,
    warp_kernel,
)
from gpubench.spec import BuildContext, Case, get_kernel, implementations

CUDA_KERNELS = ("vector_add", "elementwise", "reduction", "matmul", "monte_carlo_pi",
                "moving_average", "launch_overhead", "stencil", "linear_grad", "axpy",
                "launch_config")
#: those with single-device cases (the rest are the MPI jobs' local computations, whose
#: launches tests/test_mpi_units.py checks on a rank's arrays)
CASE_KERNELS = tuple(k for k in CUDA_KERNELS if get_kernel(k).suite)
ARCH = "90"  # H100


# -- NVRTC ------------------------------------------------------------------------------


def _nvrtc() -> Any:
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings not installed")
    try:
        nvrtc.nvrtcVersion()
    except Exception as exc:  # noqa: BLE001 - the bindings are there, libnvrtc is not
        pytest.skip(f"NVRTC library not loadable: {type(exc).__name__}: {exc}")
    return nvrtc


def nvrtc_compile(source: str, name: str, options: list[str], cubin: bool = False,
                  name_expressions: tuple[str, ...] = (),
                  lowered: dict[str, str] | None = None) -> tuple[bool, str, bytes]:
    """(ok, log, PTX or CUBIN) from NVRTC, as cuda.core and CuPy would compile it.

    ``name_expressions`` instantiate template kernels, as both frameworks do; their
    mangled entry names go into ``lowered`` (expression -> name)."""
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        for expr in name_expressions:
            nvrtc.nvrtcAddNameExpression(prog, expr.encode())
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        ok = err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        code = b""
        if ok:
            for expr in name_expressions:
                _, mangled = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
                if lowered is not None:
                    lowered[expr] = (mangled.decode() if isinstance(mangled, bytes)
                                     else str(mangled))
            get_size, get = ((nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN) if cubin
                             else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX))
            _, size = get_size(prog)
            code = b" " * size
            get(prog, code)
        return ok, log.decode(errors="replace").rstrip("\x00 \n"), code
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


_PTX: dict[tuple[str, tuple[str, ...]], str] = {}
#: name expression -> its mangled entry name, of every ptx_of compile
LOWERED: dict[str, str] = {}


def ptx_of(kernel: str, name_expressions: tuple[str, ...] = ()) -> str:
    key = (kernel, tuple(name_expressions))
    if key not in _PTX:
        ok, log, ptx = nvrtc_compile(cuda_sources.source(kernel), f"{kernel}.cu",
                                     [f"--gpu-architecture=compute_{ARCH}", "-std=c++17"],
                                     name_expressions=key[1], lowered=LOWERED)
        assert ok, f"{kernel}.cu does not compile:\n{log}"
        _PTX[key] = ptx.decode()
    return _PTX[key]


def ptx_entries(ptx: str) -> dict[str, dict[str, Any]]:
    """Entry name -> {"params": [bytes per parameter], "maxntid": threads or None}."""
    entries = {}
    for match in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)\s*(\.maxntid\s+(\d+),\s*(\d+),"
                             r"\s*(\d+))?", ptx, re.S):
        params = [int(bits) // 8 for bits in
                  re.findall(r"\.param\s+\.[busf](\d+)", match.group(2))]
        maxntid = (math.prod(int(match.group(i)) for i in (4, 5, 6))
                   if match.group(3) else None)
        entries[match.group(1)] = {"params": params, "maxntid": maxntid}
    return entries


def test_every_cu_file_is_one_of_the_kernels() -> None:
    names = sorted(Path(p).parent.name for p in cuda_sources.all_sources())
    assert names == sorted(CUDA_KERNELS)


@pytest.mark.parametrize("kernel", CUDA_KERNELS)
def test_compiles_with_nvrtc_for_h100(kernel: str) -> None:
    entries = ptx_entries(ptx_of(kernel))
    assert entries, f"{kernel}.cu has no extern \"C\" __global__ entry point"
    for name in entries:
        assert name.startswith(kernel), f"{name}: entry points are named <kernel>_..."
        assert re.search(r"_(f32|f64|finalize)(_u[24])?$", name), name


@pytest.mark.parametrize("kernel", CUDA_KERNELS)
def test_sm90_code_has_no_register_spills(kernel: str) -> None:
    """The launch bounds' register caps must not spill (ptxas -v on the cubin for sm_90)."""
    ok, log, _ = nvrtc_compile(cuda_sources.source(kernel), f"{kernel}.cu",
                               [f"--gpu-architecture=sm_{ARCH}", "-std=c++17",
                                "--ptxas-options=-v"], cubin=True)
    assert ok, log
    spills = re.findall(r"(\d+) bytes spill stores", log)
    assert spills, f"no ptxas report in the log:\n{log}"
    assert all(int(s) == 0 for s in spills), log


def test_sources_need_no_headers() -> None:
    """NVRTC alone: no #include (CuPy and cuda.core get no include paths)."""
    for path, text in cuda_sources.all_sources().items():
        assert not re.search(r"^\s*#\s*include", text, re.M), path


# -- unrolled entry points of the memory-bound kernels -----------------------------------

#: (kernel, U = 1 entry point) of every kernel exported unrolled (``<entry>_u2/_u4``)
UNROLLED = [("vector_add", f"vector_add_{t}") for t in ("f32", "f64")] + [
    ("elementwise", f"elementwise_{v}_{t}") for v in ("hypot", "sigmoid", "rational")
    for t in ("f32", "f64")]


@pytest.mark.parametrize(("kernel", "base"), UNROLLED)
@pytest.mark.parametrize("u", [2, 4])
def test_unrolled_entries_issue_u_loads_before_storing(kernel: str, base: str, u: int) -> None:
    """The _u<U> entry's main loop loads U packs of each input (16-byte ld.global.nc.v4 /
    .v2) before its first store; the U = 1 entry keeps one load of each per store."""
    ptx = ptx_of(kernel)
    entries = ptx_entries(ptx)
    name = f"{base}_u{u}"
    assert name in entries and entries[name]["params"] == entries[base]["params"], name
    assert entries[name]["maxntid"] == 256, name
    inputs = len(entries[base]["params"]) - 2  # (inputs..., out, n)
    vec = r"ld\.global\.nc\.v[24]\.[fb]\d+"
    body = _entry_body(ptx, name)
    # the first run of vector loads in the body is the U loop's (before the remainder's)
    first = re.split(r"st\.global", body)[0]
    assert len(re.findall(vec, first)) == u * inputs, name
    assert len(re.findall(vec, _entry_body(ptx, base).split("st.global")[0])) == inputs


def test_unrolled_entries_have_no_register_spills_on_sm90() -> None:
    """Every entry point of every unrolled kernel, one by one in the ptxas report."""
    for kernel in sorted({k for k, _ in UNROLLED}):
        ok, log, _ = nvrtc_compile(cuda_sources.source(kernel), f"{kernel}.cu",
                                   [f"--gpu-architecture=sm_{ARCH}", "-std=c++17",
                                    "--ptxas-options=-v"], cubin=True)
        assert ok, log
        found = dict(re.findall(r"Function properties for (\w+)\s*\n.*?(\d+) bytes spill "
                                r"stores", log))
        names = {b for k, b in UNROLLED if k == kernel}
        assert {f"{b}{s}" for b in names for s in ("", "_u2", "_u4")} <= set(found), log
        assert all(int(v) == 0 for v in found.values()), found


def test_unroll_factor_default_override_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpubench.cuda_launch import UNROLL_ENV, unroll_factor, unrolled
    from gpubench.kernels.elementwise.with_cuda_python import entry_point
    from gpubench.kernels.vector_add import with_cuda_python as va

    monkeypatch.delenv(UNROLL_ENV, raising=False)
    assert unroll_factor(1) == 1 and unroll_factor(4) == 4
    assert va.entry_point("float32") == f"vector_add_f32{unrolled('', va.DEFAULT_UNROLL)}"
    for u in (1, 2, 4):
        monkeypatch.setenv(UNROLL_ENV, str(u))
        assert unroll_factor(1) == u
        suffix = "" if u == 1 else f"_u{u}"
        assert va.entry_point("float64") == f"vector_add_f64{suffix}"
        assert entry_point("sigmoid", "float32") == f"elementwise_sigmoid_f32{suffix}"
    for bad in ("3", "0", "8", "two", "2.0", "-1"):
        monkeypatch.setenv(UNROLL_ENV, bad)
        with pytest.raises(ValueError, match=UNROLL_ENV):
            unroll_factor(1)
    monkeypatch.delenv(UNROLL_ENV)
    with pytest.raises(ValueError):
        unroll_factor(3)


@pytest.mark.parametrize("u", ["2", "4"])
@pytest.mark.parametrize("kernel", ["vector_add", "elementwise"])
def test_both_frameworks_launch_the_same_unrolled_entry(
        kernel: str, u: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpubench.cuda_launch import UNROLL_ENV

    monkeypatch.setenv(UNROLL_ENV, u)
    cupy_launches, cp_launches = _cupy_and_cuda_python_launches(kernel, monkeypatch)
    _check_launches(cupy_launches)
    assert _geometry(cupy_launches) == _geometry(cp_launches)
    assert cp_launches and all(launch[3].endswith(f"_u{u}") for launch in cp_launches)


# -- moving_average's warp kernel -------------------------------------------------------

#: windows instantiated below, each with every lane width V it fits (W <= 32 V + 1)
WARP_WINDOWS = (1, 2, 3, 16, 33, 65, 100, 129)


def _warp_expressions() -> list[tuple[str, str, int, int]]:
    """(name expression, dtype, window, V) of every instantiation the launchers can make
    for :data:`WARP_WINDOWS`."""
    return [(f"moving_average_warp<{CTYPES[dt]}, {w}, {v}>", dt, w, v)
            for dt in ("float32", "float64") for v in (1, 2, 4)
            if v * np.dtype(dt).itemsize <= 16 for w in WARP_WINDOWS if w <= 32 * v + 1]


def _entry_body(ptx: str, entry: str) -> str:
    return ptx.split(f".entry {entry}(")[1].split(".entry ")[0]


def test_warp_kernel_streams_whole_lanes_and_shuffles_sums() -> None:
    """Every instantiation loads and stores V elements per lane as one access (16 bytes
    at the default: ld.global.nc.v4.f32 / .v2.f64; the compiler may narrow the halo's
    load to the elements used), uses no shared or local memory, shuffles
    lane sums (at most Q + V shuffles of T per lane, not W) and keeps the launch bounds."""
    exprs = _warp_expressions()
    ptx = ptx_of("moving_average", tuple(e for e, *_ in exprs))
    entries = ptx_entries(ptx)
    for expr, dtype, window, v in exprs:
        body = _entry_body(ptx, LOWERED[expr])
        t = "f32" if dtype == "float32" else "f64"
        vec = f"v{v}." if v > 1 else ""
        loads = set(re.findall(r"ld\.global\S*", body))  # the halo load may be narrowed
        assert f"ld.global.nc.{vec}{t}" in loads and all(".nc." in ld for ld in loads), expr
        assert set(re.findall(r"st\.global\S*", body)) == {f"st.global.{vec}{t}"}, expr
        assert ".local" not in body and "ld.shared" not in body and "bar.sync" not in body
        shuffles = len(re.findall(r"shfl\.sync\.idx\.b32", body))
        words = np.dtype(dtype).itemsize // 4
        assert (shuffles > 0) == (window > 1), expr
        assert shuffles <= words * ((window - 1) // v + v), (expr, shuffles)
        assert entries[LOWERED[expr]]["maxntid"] == 256, expr
    assert re.search(r"\.minnctapersm\s+8", ptx)


def test_warp_kernel_instantiations_have_no_register_spills_on_sm90() -> None:
    exprs = tuple(e for e, *_ in _warp_expressions())
    ok, log, _ = nvrtc_compile(cuda_sources.source("moving_average"), "moving_average.cu",
                               [f"--gpu-architecture=sm_{ARCH}", "-std=c++17",
                                "--ptxas-options=-v"], cubin=True, name_expressions=exprs)
    assert ok, log
    spills = re.findall(r"(\d+) bytes spill stores", log)
    assert len(spills) >= len(exprs), log
    assert all(int(s) == 0 for s in spills), log


def _warp_u2_expressions() -> list[tuple[str, str, int, int]]:
    """Every U = 2 instantiation the launchers can make: all windows up to the limit."""
    return [(f"moving_average_warp<{CTYPES[dt]}, {w}, {v}, 2>", dt, w, v)
            for (dt, v), top in UNROLL2_MAX_WINDOW.items() for w in range(1, top + 1)]


def test_warp_kernel_u2_has_no_register_spills_on_sm90_up_to_its_window_limit() -> None:
    exprs = tuple(e for e, *_ in _warp_u2_expressions())
    lowered: dict[str, str] = {}
    ok, log, _ = nvrtc_compile(cuda_sources.source("moving_average"), "moving_average.cu",
                               [f"--gpu-architecture=sm_{ARCH}", "-std=c++17",
                                "--ptxas-options=-v"], cubin=True, name_expressions=exprs,
                               lowered=lowered)
    assert ok, log
    found = dict(re.findall(r"Function properties for (\w+)\s*\n.*?(\d+) bytes spill "
                            r"stores", log))
    assert {lowered[e] for e in exprs} <= set(found)
    assert all(int(found[lowered[e]]) == 0 for e in exprs), {
        e: found[lowered[e]] for e in exprs if int(found[lowered[e]])}


def test_warp_kernel_u2_loads_two_chunks_before_any_shuffle() -> None:
    exprs = [x for x in _warp_u2_expressions() if x[2] in (3, 16, 33)]
    ptx = ptx_of("moving_average", tuple(e for e, *_ in exprs))
    entries = ptx_entries(ptx)
    for expr, dtype, _window, v in exprs:
        body = _entry_body(ptx, LOWERED[expr])
        t = "f32" if dtype == "float32" else "f64"
        vec = f"v{v}." if v > 1 else ""
        first = body.split("shfl.sync")[0]
        assert first.count(f"ld.global.nc.{vec}{t}") >= 2, expr
        assert ".local" not in body, expr
        assert entries[LOWERED[expr]]["maxntid"] == 256, expr


def test_warp_kernel_unroll_choice() -> None:
    assert warp_kernel(4, 1024, 16, "float32", unroll=2) == (
        "moving_average_warp<float, 16, 4, 2>", 4)
    assert warp_kernel(4, 1024, 16, "float32", unroll=4)[0].endswith(", 4, 2>")
    assert warp_kernel(4, 1024, 16, "float64", unroll=2)[0] == (
        "moving_average_warp<double, 16, 2, 2>")
    assert warp_kernel(4, 1024, 33, "float32", unroll=2)[0].endswith("33, 4, 2>")
    assert warp_kernel(4, 1024, 34, "float32", unroll=2)[0].endswith("34, 4>")  # spills
    assert warp_kernel(4, 1024, 17, "float64", unroll=2)[0].endswith("17, 2>")
    assert warp_kernel(4, 1024, 129, "float32", unroll=2)[0].endswith("129, 4>")
    assert warp_kernel(4, 1024, 16, "float32", unroll=1) == warp_kernel(4, 1024, 16, "float32")


@pytest.mark.parametrize("u", ["1", "2", "4"])
def test_moving_average_sliding_rows_launch_the_same_unrolled_kernel(
        u: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpubench.cuda_launch import UNROLL_ENV

    monkeypatch.setenv(UNROLL_ENV, u)
    cupy_launches, cp_launches = _cupy_and_cuda_python_launches("moving_average", monkeypatch)
    _check_launches(cupy_launches + cp_launches)
    assert _geometry(cupy_launches) == _geometry(cp_launches)
    warp = {launch[3] for launch in cp_launches if "<" in launch[3]}
    assert warp and all((name.count(",") == 3) == (u != "1") for name in warp), warp
    monkeypatch.setenv(UNROLL_ENV, "3")
    with pytest.raises(ValueError, match=UNROLL_ENV):
        _cupy_and_cuda_python_launches("moving_average", monkeypatch)


def test_warp_kernel_refuses_a_window_past_the_previous_chunk() -> None:
    """W = 32 V + 2 would need a lane two chunks back: a compile error, never a wrong
    result (the launchers take the tiled kernel there, :func:`warp_kernel`)."""
    ok, log, _ = nvrtc_compile(cuda_sources.source("moving_average"), "moving_average.cu",
                               [f"--gpu-architecture=compute_{ARCH}", "-std=c++17"],
                               name_expressions=("moving_average_warp<float, 130, 4>",))
    assert not ok and "the previous" in log, log


def test_warp_kernel_choice() -> None:
    """16 bytes per lane where L and the pointers allow, else 8 or 4; None (the tiled
    kernel) past the largest window or past 32-bit indices."""
    assert warp_kernel(4, 1024, 16, "float32") == ("moving_average_warp<float, 16, 4>", 4)
    assert warp_kernel(4, 1024, 16, "float64") == ("moving_average_warp<double, 16, 2>", 2)
    assert warp_kernel(1, 1002, 16, "float32")[1] == 2
    assert warp_kernel(1, 1001, 16, "float64")[1] == 1
    assert warp_kernel(4, 1024, 16, "float32", (4096, 8))[1] == 2  # 8-byte aligned only
    assert warp_kernel(4, 1024, 129, "float32") and not warp_kernel(4, 1024, 130, "float32")
    assert warp_kernel(4, 1024, 65, "float64") and not warp_kernel(4, 1024, 66, "float64")
    assert not warp_kernel(1, 1001, 34, "float32") and not warp_kernel(4, 1024, 0, "float32")
    assert warp_kernel(2**21 - 1, 1024, 16, "float32")
    assert not warp_kernel(2**21, 1024, 16, "float32")


def _warp_kernel_in_numpy(x: np.ndarray, window: int, v: int) -> np.ndarray:
    """``moving_average_warp``'s indexing in NumPy, chunk by chunk with the warp's 32
    lanes as an axis: each lane's own and (last H lanes) previous-chunk elements,
    ``gpb_back``'s one-shuffle rotation, the masks by col, the slide, the counts. Sums in
    float64: it checks which element goes where, not the rounding."""
    rows, length = x.shape
    packs = x.reshape(-1, v).astype(np.float64)
    out = np.full_like(packs, np.nan)
    q, r = divmod(window - 1, v)
    lane = np.arange(32)

    def back(own: np.ndarray, prev: np.ndarray, d: int) -> np.ndarray:
        offered = np.where(lane >= 32 - d, prev, own)
        return own if d == 0 else offered if d == 32 else offered[(lane - d) % 32]

    for c in range(-(-len(packs) // 32)):
        p = c * 32 + lane
        e, h = np.zeros((32, v)), np.zeros((32, v))
        e[p < len(packs)] = packs[p[p < len(packs)]]
        if c > 0:
            h[lane >= 32 - (q + (r > 0))] = packs[p[lane >= 32 - (q + (r > 0))] - 32]
        col = p * v % length
        s = e[:, 0].copy()
        for d in range(1, q + 1):
            s += np.where(d * v <= col, back(e.sum(1), h.sum(1), d), 0)
        if r:
            s += np.where((q + 1) * v <= col, back(e[:, v - r:].sum(1), h[:, v - r:].sum(1),
                                                   q + 1), 0)
        res = [s.copy()]
        for j in range(1, v):
            d = (window - j + v - 1) // v
            k = j - window + d * v
            s += e[:, j] - np.where(d * v <= col, back(e[:, k], h[:, k], d), 0)
            res.append(s.copy())
        counts = np.minimum(col[:, None] + np.arange(1, v + 1), window)
        ok = p < len(packs)
        out[p[ok]] = (np.stack(res, axis=1) / counts)[ok]
    return out.reshape(rows, length)


@pytest.mark.parametrize(("size", "params", "dtype"), [
    (3000, {}, "float32"), (1000, {}, "float64"), (10, {}, "float32"),
    (4096, {"window": 1}, "float32"), (4096, {"window": 2}, "float64"),
    (4096, {"window": 129}, "float32"), (4096, {"window": 65}, "float64"),
    (300, {"series_length": 24, "window": 30}, "float32"),
    (3003, {"series_length": 1001, "window": 33}, "float64"),
    (3006, {"series_length": 1002, "window": 5}, "float32"),
])
def test_warp_kernel_indexing_in_numpy_matches_the_reference(
        size: int, params: dict, dtype: str) -> None:
    spec = get_kernel("moving_average")
    case = spec.cases(sizes=[size], dtypes=[dtype], params=params)[0]
    x = spec.make_inputs(case, np.random.default_rng(3))["x"]
    found = warp_kernel(*x.shape, int(case.params["window"]), dtype)
    assert found is not None
    got = _warp_kernel_in_numpy(x, int(case.params["window"]), found[1])
    check = spec.check(case, got, spec.reference(case, {"x": x}))
    assert check.passed, check


# -- what the launchers launch ----------------------------------------------------------


class FakeArray:
    """Stands for a device array (CUDA Python DeviceArray or cupy.ndarray)."""

    _next = 0x10000

    def __init__(self, shape: Any, dtype: Any) -> None:
        self.shape = tuple(shape) if isinstance(shape, tuple) else (int(shape),)
        self.dtype = np.dtype(dtype)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        FakeArray._next += 256 * (1 + self.nbytes // 256)
        self.ptr = FakeArray._next
        self.data = SimpleNamespace(ptr=self.ptr)  # as a cupy.ndarray has it


def arg_bytes(arg: Any) -> int:
    """Bytes a kernel argument occupies: pointers and Python ints 8, NumPy scalars theirs."""
    if isinstance(arg, (FakeArray, int)):
        return 8
    assert isinstance(arg, np.generic), f"pass NumPy scalars, not {type(arg).__name__}"
    return arg.dtype.itemsize


class FakeKernel:
    def __init__(self, source: str, name: str, name_expressions: tuple[str, ...] = ()) -> None:
        assert "<" not in name or name in name_expressions, f"{name} is not instantiated"
        self.source, self.name = source, name
        self.occupancy = SimpleNamespace(max_active_blocks_per_multiprocessor=lambda t, s: 8)


def _fake_cuda_python_backend() -> Any:
    """A CudaPythonGPU that records launches instead of touching a device."""
    from gpubench.backends.cuda_python.adapter import CudaPythonGPU

    class Recorder(CudaPythonGPU):
        def __init__(self) -> None:
            self.sm_count, self.arch, self.launches = 132, ARCH, []

        def kernel(self, source: str, name: str,
                   name_expressions: tuple[str, ...] = ()) -> FakeKernel:
            return FakeKernel(source, name, name_expressions)

        def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
            return FakeArray(shape, dtype)

        def zero(self, buffer: Any) -> None:
            pass

        def launch(self, kernel: Any, grid: Any, block: Any, *args: Any, shmem: int = 0) -> None:
            self.launches.append((kernel.source, kernel.name, grid, block, args, shmem))

    return Recorder()


def _fake_cupy(launches: list) -> types.ModuleType:
    """Just enough of ``cupy`` for the RawKernel builders, recording launches."""

    class RawKernel:
        def __init__(self, source: str, name: str) -> None:
            self.source, self.name = source, name
            self.kernel = SimpleNamespace(ptr=1)

        def __call__(self, grid: Any, block: Any, args: tuple, shared_mem: int = 0) -> None:
            launches.append((self.source, self.name, grid, block, args, shared_mem))

    class RawModule:
        def __init__(self, code: str, options: tuple = (), name_expressions: Any = ()) -> None:
            self.code, self.name_expressions = code, tuple(name_expressions)
            assert not any("fast_math" in o for o in options)

        def get_function(self, name: str) -> RawKernel:
            assert "<" not in name or name in self.name_expressions, name
            return RawKernel(self.code, name)

    cupy = types.ModuleType("cupy")
    cupy.RawModule = RawModule
    cupy.cuda = SimpleNamespace(
        driver=SimpleNamespace(occupancyMaxActiveBlocksPerMultiprocessor=lambda f, t, s: 8),
        Device=lambda: SimpleNamespace(attributes={"MultiProcessorCount": 132}))
    cupy.empty = cupy.zeros = lambda shape, dtype: FakeArray(shape, dtype)
    cupy.float64, cupy.uint64 = np.float64, np.uint64
    return cupy


def _cases(kernel: str) -> list[Case]:
    spec = get_kernel(kernel)
    size = 40 if kernel == "matmul" else 5000  # odd tails; 4 series of 1024 + 904 dropped
    return spec.cases(sizes=[size])


#: moving_average beyond the defaults: window 1, the largest windows of the warp
#: kernel's 16-byte lanes (33 and 129: float64 falls back to the tiled kernel at 129),
#: L not a multiple of 16 bytes (narrower lanes), one series shorter than L
MOVING_AVERAGE_ODD = [(4096, {"window": 1}), (4096, {"window": 33}),
                      (4096, {"window": 129}), (3000, {"series_length": 1001}),
                      (3000, {"series_length": 1002, "window": 65}), (700, {})]


def _odd_cases(kernel: str) -> list[Case]:
    spec = get_kernel(kernel)
    return [c for size, params in MOVING_AVERAGE_ODD
            for c in spec.cases(sizes=[size], params=params)]


def _run_builders(kernel: str, framework: str, backend: Any,
                  cases: Callable[[str], list[Case]] | None = None) -> list[tuple]:
    """Build and call every implementation of ``kernel`` in ``framework`` on every case."""
    spec = get_kernel(kernel)
    launches: list[tuple] = []
    for impl in implementations(kernel, framework, "gpu"):
        module = impl.source_file.rsplit(".", 1)[-1]
        if module not in ("with_cuda_python", "with_cupy_raw",
                          "with_cuda_python_sliding", "with_cupy_raw_sliding"):
            continue
        for case in (cases or _cases)(kernel):
            host = spec.make_inputs(case, np.random.default_rng(0))
            inputs = {k: FakeArray(v.shape, v.dtype) for k, v in host.items()}
            outputs = {k: FakeArray(shape, dtype)
                       for k, (shape, dtype) in spec.outputs(case).items()}
            ctx = BuildContext(case, backend, inputs, outputs, 1234, host)
            call = impl.builder(ctx)
            start = len(backend.launches)
            call()
            call()
            new = backend.launches[start:]
            assert new, f"{impl.name} launched nothing"
            launches.extend((impl.name, case, *launch) for launch in new)
    return launches


def _check_launches(launches: list[tuple]) -> None:
    """Each launch names an entry point (a template one by its name expression, compiled
    as the framework would), with its parameters and within its launch bounds."""
    templates = tuple(sorted({launch[3] for launch in launches if "<" in launch[3]}))
    for impl_name, case, source, name, grid, block, args, shmem in launches:
        kernel = next(k for k in CUDA_KERNELS if cuda_sources.source(k) == source)
        entries = ptx_entries(ptx_of(kernel, templates))
        where = f"{impl_name} {case.variant}/{case.dtype}: {name}"
        name = LOWERED.get(name, name)
        assert name in entries, f"{where} is not an entry point of {kernel}.cu"
        assert [arg_bytes(a) for a in args] == entries[name]["params"], where
        grid_t = grid if isinstance(grid, tuple) else (grid,)
        block_t = block if isinstance(block, tuple) else (block,)
        threads = math.prod(block_t)
        assert all(isinstance(g, int) and g >= 1 for g in grid_t), where
        assert 1 <= threads <= (entries[name]["maxntid"] or 1024), where
        assert 0 <= shmem <= 48 * 1024, where


@pytest.mark.parametrize("kernel", CASE_KERNELS)
def test_cuda_python_launches_match_the_ptx(kernel: str) -> None:
    backend = _fake_cuda_python_backend()
    launches = _run_builders(kernel, "cuda_python", backend)
    _check_launches(launches)


def _cupy_and_cuda_python_launches(kernel: str, monkeypatch: pytest.MonkeyPatch,
                                   cases: Callable[[str], list[Case]] | None = None
                                   ) -> tuple[list[tuple], list[tuple]]:
    """What the CuPy RawKernel rows (on a fake ``cupy``) and the CUDA Python rows launch;
    the RawKernel modules' compile caches are cleared around it (fake modules stay out)."""
    import importlib
    import pkgutil

    package = importlib.import_module(f"gpubench.kernels.{kernel}")
    modules = [importlib.import_module(f"{package.__name__}.{m.name}")
               for m in pkgutil.iter_modules(package.__path__)
               if m.name.startswith("with_cupy_raw")]
    caches = [f for m in modules for f in vars(m).values() if hasattr(f, "cache_clear")]
    launches_raw: list = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(launches_raw))
    for f in caches:
        f.cache_clear()
    try:
        backend = SimpleNamespace(launches=launches_raw)
        cupy_launches = _run_builders(kernel, "cupy", backend, cases)
    finally:
        for f in caches:
            f.cache_clear()
    return cupy_launches, _run_builders(kernel, "cuda_python", _fake_cuda_python_backend(),
                                        cases)


def _geometry(launches: list) -> list:
    """(case, entry, grid, block, shmem) of each launch, in an order of their own (the
    registry's order of implementations follows which module was imported first)."""
    out = []
    for _impl, case, _src, name, grid, block, _args, shmem in launches:
        as_tuple = [g if isinstance(g, tuple) else (g,) for g in (grid, block)]
        out.append((case, name, *as_tuple, shmem))
    return sorted(out, key=repr)


@pytest.mark.parametrize("kernel", CASE_KERNELS)
def test_cupy_raw_launches_match_the_ptx_and_cuda_python(
        kernel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cupy_launches, cp_launches = _cupy_and_cuda_python_launches(kernel, monkeypatch)
    _check_launches(cupy_launches)
    # Same source, same entry points, same geometry as the CUDA Python row.
    assert _geometry(cupy_launches) == _geometry(cp_launches)


def test_moving_average_odd_params_launch_like_the_ptx_in_both_frameworks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The sliding rows' choice of kernel (warp kernel of 16, 8 or 4 bytes per lane, or
    the tiled fallback) is the same in both frameworks, and each launch fits its PTX."""
    cupy_launches, cp_launches = _cupy_and_cuda_python_launches(
        "moving_average", monkeypatch, _odd_cases)
    _check_launches(cupy_launches + cp_launches)
    assert _geometry(cupy_launches) == _geometry(cp_launches)
    sliding = {(c.dtype, c.params["window"], c.params["series_length"], name)
               for impl, c, _s, name, *_ in cp_launches if impl == "nvrtc_sliding"}
    assert ("float32", 129, 1024, "moving_average_warp<float, 129, 4>") in sliding
    assert ("float64", 129, 1024, "moving_average_f64") in sliding  # > 32 V + 1: tiled
    assert ("float32", 16, 1001, "moving_average_warp<float, 16, 1>") in sliding
    assert ("float64", 65, 1002, "moving_average_warp<double, 65, 2>") in sliding
    assert ("float32", 16, 1024, "moving_average_warp<float, 16, 4>") in sliding  # 700 < L


def test_monte_carlo_seed_changes_every_call() -> None:
    backend = _fake_cuda_python_backend()
    launches = _run_builders("monte_carlo_pi", "cuda_python", backend)
    counts = [launch for launch in launches if not launch[3].endswith("finalize")]
    # per case two calls: same seed, consecutive call numbers
    for first, second in zip(counts[::2], counts[1::2], strict=True):
        seed1, call1 = first[6][:2]
        seed2, call2 = second[6][:2]
        assert seed1 == seed2 and int(call2) == int(call1) + 1


def test_matmul_naive_is_capped_and_tiled_is_not() -> None:
    impls = {(i.framework, i.name): i for i in implementations("matmul", device="gpu")}
    for key in (("cuda_python", "naive"), ("cupy", "raw_naive")):
        assert impls[key].max_size == 4096
    for key in (("cuda_python", "tiled"), ("cupy", "raw_tiled")):
        assert impls[key].max_size is None


# -- the backend on a machine without a GPU ---------------------------------------------


def _has_gpu() -> bool:
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None


@pytest.mark.skipif(_has_gpu(), reason="a GPU is present: start() may succeed here")
def test_backend_start_without_gpu_is_unavailable_with_reason() -> None:
    backend = load_backend("cuda_python-gpu")
    with pytest.raises(Unavailable) as info:
        backend.start(1)
    assert str(info.value).strip()


def test_backend_start_without_cuda_packages_is_unavailable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import fail, as if not installed.
    for name in ("cuda.core", "cuda.core.experimental", "cuda.bindings"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(Unavailable) as info:
        load_backend("cuda_python-gpu").start(1)
    assert "import" in str(info.value)


def test_backend_start_wraps_any_driver_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("cuda.bindings.driver")
    from cuda.bindings import driver

    def broken(flags: int) -> None:
        raise KeyError("something unexpected")

    monkeypatch.setattr(driver, "cuInit", broken)
    with pytest.raises(Unavailable) as info:
        load_backend("cuda_python-gpu").start(1)
    assert "KeyError" in str(info.value)


def test_grid_blocks_is_one_wave_at_most() -> None:
    from gpubench.cuda_launch import grid_blocks

    assert grid_blocks(1, 8, 132) == 1
    assert grid_blocks(256 * 10 + 1, 8, 132) == 11
    assert grid_blocks(10**9, 8, 132) == 8 * 132
    assert grid_blocks(0, 0, 0) == 1


# -- Philox4x32-10 ----------------------------------------------------------------------

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF

#: Random123's kat_vectors for philox4x32 with 10 rounds: (counter, key, output)
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK, MASK, MASK, MASK), (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox4x32_10(ctr: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Python port of the ``.cu``'s philox4x32_10 on a (4, m) uint64 array of 32-bit words."""
    c = [np.asarray(w, dtype=np.uint64) for w in ctr]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(MASK)
    for rnd in range(10):
        if rnd:
            k0, k1 = (k0 + np.uint64(W0)) & mask, (k1 + np.uint64(W1)) & mask
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & mask
        hi1, lo1 = p1 >> np.uint64(32), p1 & mask
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return np.stack(c)


@pytest.mark.parametrize(("ctr", "key", "expected"), PHILOX_KAT)
def test_philox_port_matches_random123(ctr: tuple, key: tuple, expected: tuple) -> None:
    out = philox4x32_10(np.array(ctr, dtype=np.uint64).reshape(4, 1), key)
    assert tuple(int(w) for w in out[:, 0]) == expected


@pytest.mark.skipif(shutil.which("g++") is None, reason="no host C++ compiler")
def test_philox_in_the_cu_file_matches_random123(tmp_path: Path) -> None:
    """Compile the .cu's PHILOX section for the host and run the known-answer vectors."""
    text = cuda_sources.source("monte_carlo_pi")
    section = text.split("// BEGIN PHILOX")[1].split("// END PHILOX")[0].split("\n", 1)[1]
    lines = [f"{{PhiloxBlock c = {{{{{', '.join(f'{w}u' for w in ctr)}}}}}; "
             f"PhiloxBlock r = philox4x32_10(c, {key[0]}u, {key[1]}u); "
             f'printf("%u %u %u %u\\n", r.v[0], r.v[1], r.v[2], r.v[3]);}}'
             for ctr, key, _ in PHILOX_KAT]
    program = ("#include <cstdio>\n#define __device__\n#define __forceinline__ inline\n"
               + section + "\nint main() {\n" + "\n".join(lines) + "\nreturn 0;\n}\n")
    src, exe = tmp_path / "philox.cpp", tmp_path / "philox"
    src.write_text(program)
    subprocess.run(["g++", "-O1", "-Wno-unknown-pragmas", "-o", str(exe), str(src)],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    got = [tuple(int(w) for w in line.split()) for line in out.splitlines()]
    assert got == [expected for _, _, expected in PHILOX_KAT]


def _pi_like_the_kernel(n: int, dtype: str, seed: int, call: int) -> float:
    """What ``monte_carlo_pi_<dtype>`` + finalize compute, in NumPy (the same draws)."""
    pairs = (n + 1) // 2 if dtype == "float32" else n
    j = np.arange(pairs, dtype=np.uint64)
    mask = np.uint64(MASK)
    ctr = np.stack([j & mask, j >> np.uint64(32),
                    np.full_like(j, call & MASK), np.full_like(j, call >> 32)])
    r = philox4x32_10(ctr, (seed & MASK, seed >> 32))
    if dtype == "float32":
        u = (r >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-24)
        second = n - pairs  # Philox block j holds samples 2j and (if < n) 2j + 1
        x = np.concatenate([u[0], u[2][:second]])
        y = np.concatenate([u[1], u[3][:second]])
        hits = np.count_nonzero(x * x + y * y <= np.float32(1.0))
    else:
        hi_lo = lambda hi, lo: ((hi << np.uint64(32)) | lo) >> np.uint64(11)  # noqa: E731
        x = hi_lo(r[0], r[1]).astype(np.float64) * 2.0**-53
        y = hi_lo(r[2], r[3]).astype(np.float64) * 2.0**-53
        hits = np.count_nonzero(x * x + y * y <= 1.0)
    return 4.0 * hits / n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_philox_points_estimate_pi_within_the_spec(dtype: str) -> None:
    """The kernel's uniforms give unbiased estimates: a few calls, all within 6 sigma."""
    spec = get_kernel("monte_carlo_pi")
    n = 100_001  # odd: the float32 kernel's last Philox block holds one sample
    case = Case("monte_carlo_pi", "default", n, dtype)
    estimates = [_pi_like_the_kernel(n, dtype, 0x1234_5678_9ABC, call) for call in range(3)]
    assert len(set(estimates)) == 3, "each call must draw fresh points"
    for est in estimates:
        assert spec.check(case, est, math.pi).passed, est


def test_a_compile_error_names_the_file_and_carries_no_nul() -> None:
    """NVRTC's log goes into the row's reason (and the CSV): readable, the file named."""
    pytest.importorskip("cuda.core")
    from gpubench.backends.cuda_python.adapter import compile_module
    from gpubench.cuda_sources import source

    broken = source("vector_add") + "\nint broken(;\n"
    with pytest.raises(RuntimeError) as info:
        compile_module(broken, arch="90")
    text = str(info.value)
    assert text.startswith("NVRTC compile failed")
    assert "\x00" not in text and "default_program" not in text
    assert "vector_add.cu(" in text
