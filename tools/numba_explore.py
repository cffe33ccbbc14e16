"""Exploration on the H100: launch shapes of Numba's elementwise kernels at 2**26.

Why: in the suite, Numba's ``cuda_jit`` float32 sigmoid ran at 77-78% of the copy
ceiling both with one and with two elements per grid-stride trip, and float64 hypot
fell from 91% to 45-62% with two. Each variant below is timed by CUDA events around
each of 30 back-to-back launches (launches queued ahead, so their cost is hidden) and
checked against NumPy. Run: PYTHONPATH=src python3 tools/numba_explore.py
"""
import math
import os
import statistics

import numpy as np

from gpubench.backends.numba.gpu import device_limits, import_cuda
from gpubench.kernels.elementwise.with_numba import _scalar

cuda = import_cuda()
N = int(os.environ.get("EXPLORE_N", 1 << 26))  # small under the CUDA simulator
TPB = 32 if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else 256
SMS, PER_SM = device_limits()
WAVE = SMS * (PER_SM // TPB)


def kernels(f, nargs):
    """name -> (kernel, blocks) for the launch shapes under test."""
    if nargs == 1:
        @cuda.jit
        def loop1(a, out):
            for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
                out[i] = f(a[i])

        @cuda.jit
        def loop2(a, out):
            n, step = out.shape[0], cuda.gridsize(1)
            i = cuda.grid(1)
            while i + step < n:
                x0, x1 = a[i], a[i + step]
                out[i] = f(x0)
                out[i + step] = f(x1)
                i += 2 * step
            if i < n:
                out[i] = f(a[i])

        @cuda.jit
        def loop4(a, out):
            n, step = out.shape[0], cuda.gridsize(1)
            i = cuda.grid(1)
            while i + 3 * step < n:
                x0, x1, x2, x3 = a[i], a[i + step], a[i + 2 * step], a[i + 3 * step]
                out[i] = f(x0)
                out[i + step] = f(x1)
                out[i + 2 * step] = f(x2)
                out[i + 3 * step] = f(x3)
                i += 4 * step
            while i < n:
                out[i] = f(a[i])
                i += step

        @cuda.jit
        def flat(a, out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = f(a[i])
    else:
        @cuda.jit
        def loop1(a, b, out):
            for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
                out[i] = f(a[i], b[i])

        @cuda.jit
        def loop2(a, b, out):
            n, step = out.shape[0], cuda.gridsize(1)
            i = cuda.grid(1)
            while i + step < n:
                x0, y0, x1, y1 = a[i], b[i], a[i + step], b[i + step]
                out[i] = f(x0, y0)
                out[i + step] = f(x1, y1)
                i += 2 * step
            if i < n:
                out[i] = f(a[i], b[i])

        @cuda.jit
        def loop4(a, b, out):
            n, step = out.shape[0], cuda.gridsize(1)
            i = cuda.grid(1)
            while i + 3 * step < n:
                x0, x1, x2, x3 = a[i], a[i + step], a[i + 2 * step], a[i + 3 * step]
                y0, y1, y2, y3 = b[i], b[i + step], b[i + 2 * step], b[i + 3 * step]
                out[i] = f(x0, y0)
                out[i + step] = f(x1, y1)
                out[i + 2 * step] = f(x2, y2)
                out[i + 3 * step] = f(x3, y3)
                i += 4 * step
            while i < n:
                out[i] = f(a[i], b[i])
                i += step

        @cuda.jit
        def flat(a, b, out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = f(a[i], b[i])
    full = math.ceil(N / TPB)
    return {"loop1 x1 wave": (loop1, WAVE), "loop2 x1 wave": (loop2, WAVE),
            "loop4 x1 wave": (loop4, WAVE), "loop1 x4 waves": (loop1, 4 * WAVE),
            "loop2 x4 waves": (loop2, 4 * WAVE), "loop1 full grid": (loop1, full),
            "flat (1 per thread)": (flat, full)}


def time_launches(launch, reps=30):
    events = [(cuda.event(), cuda.event()) for _ in range(reps)]
    for s, e in events:
        s.record()
        launch()
        e.record()
    events[-1][1].synchronize()
    return statistics.median(s.elapsed_time(e) / 1e3 for s, e in events)


rng = np.random.default_rng(0)
src = cuda.to_device(rng.random(N).astype(np.float32))
dst = cuda.device_array(N, np.float32)
for _ in range(3):
    dst.copy_to_device(src)
copy_s = time_launches(lambda: dst.copy_to_device(src))
ceiling = 2 * N * 4 / copy_s / 1e9
print(f"device copy (cudaMemcpyDtoD, float32 2^26): {ceiling:.0f} GB/s", flush=True)
print(f"SMs {SMS}, threads per SM {PER_SM}, one wave = {WAVE} blocks of {TPB}")
for variant, dtype in [("sigmoid", "float32"), ("hypot", "float32"), ("hypot", "float64"),
                       ("sigmoid", "float64"), ("rational", "float32")]:
    nargs = 1 if variant == "sigmoid" else 2
    f = cuda.jit(device=True)(_scalar(variant, dtype))
    host = [(rng.random(N) + 0.5).astype(dtype) for _ in range(nargs)]
    args = [cuda.to_device(h) for h in host]
    out = cuda.device_array(N, dtype)
    x64 = [h.astype(np.float64) for h in host]
    ref = {"sigmoid": lambda x: 1 / (1 + np.exp(-x)), "hypot": np.hypot,
           "rational": lambda x, y: (x * 2 + y * 3) / (x + y + 1.0)}[variant](*x64)
    nbytes = (nargs + 1) * N * np.dtype(dtype).itemsize
    for name, (k, blocks) in kernels(f, nargs).items():
        launch = k[blocks, TPB]
        out[:1].copy_to_device(np.full(1, np.nan, dtype))
        launch(*args, out)
        cuda.synchronize()
        err = float(np.max(np.abs(out.copy_to_host() - ref)))
        for _ in range(3):
            launch(*args, out)
        t = time_launches(lambda launch=launch, args=args, out=out: launch(*args, out))
        regs = k.get_regs_per_thread() if hasattr(k, "get_regs_per_thread") else "?"
        print(f"{variant:8s} {dtype}  {name:20s} {t * 1e6:8.1f} us  "
              f"{nbytes / t / 1e9:6.0f} GB/s  {100 * nbytes / t / 1e9 / ceiling:5.1f}%  "
              f"max|err| {err:.1e}  regs {regs}", flush=True)
