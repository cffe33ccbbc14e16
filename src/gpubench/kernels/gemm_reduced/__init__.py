"""gemm_reduced: C = A·B with the products in a reduced format, the tensor-core GEMMs.

The float32 ``matmul`` rows forbid TF32 and take no bfloat16 or float16 path, so every
row there is the same operation. This kernel measures what those formats buy, as a
kernel of its own: its rows are labelled by format (the variant), read against no
ceiling (the probe measures the float32 GEMM, not the tensor-core rates), sit in no
workload class (no leaders, no crossover against float32 rows) and get their own
report section, where each stands beside its framework's float32 ``matmul`` row of the
same size.

Variants (:data:`FORMATS`): ``tf32`` (float32 arrays, the framework's TF32 switch; the
inputs are rounded to a 10-bit mantissa inside the GEMM, the output is float32),
``bf16`` and ``fp16`` (A and B cast to bfloat16 / float16 before the timed call, C in
that format). Every path here accumulates in float32. The inputs are float32 draws from
[-1, 1], as ``matmul``'s, and the check compares C with the float64 product of those
float32 inputs: the error of the rounded inputs is part of what a row reports.

Where a format has no meaningful path (TF32 and float16 on a CPU: :meth:`GemmReduced.
unoffered`; TF32 and bfloat16 on a GPU older than compute capability 8.0: the builder
raises :class:`~gpubench.spec.NotOffered`) the row is ``skipped`` with the reason; CuPy has
no bfloat16 dtype and offers ``tf32`` and ``fp16`` only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, NotOffered, random_array

#: float32's unit roundoff: the accumulator's of every path here
U_FLOAT32 = 2.0**-24


@dataclass(frozen=True)
class Format:
    """A reduced GEMM format: what the inputs are rounded to and what C is stored in."""

    #: how the report names it
    label: str
    #: the arrays' dtype in the timed call (A, B and C): "float32" for TF32, whose
    #: rounding happens inside the GEMM
    storage: str
    #: unit roundoff of the inputs' format: 2**-(mantissa bits + 1)
    u_in: float
    #: unit roundoff of C's format
    u_out: float
    #: the devices it has a meaningful path on (why not elsewhere: :data:`CPU_REASON`)
    devices: tuple[str, ...]
    #: the least CUDA compute capability with tensor cores for it
    min_capability: float


#: variant -> format. TF32 keeps float32's exponent and 10 of its 23 mantissa bits;
#: bfloat16 keeps the exponent and 7; float16 has 10 and a 5-bit exponent.
FORMATS: dict[str, Format] = {
    "tf32": Format("TF32", "float32", 2.0**-11, U_FLOAT32, ("gpu",), 8.0),
    "bf16": Format("bfloat16", "bfloat16", 2.0**-8, 2.0**-8, ("cpu", "gpu"), 8.0),
    "fp16": Format("float16", "float16", 2.0**-11, 2.0**-11, ("gpu",), 7.0),
}
#: why a format has no CPU row
CPU_REASON = {
    "tf32": "TF32 is a GPU tensor-core format: a CPU computes these float32 products in "
            "float32",
    "fp16": "no float16 GEMM path on the CPU here (frameworks upcast or emulate it, "
            "and bfloat16 is the CPU's reduced format)",
}
STORAGE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def reduced_tolerance(variant: str, n: int) -> float:
    """Relative error a correct ``variant`` GEMM of order ``n`` stays within.

    ``4·u_in + 2·u_out + 2·√n·u_acc``, with the format's unit roundoffs
    (:data:`FORMATS`) and float32's for the accumulator:

    - rounding the inputs: the inputs lie in [-1, 1], so C's entries are sums of n terms
      of either sign and both ||C|| and the error rounded inputs cause grow like √n;
      their ratio stays near 0.53·u_in (simulated at n = 1024: TF32 2.6e-4, bfloat16
      2.1e-3, 2.7e-3 with C stored in bfloat16). 4·u_in covers a conversion that
      truncates instead of rounding (2.6 times the error: TF32 6.9e-4) with room;
    - storing C: at most u_out per element; 2·u_out leaves room for a split-K reduction
      that rounds its partial sums to C's format (PyTorch allows one for bfloat16 and
      float16 by default);
    - accumulating: a length-n dot product's rounding grows like √n·u_acc in practice.

    Seen on an H200 (PyTorch, CuPy and JAX alike, through the harness at n = 1024 and
    4096 and in a standalone check at n = 8192): TF32 2.6e-4, bfloat16 2.7e-3, float16
    3.3e-4, each within its tolerance by 7 to 9 times.

    A result that is wrong (a transposed operand, unwritten or stale elements) is off by
    O(1), and one accumulated in float16 by ~√n·2**-12 (0.04 at n = 8192): both fail.
    """
    f = FORMATS[variant]
    return 4.0 * f.u_in + 2.0 * f.u_out + 2.0 * math.sqrt(n) * U_FLOAT32


def unoffered(variant: str, device: str) -> str:
    """Why ``variant``'s format is not run on ``device``, or ''."""
    f = FORMATS[variant]
    if device in f.devices:
        return ""
    return CPU_REASON.get(variant, f"{f.label} is not run on {device}")


