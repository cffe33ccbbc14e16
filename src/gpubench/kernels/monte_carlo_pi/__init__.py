"""monte_carlo_pi: estimate π from n uniform points in the unit square (the workshop
book, §4.11.2).

π ≈ 4·(points with x² + y² <= 1)/n. There are no inputs: every implementation draws
its points itself from a generator seeded once per build with the case's seed, and
every call draws fresh points (a call that reused its points would be timing a
cached answer). The result is random, so the check is statistical: the count is
binomial with p = π/4, the estimate has standard deviation σ = 4·sqrt(p(1-p)/n), and a
result passes when it is within 6σ of π. A correct generator fails that about once in
5·10⁸ checks; a biased one (bad streams, reused or correlated samples, float rounding
that moves the circle's edge) fails once n is large enough to resolve the bias.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, itemsize

#: how many standard deviations from π still pass
N_SIGMA = 6.0
_P = math.pi / 4.0


def sigma(n: int) -> float:
    """Standard deviation of the estimate 4·hits/n for n independent samples."""
    return 4.0 * math.sqrt(_P * (1.0 - _P) / n)


class MonteCarloPi(KernelSpec):
    name = "monte_carlo_pi"
    memory_relative = False
    order = 60
    bound = "compute"
    ceiling = "none"
    unit = "Msamples/s"
    report_class = "random numbers"
    target_pct = 0
    description = "estimate π by sampling n uniform points in the unit square"
    size_meaning = "random samples"
    dtypes = ("float32", "float64")
    default_sizes = (1 << 12, 1 << 16, 1 << 20, 1 << 24)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {}

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> float:
        return math.pi

    def bytes_moved(self, case: Case) -> float:
        """0: the points are generated and consumed on the fly; nothing must cross memory.

        Array-style implementations do write and reread x and y, but that is their
        choice, not the problem's; compare rows in samples per second.
        """
        return 0.0

    def flops(self, case: Case) -> float:
        """3 per sample (x·x + y·y); the comparison and the generator are not counted."""
        return 3.0 * case.size

    def memory_bytes(self, case: Case) -> float:
        # array-style implementations hold x and y plus as much again in temporaries
        return 4.0 * case.size * itemsize(case.dtype)

    def tolerance(self, case: Case) -> float:
        """Relative: 6σ/π, so it shrinks like 1/sqrt(n) (about 7.7e-4 at n = 2**24)."""
        return N_SIGMA * sigma(case.size) / math.pi

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        tol = self.tolerance(case)
        arr = np.asarray(result)
        if arr.size != 1:
            return Check(float("nan"), tol, False, f"expected a scalar, got shape {arr.shape}")
        est = float(arr.reshape(()))
        if not math.isfinite(est):
            return Check(float("nan"), tol, False, f"estimate {est} is not finite")
        err = abs(est - float(ref)) / abs(float(ref))
        passed = err <= tol
        reason = "" if passed else (
            f"estimate {est:.7g} is {abs(est - float(ref)) / sigma(case.size):.1f} σ from π "
            f"(relative error {err:.3g} > {tol:.3g} = {N_SIGMA:g}σ/π)")
        return Check(err, tol, passed, reason)


SPEC = MonteCarloPi()
