"""``moving_average.cu`` run on the host: both kernels against the kernel's reference.

NVRTC only compiles the CUDA C here (tests/test_cuda_sources.py); this runs it. The
``.cu`` is included into a small C++20 program that plays the GPU: a block is
``blockDim.x`` ``std::thread`` s that share one buffer as dynamic shared memory,
``__syncthreads()`` is a ``std::barrier`` and ``__shfl_sync`` exchanges values through
a per-warp slot array between two per-warp barriers; blocks run one after another, so
``gridDim.x = 3`` covers the grid-stride loops. Blocks of 64 threads (tiles of 256
outputs; two warps) keep the thread count small and put several tiles or warp chunks in
a row. The warp kernel's instantiations are the ones the launchers would choose
(:func:`warp_kernel`), compiled into the program from a table made here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpubench import cuda_sources
from gpubench.kernels.moving_average.with_cuda_python_sliding import CTYPES, warp_kernel
from gpubench.spec import get_kernel

HARNESS = r"""
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

struct Dim { unsigned x = 0, y = 0, z = 0; };
thread_local Dim threadIdx;
Dim blockIdx, blockDim, gridDim;
std::barrier<>* gpb_barrier = nullptr;
std::barrier<>* gpb_warp_barrier[32];
alignas(16) unsigned char gpb_smem[1 << 20];
alignas(8) unsigned char gpb_lanes[32][32][8];

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__
#define __align__(n)
#define __syncthreads() gpb_barrier->arrive_and_wait()

// every lane of the warp offers v, then reads lane src's offer
template <typename T>
T __shfl_sync(unsigned, T v, int src) {
    const unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
    std::memcpy(gpb_lanes[w][lane], &v, sizeof(T));
    gpb_warp_barrier[w]->arrive_and_wait();
    T r;
    std::memcpy(&r, gpb_lanes[w][src & 31], sizeof(T));
    gpb_warp_barrier[w]->arrive_and_wait();
    return r;
}

#include "moving_average.cu"

template <typename K>
void launch(K kernel, unsigned threads, unsigned blocks) {
    blockDim.x = threads;
    gridDim.x = blocks;
    for (unsigned b = 0; b < blocks; ++b) {
        blockIdx.x = b;
        std::barrier<> bar(threads);
        gpb_barrier = &bar;
        std::vector<std::barrier<>*> warps;
        for (unsigned w = 0; w < threads / 32; ++w)
            warps.push_back(gpb_warp_barrier[w] = new std::barrier<>(32));
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] { threadIdx.x = t; kernel(); });
        for (auto& th : pool) th.join();
        for (auto* w : warps) delete w;
    }
}

template <typename T>
int run(const char* entry, const char* in, const char* outp, long long rows, long long length,
        long long window, int v, int u) {
    const long long n = rows * length;
    std::vector<T> x(n), out(n);
    FILE* f = std::fopen(in, "rb");
    if (!f || std::fread(x.data(), sizeof(T), n, f) != (size_t)n) return 2;
    std::fclose(f);
    const T* xp = x.data();
    T* op = out.data();
    if (std::strcmp(entry, "warp") == 0) {
        bool found = false;
        WARP_TABLE
        if (!found) return 3;
    } else if constexpr (sizeof(T) == 4) {
        launch([&] { moving_average_f32(xp, op, rows, length, window); }, 64, 3);
    } else {
        launch([&] { moving_average_f64(xp, op, rows, length, window); }, 64, 3);
    }
    f = std::fopen(outp, "wb");
    std::fwrite(out.data(), sizeof(T), n, f);
    std::fclose(f);
    return 0;
}