def not_offered(case: Case, device: str, capability: float | None = None) -> None:
    """Raise :class:`NotOffered` where ``case``'s format has no meaningful path on
    ``device`` (``capability``: a GPU's CUDA compute capability, where known); the
    builders call it, since only the started framework knows its GPU."""
    f = FORMATS[case.variant]
    if why := unoffered(case.variant, device):
        raise NotOffered(why)
    if device == "gpu" and capability is not None and capability < f.min_capability:
        raise NotOffered(f"{f.label} tensor-core GEMMs need compute capability "
                         f"{f.min_capability:g}; this GPU has {capability:g}")


class GemmReduced(KernelSpec):
    name = "gemm_reduced"
    order = 45
    bound = "compute"
    #: no measured ceiling: the probe's GEMM is float32, and a reduced row read against
    #: it would claim more than 100% of a peak that is not its own
    ceiling = "none"
    #: TF32, bfloat16 and float16 run on the tensor cores, 8-16x the float32 GEMM the
    #: probe measures: that rate is no upper bound for these rows
    gemm_gate = False
    unit = "GFLOP/s"
    #: in no class: a reduced row is never ranked against the float32 rows
    report_class = None
    target_pct = 0.0
    description = ("C = A·B with the float32 inputs rounded to TF32, bfloat16 or float16 "
                   "(tensor cores)")
    size_meaning = "matrix order n (n×n)"
    variants = tuple(FORMATS)
    dtypes = ("float32",)
    default_sizes = (256, 512, 1024, 2048)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        n = case.size
        return {"a": random_array(rng, (n, n), case.dtype, -1.0, 1.0),
                "b": random_array(rng, (n, n), case.dtype, -1.0, 1.0)}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        return inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)

    def outputs(self, case: Case) -> dict[str, tuple[tuple[int, ...], str]]:
        return {"c": ((case.size, case.size), FORMATS[case.variant].storage)}

    def bytes_moved(self, case: Case) -> float:
        """A and B read once, C written once, in the format of the timed call."""
        return 3.0 * case.size**2 * STORAGE_BYTES[FORMATS[case.variant].storage]

    def flops(self, case: Case) -> float:
        """2·n³, as for ``matmul``: the same products, in another format."""
        return 2.0 * float(case.size) ** 3

    def memory_bytes(self, case: Case) -> float:
        # float32 A, B, C on the host and the device, the reduced copies of A, B and C,
        # the float64 reference and the check's float64 temporaries
        n2 = float(case.size) ** 2
        return 2.0 * 3 * 4 * n2 + 3 * 2 * n2 + 3 * 8.0 * n2

    def unoffered(self, case: Case, device: str) -> str:
        return unoffered(case.variant, device)

    def tolerance(self, case: Case) -> float:
        return reduced_tolerance(case.variant, case.size)

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """The base check on C widened to float32 (exact): NumPy has no bfloat16 of its
        own, and the sums of the check must not run in C's format."""
        out = np.asarray(result)
        if out.dtype != np.float64:
            out = out.astype(np.float32)
        return super().check(case, out, ref)


SPEC = GemmReduced()
