"""``moving_average.cu`` run on the host: both entry points against the kernel's reference.

NVRTC only compiles the CUDA C here (tests/test_cuda_sources.py); this runs it. The
``.cu`` is included into a small C++20 program that plays the GPU: a block is
``blockDim.x`` ``std::thread`` s that share one buffer as dynamic shared memory, and
``__syncthreads()`` is a ``std::barrier``; blocks run one after another, so
``gridDim.x = 3`` covers the grid-stride loop over tiles. Blocks of 64 threads (tiles of
256 outputs) keep the thread count small and put several tiles in a row.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpubench import cuda_sources
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
alignas(16) unsigned char gpb_smem[1 << 20];

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__
#define __align__(n)
#define __syncthreads() gpb_barrier->arrive_and_wait()

#include "moving_average.cu"

template <typename T, typename K>
void launch(K kernel, const T* x, T* out, long long rows, long long length, long long window,
            unsigned threads, unsigned blocks) {
    blockDim.x = threads;
    gridDim.x = blocks;
    for (unsigned b = 0; b < blocks; ++b) {
        blockIdx.x = b;
        std::barrier<> bar(threads);
        gpb_barrier = &bar;
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] { threadIdx.x = t; kernel(x, out, rows, length, window); });
        for (auto& th : pool) th.join();
    }
}

template <typename T>
int run(const char* entry, const char* in, const char* outp, long long rows, long long length,
        long long window) {
    const long long n = rows * length;
    std::vector<T> x(n), out(n);
    FILE* f = std::fopen(in, "rb");
    if (!f || std::fread(x.data(), sizeof(T), n, f) != (size_t)n) return 2;
    std::fclose(f);
    const bool sliding = std::strstr(entry, "sliding") != nullptr;
    if constexpr (sizeof(T) == 4)
        launch<T>(sliding ? moving_average_sliding_f32 : moving_average_f32, x.data(),
                  out.data(), rows, length, window, 64, 3);
    else
        launch<T>(sliding ? moving_average_sliding_f64 : moving_average_f64, x.data(),
                  out.data(), rows, length, window, 64, 3);
    f = std::fopen(outp, "wb");
    std::fwrite(out.data(), sizeof(T), n, f);
    std::fclose(f);
    return 0;
}

int main(int argc, char** argv) {
    // entry dtype in out rows length window
    const long long rows = std::atoll(argv[4]), length = std::atoll(argv[5]);
    const long long window = std::atoll(argv[6]);
    if (std::strcmp(argv[2], "float32") == 0)
        return run<float>(argv[1], argv[3], argv[7], rows, length, window);
    return run<double>(argv[1], argv[3], argv[7], rows, length, window);
}
"""


@pytest.fixture(scope="module")
def host_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("no host C++ compiler (g++)")
    where = tmp_path_factory.mktemp("moving_average_host")
    (where / "moving_average.cu").write_text(cuda_sources.source("moving_average"))
    (where / "main.cpp").write_text(HARNESS)
    exe = where / "main"
    proc = subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", "-Wno-unknown-pragmas",
                           "-I", str(where), "-o", str(exe), str(where / "main.cpp")],
                          capture_output=True, text=True)
    if proc.returncode != 0 and "barrier" in proc.stderr:
        pytest.skip(f"the host compiler lacks C++20 <barrier>: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exe


# (rows, length, window): partial last tiles, windows longer than a thread's run and
# than a tile's halo spans, a row shorter than the window, window 1
SHAPES = [(3, 1000, 16), (2, 300, 37), (1, 10, 16), (4, 257, 1), (5, 700, 300)]


@pytest.mark.parametrize("entry", ["moving_average", "moving_average_sliding"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("rows", "length", "window"), SHAPES)
def test_cuda_c_matches_the_reference_on_the_host(
        host_program: Path, tmp_path: Path, entry: str, dtype: str, rows: int, length: int,
        window: int) -> None:
    spec = get_kernel("moving_average")
    case = spec.cases(sizes=[rows * length], dtypes=[dtype],
                      params={"window": window, "series_length": length})[0]
    host = spec.make_inputs(case, np.random.default_rng(7))
    assert host["x"].shape == (rows, length)
    src, dst = tmp_path / "x.bin", tmp_path / "out.bin"
    host["x"].tofile(src)
    subprocess.run([str(host_program), entry, dtype, str(src), str(rows), str(length),
                    str(window), str(dst)], check=True, capture_output=True, timeout=120)
    out = np.fromfile(dst, dtype=dtype).reshape(rows, length)
    check = spec.check(case, out, spec.reference(case, host))
    assert check.passed, check
