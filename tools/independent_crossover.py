"""An independent caller-side check of the vector_add float32 crossover, outside gpubench.

Plain ``time.perf_counter`` loops, no gpubench import: NumPy's ``np.add(a, b, out=c)``
on the host against each GPU framework's plainest call with the data already on the
device, at every power of two from 2**8 to 2**24 elements. A GPU sample is ``REPS`` calls
back to back and one device-wide wait, divided by ``REPS`` (pipelined), or one call and
a wait (sync); NumPy's is at least ``REPS`` calls (and 200 µs) divided by their number.
Each time is the median of ``ROUNDS`` samples. NumPy's sweep runs three times, before,
between and after the GPU frameworks, and keeps the median of the three per size (the
host's state drifts over a minute; calls 3 and 4 kept the lower of two passes run back
to back). The crossover is
the smallest size from which the GPU is faster at every larger size, interpolated
log-log as the report does.

    python3 tools/independent_crossover.py > independent_crossover.csv
"""

from __future__ import annotations

import math
import statistics
import sys
import time

import numpy as np

SIZES = [2**k for k in range(8, 25)]
ROUNDS = 21
REPS = 50


def median_per_call(call, wait, reps: int) -> float:
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        wait()
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


def numpy_time(n: int) -> float:
    rng = np.random.default_rng(n)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.empty_like(a)
    t0 = time.perf_counter()
    for _ in range(10):
        np.add(a, b, out=c)
    once = (time.perf_counter() - t0) / 10
    reps = max(REPS, math.ceil(200e-6 / max(once, 1e-9)))
    return median_per_call(lambda: np.add(a, b, out=c), lambda: None, reps)


def cupy_calls(n: int):
    import cupy as cp

    a = cp.random.random(n, dtype=cp.float32)
    b = cp.random.random(n, dtype=cp.float32)
    c = cp.empty_like(a)
    return (lambda: cp.add(a, b, out=c)), cp.cuda.runtime.deviceSynchronize


def cupy_kernel_calls(n: int, raw: bool):
    """CuPy's own kernels: an ElementwiseKernel, or a RawKernel launched by hand."""
    import cupy as cp

    a = cp.random.random(n, dtype=cp.float32)
    b = cp.random.random(n, dtype=cp.float32)
    c = cp.empty_like(a)
    if not raw:
        add = cp.ElementwiseKernel("T x, T y", "T z", "z = x + y", "check_add")
        return (lambda: add(a, b, c)), cp.cuda.runtime.deviceSynchronize
    add = cp.RawKernel(r"""extern "C" __global__ void check_add(const float* a,
        const float* b, float* c, long long n) {
      for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
           i += (long long)gridDim.x * blockDim.x) c[i] = a[i] + b[i]; }""", "check_add")
    blocks = min((n + 255) // 256, 132 * 8)
    args = (a, b, c, np.int64(n))
    return (lambda: add((blocks,), (256,), args)), cp.cuda.runtime.deviceSynchronize


def torch_calls(n: int):
    import torch

    a = torch.rand(n, device="cuda")
    b = torch.rand(n, device="cuda")
    c = torch.empty_like(a)
    return (lambda: torch.add(a, b, out=c)), torch.cuda.synchronize


def jax_calls(n: int):
    import jax
    import jax.numpy as jnp

    add = jax.jit(jnp.add)
    a = jax.device_put(np.random.default_rng(n).random(n, dtype=np.float32))
    b = jax.device_put(np.random.default_rng(n + 1).random(n, dtype=np.float32))
    last = [add(a, b)]

    def call():
        last[0] = add(a, b)

    return call, lambda: last[0].block_until_ready()


def crossover(sizes, gpu, cpu) -> float:
    wins = [g < c for g, c in zip(gpu, cpu, strict=True)]
    if not wins[-1]:
        return math.nan
    k = len(sizes) - 1
    while k > 0 and wins[k - 1]:
        k -= 1
    if k == 0:
        return float(sizes[0])
    r_lo = math.log(gpu[k - 1] / cpu[k - 1])
    r_hi = math.log(gpu[k] / cpu[k])
    frac = r_lo / (r_lo - r_hi)
    return math.exp(math.log(sizes[k - 1]) + frac * (math.log(sizes[k]) - math.log(sizes[k - 1])))


def main() -> int:
    passes = [[numpy_time(n) for n in SIZES]]
    print("framework,clock,size,seconds_per_call")
    summary = []
    gpu_rows = []
    makers = (("cupy", cupy_calls),
              ("cupy_elementwise_kernel", lambda n: cupy_kernel_calls(n, raw=False)),
              ("cupy_raw_kernel", lambda n: cupy_kernel_calls(n, raw=True)),
              ("torch", torch_calls), ("jax", jax_calls))
    for i, (name, make) in enumerate(makers):
        if i == 2:  # the second NumPy pass, between the GPU frameworks
            passes.append([numpy_time(n) for n in SIZES])
        try:
            per = {"pipelined": [], "sync": []}
            for n in SIZES:
                call, wait = make(n)
                for _ in range(5):
                    call()
                wait()
                per["pipelined"].append(median_per_call(call, wait, REPS))
                per["sync"].append(median_per_call(call, wait, 1))
        except Exception as exc:  # noqa: BLE001 - a framework missing here is a line
            print(f"# {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        gpu_rows.append((name, per))
    passes.append([numpy_time(n) for n in SIZES])
    cpu = [statistics.median(ts) for ts in zip(*passes, strict=True)]
    for k, times in enumerate(passes):
        for n, t in zip(SIZES, times, strict=True):
            print(f"numpy,wall_pass{k + 1},{n},{t:.6e}")
    for n, t in zip(SIZES, cpu, strict=True):
        print(f"numpy,wall,{n},{t:.6e}")
    for name, per in gpu_rows:
        for clock, times in per.items():
            for n, t in zip(SIZES, times, strict=True):
                print(f"{name},{clock},{n},{t:.6e}")
            summary.append(f"# {name} {clock}: GPU faster than NumPy from about "
                           f"{crossover(SIZES, times, cpu):,.0f} elements")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