int main(int argc, char** argv) {
    // entry dtype in rows length window out v u
    const long long rows = std::atoll(argv[4]), length = std::atoll(argv[5]);
    const long long window = std::atoll(argv[6]);
    const int v = std::atoi(argv[8]), u = std::atoi(argv[9]);
    if (std::strcmp(argv[2], "float32") == 0)
        return run<float>(argv[1], argv[3], argv[7], rows, length, window, v, u);
    return run<double>(argv[1], argv[3], argv[7], rows, length, window, v, u);
}
"""

# (rows, length, window): partial last tiles, windows longer than a thread's run and
# than a tile's halo spans, a row shorter than the window, window 1
SHAPES = [(3, 1000, 16), (2, 300, 37), (1, 10, 16), (4, 257, 1), (5, 700, 300)]
# and for the warp kernel: V = 1 at its largest window (32 V + 1, the whole previous
# chunk), the largest windows of V = 4 / 2, rows shorter than a chunk (several row
# starts in one warp, windows reaching over several rows' starts), one long row
WARP_SHAPES = [*SHAPES, (3, 1001, 33), (2, 1000, 129), (2, 1000, 65), (9, 24, 30),
               (7, 96, 40), (1, 4096, 5), (3, 1002, 2)]
DTYPES = ("float32", "float64")
# (dtype, rows, length, window, V, U) of every warp case the launchers would run, with
# U = 1 and (where the launchers take it) U = 2: 3 blocks of 2 warps take U chunks each
# per step, so rows of more than 6 U chunks run the U loop and the remainder
WARP_CASES = [(dt, r, n, w, found[1], u) for dt in DTYPES for r, n, w in WARP_SHAPES
              for u in (1, 2)
              if (found := warp_kernel(r, n, w, dt, unroll=u)) is not None
              and found[0].count(",") == u + 1]


def _table() -> str:
    """The warp kernel's instantiations the cases need, chosen at run time by (window, V)."""
    lines = []
    for dtype, w, v, u in sorted({(dt, w, v, u) for dt, _, _, w, v, u in WARP_CASES}):
        lines.append(f"if constexpr (sizeof(T) == {np.dtype(dtype).itemsize}) "
                     f"if (window == {w} && v == {v} && u == {u}) {{ found = true; "
                     f"launch([&] {{ moving_average_warp<{CTYPES[dtype]}, {w}, {v}, {u}>"
                     "(xp, op, (int)n, (int)length); }, 64, 3); }")
    return "\n        ".join(lines)


@pytest.fixture(scope="module")
def host_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("no host C++ compiler (g++)")
    where = tmp_path_factory.mktemp("moving_average_host")
    (where / "moving_average.cu").write_text(cuda_sources.source("moving_average"))
    (where / "main.cpp").write_text(HARNESS.replace("WARP_TABLE", _table()))
    exe = where / "main"
    proc = subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", "-Wno-unknown-pragmas",
                           "-I", str(where), "-o", str(exe), str(where / "main.cpp")],
                          capture_output=True, text=True)
    if proc.returncode != 0 and "barrier" in proc.stderr:
        pytest.skip(f"the host compiler lacks C++20 <barrier>: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exe


def _run(exe: Path, tmp_path: Path, entry: str, dtype: str, rows: int, length: int,
         window: int, v: int = 0, u: int = 1) -> None:
    spec = get_kernel("moving_average")
    case = spec.cases(sizes=[rows * length], dtypes=[dtype],
                      params={"window": window, "series_length": length})[0]
    host = spec.make_inputs(case, np.random.default_rng(7))
    assert host["x"].shape == (rows, length)
    src, dst = tmp_path / "x.bin", tmp_path / "out.bin"
    host["x"].tofile(src)
    subprocess.run([str(exe), entry, dtype, str(src), str(rows), str(length), str(window),
                    str(dst), str(v), str(u)], check=True, capture_output=True, timeout=120)
    out = np.fromfile(dst, dtype=dtype).reshape(rows, length)
    check = spec.check(case, out, spec.reference(case, host))
    assert check.passed, check


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("rows", "length", "window"), SHAPES)
def test_tiled_kernel_matches_the_reference_on_the_host(
        host_program: Path, tmp_path: Path, dtype: str, rows: int, length: int,
        window: int) -> None:
    _run(host_program, tmp_path, "tiled", dtype, rows, length, window)


@pytest.mark.parametrize(("dtype", "rows", "length", "window", "v", "u"), WARP_CASES)
def test_warp_kernel_matches_the_reference_on_the_host(
        host_program: Path, tmp_path: Path, dtype: str, rows: int, length: int, window: int,
        v: int, u: int) -> None:
    _run(host_program, tmp_path, "warp", dtype, rows, length, window, v, u)


def test_the_warp_cases_cover_every_width_and_the_largest_windows() -> None:
    got = {(dt, v) for dt, *_, v, _u in WARP_CASES}
    assert got == {("float32", 4), ("float32", 2), ("float32", 1), ("float64", 2),
                   ("float64", 1)}
    assert {(dt, v) for dt, *_, v, u in WARP_CASES if u == 2} == got  # U = 2 at every V
    assert {(dt, w) for dt, _, _, w, v, _u in WARP_CASES if w == 32 * v + 1} == {
        ("float32", 129), ("float32", 33), ("float64", 65), ("float64", 33)}
