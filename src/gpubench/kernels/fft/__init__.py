"""fft: complex FFT, 1D over N points and 2D ``fftn`` over an N-element grid (the
Numba/CuPy guide; the workshop book, §3.4).

Sizes are total elements N and must be powers of two: the 2D grid is
2**(k//2) × N / 2**(k//2) for N = 2**k (square when k is even), and power-of-two
lengths keep every library on its fastest radix path, so rows compare like with like.
Inputs are drawn symmetric around zero: all-positive data would put most of the
spectrum's norm in the single DC bin and hide errors in the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, KernelSpec, itemsize, random_array


def grid_shape(case: Case) -> tuple[int, ...]:
    """The array shape of a case: (N,) for "1d", near-square (rows, cols) for "2d"."""
    n = case.size
    if n < 2 or n & (n - 1):
        raise ValueError(f"fft sizes must be powers of two >= 2 (total elements N); "
                         f"got {n}")
    if case.variant == "1d":
        return (n,)
    rows = 1 << ((n.bit_length() - 1) // 2)
    return (rows, n // rows)


class FFT(KernelSpec):
    name = "fft"
    order = 50
    bound = "memory"
    ceiling = "copy"
    unit = "GFLOP/s"
    report_class = "FFT"
    target_pct = 0
    description = "forward complex FFT: 1D of length N, 2D fftn of an N-element grid"
    size_meaning = "total elements N (power of two)"
    variants = ("1d", "2d")
    dtypes = ("complex64", "complex128")
    default_sizes = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24)
    # FFT rounding error grows like sqrt(log2 N)·eps. Seen on the CPU at N=2**24 (1d and
    # 2d): complex64 <= 1.9e-7 (PyTorch, JAX), complex128 <= 5.7e-16. A half-precision
    # transform would be ~1e-3 and a wrong twiddle O(1).
    tolerances: Mapping[str, float] = {"complex64": 1e-5, "complex128": 1e-12}

    def cases(self, sizes: list[int] | None = None, dtypes: list[str] | None = None,
              variants: list[str] | None = None,
              params: Mapping[str, Any] | None = None) -> list[Case]:
        """As the base, but a size that is not a power of two fails here, at planning."""
        cases = super().cases(sizes, dtypes, variants, params)
        for case in cases:
            grid_shape(case)
        return cases

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": random_array(rng, grid_shape(case), case.dtype, -1.0, 1.0)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        x = inputs["x"].astype(np.complex128)
        return np.fft.fft(x) if case.variant == "1d" else np.fft.fftn(x)

    def bytes_moved(self, case: Case) -> float:
        """Input read once, output written once (a large FFT makes several passes)."""
        return 2.0 * case.size * itemsize(case.dtype)

    def flops(self, case: Case) -> float:
        """5·N·log2(N), the usual radix-2 convention, whatever the library really does."""
        n = case.size
        return 5.0 * n * np.log2(n)

    def memory_bytes(self, case: Case) -> float:
        # input and result on the device (plus a workspace), the host copies, and the
        # complex128 reference with the check's complex128 temporaries
        return 3.0 * self.bytes_moved(case) + 3 * 16.0 * case.size


SPEC = FFT()
