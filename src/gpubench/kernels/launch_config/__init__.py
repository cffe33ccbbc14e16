"""launch_config: one computation launched at 64, 128, 256, 512 and 1024 threads per block.

The workshop book (§2.8, §4.11.1) teaches choosing the threads per block; the suite's
hand-written GPU kernels all launch 256. This kernel measures that choice: each variant
is one computation at one block size (``<work>_<threads>``), launched by Numba CUDA,
CuPy's RawKernel and CUDA Python exactly as their ``vector_add`` rows launch (a
grid-stride loop over at most one wave of resident blocks), so that the rows of one
work differ in the block size alone. Each row records its theoretical occupancy
(:mod:`gpubench.occupancy`). The report's "Block size" section names each framework's
fastest block size and what its default gives up.

=====  ==========================================  ===================  ===========
work   formula                                     bytes per element    flops
=====  ==========================================  ===================  ===========
add    c = a + b (vector_add's code)               3 x itemsize         1
poly   y = a; 64 times y = y * a + b; c = y        3 x itemsize         128
=====  ==========================================  ===================  ===========

``add`` is memory-bound; ``poly`` moves the same bytes with 128 flops per element in a
chain of dependent multiply-adds, where a warp waits on each step and more resident
warps (occupancy) are what hides that latency.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gpubench.backends.numba.gpu import THREADS_PER_BLOCK
from gpubench.cuda_launch import THREADS
from gpubench.hostpar import elementwise64
from gpubench.spec import Case, KernelSpec, itemsize, random_array

#: threads per block the sweep measures
BLOCK_SIZES = (64, 128, 256, 512, 1024)
#: the computations it measures them on
WORKS = ("add", "poly")
#: multiply-adds per element of ``poly`` (also in launch_config.cu and with_numba_cuda.py)
POLY_STEPS = 64
#: each framework's default: the block size its own hand-written kernels launch with
DEFAULT_BLOCKS: dict[str, int] = {"numba": THREADS_PER_BLOCK, "cupy": THREADS,
                                  "cuda_python": THREADS}


def variant_name(work: str, threads: int) -> str:
    """``add_256``: the variant of ``work`` launched at ``threads`` per block."""
    return f"{work}_{threads}"


def parse_variant(variant: str) -> tuple[str, int]:
    """(work, threads per block) of a variant name; ValueError for any other name."""
    work, _, threads = variant.rpartition("_")
    if work not in WORKS or not threads.isdigit() or int(threads) not in BLOCK_SIZES:
        raise ValueError(f"launch_config variant {variant!r}: not <work>_<threads> "
                         f"with work in {WORKS} and threads in {BLOCK_SIZES}")
    return work, int(threads)


def poly64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``poly``'s reference: the same chain of multiply-adds, in the arrays' precision."""
    y = a.copy()
    for _ in range(POLY_STEPS):
        y *= a
        y += b
    return y


class LaunchConfig(KernelSpec):
    name = "launch_config"
    order = 105
    bound = "memory"
    ceiling = "copy"
    unit = "GB/s"
    #: in no workload class: its rows are one implementation at five launch settings,
    #: which the class verdicts would count five times
    report_class = None
    target_pct = 0
    description = ("vector_add and a 64-step multiply-add chain at 64 to 1024 threads per "
                   "block (hand-written GPU kernels only)")
    size_meaning = "elements"
    variants = tuple(variant_name(w, t) for w in WORKS for t in BLOCK_SIZES)
    default_sizes = (1 << 20, 1 << 24, 1 << 26)
    block_sweep: Mapping[str, tuple[str, int]] = {v: parse_variant(v) for v in variants}
    default_blocks: Mapping[str, int] = DEFAULT_BLOCKS
    # poly: 64 roundings in a chain (each multiply-add rounded once or twice) stay below
    # 1e-5 in float32 and 1e-13 in float64 in the 2-norm
    tolerances: Mapping[str, float] = {"float32": 2e-5, "float64": 1e-13}

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"a": random_array(rng, case.size, case.dtype),
                "b": random_array(rng, case.size, case.dtype)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        work, _ = parse_variant(case.variant)
        fn = np.add if work == "add" else poly64
        return elementwise64(fn, inputs["a"], inputs["b"])

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        return {"c": ((case.size,), case.dtype)}

    def bytes_moved(self, case: Case) -> float:
        return 3.0 * case.size * itemsize(case.dtype)

    def flops(self, case: Case) -> float:
        work, _ = parse_variant(case.variant)
        return float(case.size) * (1 if work == "add" else 2 * POLY_STEPS)

    def memory_bytes(self, case: Case) -> float:
        return 3.0 * self.bytes_moved(case) + 8.0 * case.size


SPEC = LaunchConfig()
