"""linalg: solve, inv, eigh and svd of a symmetric positive-definite n×n matrix (the
workshop book, §5.10.2).

The libraries behind each row: LAPACK (NumPy, PyTorch CPU, JAX CPU; NumPy computes
float32 requests in float64, see its implementation), cuSOLVER (CuPy, PyTorch GPU,
JAX GPU). Eigenvectors and singular vectors are unique only up to
sign (and order, by convention), so results are checked by residuals, not by comparing
vectors with the reference.

Input: ``A = M·Mᵀ/n + I`` with M standard normal, built in float64, cast to the case's
dtype (the cast keeps it exactly symmetric). Its eigenvalues lie in about [1, 5]
(Marchenko–Pastur), so cond(A) <= ~5 and a small residual means a small forward error.

What an implementation returns, always one array in the case's dtype (the harness moves
one array to the host; a tuple of device arrays it cannot):

- ``solve``: x with A·x = b, shape (n,)
- ``inv``:   X = A⁻¹, shape (n, n)
- ``eigh``:  ``concatenate([w, V.ravel()])``, shape (n + n²,): eigenvalues and the
  eigenvectors as columns of V (row-major ravel)
- ``svd``:   ``concatenate([s, U.ravel(), Vt.ravel()])``, shape (n + 2n²,)

The concatenation copies O(n²) elements, negligible against the O(n³) factorisation
(<1 % of the flops at n = 64, and falling as 1/n).

Flop convention: the conventional LAPACK counts for square n×n, leading terms (Golub &
Van Loan, *Matrix Computations*, 4th ed., §3.2, §8.3, §8.6; LAWN 41):
solve (getrf + getrs) 2/3·n³ + 2n²; inv (getrf + getri) 2n³; eigh with eigenvectors
(tridiagonalisation 4/3·n³, tridiagonal eigensolver and back-transformation) 9n³;
svd with U and V (Golub–Reinsch, m = n: 4n³ + 8n³ + 9n³) 21n³. The real count depends
on the algorithm the library picks (divide and conquer, Jacobi), so GFLOP/s here is a
conventional rate, good for comparing rows of one variant.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gpubench.spec import Case, Check, KernelSpec, itemsize

#: conventional flops per variant, as a function of n
FLOPS = {
    "solve": lambda n: 2.0 / 3.0 * n**3 + 2.0 * n**2,
    "inv": lambda n: 2.0 * n**3,
    "eigh": lambda n: 9.0 * n**3,
    "svd": lambda n: 21.0 * n**3,
}


def spd_matrix(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    """A well-conditioned SPD matrix M·Mᵀ/n + I (eigenvalues in about [1, 5])."""
    m = rng.standard_normal((n, n))
    a = m @ m.T / n + np.eye(n)
    a = 0.5 * (a + a.T)  # exactly symmetric before the cast, so after it too
    return a.astype(dtype)


def result_length(variant: str, n: int) -> int:
    """Length of the one array an implementation returns (see the module docstring)."""
    return {"solve": n, "inv": n * n, "eigh": n + n * n, "svd": n + 2 * n * n}[variant]


def _rel(num: float, den: float) -> float:
    return num / den if den > 0 else num


class Linalg(KernelSpec):
    name = "linalg"
    order = 80
    bound = "compute"
    ceiling = "none"
    unit = "GB/s"
    report_class = "linear algebra"
    target_pct = 0
    description = "solve, inv, eigh and svd of a well-conditioned SPD matrix"
    size_meaning = "matrix order n (n×n)"
    variants = ("solve", "inv", "eigh", "svd")
    dtypes = ("float32", "float64")
    default_sizes = (64, 256, 1024)
    #: floors; tolerance() raises them with n
    tolerances: Mapping[str, float] = {"float32": 2e-5, "float64": 1e-12}

    def tolerance(self, case: Case) -> float:
        """``max(floor, n·u)``, u the unit roundoff of the dtype.

        LAPACK's own tests normalise residuals by n·eps; the errors of the QR-class
        solvers measured here grow more slowly (about n^0.7) and stay 3-12x under n·u.
        Largest residual seen (the largest of each variant's measures, n = 64 ... 2048):
        CPU (NumPy/LAPACK, JAX, PyTorch) float32 2.4e-6, float64 5.0e-15; H100
        (cuSOLVER through CuPy, JAX, PyTorch; getrf, syevd, gesvd) float32 1.1e-6 at
        n = 64, 6.0e-6 at 1024, 1.0e-5 at 2048 (svd reconstruction), float64 1.3e-14 at
        2048. Tolerances there: float32 2e-5, 6.1e-5, 1.2e-4; float64 1e-12.

        Rejected: anything rounded through a 10-bit mantissa (TF32, float16: ~8000x
        the float32 error; a float16-rounded solve at n = 32 gives 2.2e-4), a float32
        step in a float64 row (~1e-7), and the Jacobi solvers' early stop: cuSOLVER
        gesvdj (‖VtVtᵀ − I‖_F/√n = 4.9e-4 in float32 at n = 1024, PyTorch's and JAX's
        default SVD on GPUs, which is why those implementations ask for gesvd) and
        syevj (PyTorch's float32 eigh for 32 <= n <= 512: 1.0e-5 at 64, 3.2e-5 at 128,
        9.1e-5 at 256, 2.3e-4 at 512; only n = 64 passes).
        """
        unit_roundoff = {"float32": 2.0**-24, "float64": 2.0**-53}[case.dtype]
        return max(float(self.tolerances[case.dtype]), case.size * unit_roundoff)

    def make_inputs(self, case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
        inputs = {"a": spd_matrix(rng, case.size, case.dtype)}
        if case.variant == "solve":
            inputs["b"] = rng.uniform(-1.0, 1.0, case.size).astype(case.dtype)
        return inputs

    def reference(self, case: Case, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The float64 matrix (and b) the residuals use, plus the sorted reference
        eigenvalues (eigh) or singular values (svd)."""
        a = inputs["a"].astype(np.float64)
        ref: dict[str, np.ndarray] = {"a": a}
        if case.variant == "solve":
            ref["b"] = inputs["b"].astype(np.float64)
        elif case.variant == "eigh":
            ref["w"] = np.linalg.eigvalsh(a)
        elif case.variant == "svd":
            ref["s"] = np.sort(np.linalg.svd(a, compute_uv=False))
        return ref

    def bytes_moved(self, case: Case) -> float:
        """A (and b) read once, the returned array written once."""
        n = case.size
        read = n * n + (n if case.variant == "solve" else 0)
        return float((read + result_length(case.variant, n)) * itemsize(case.dtype))

    def flops(self, case: Case) -> float:
        return float(FLOPS[case.variant](case.size))

    def memory_bytes(self, case: Case) -> float:
        """Inputs, result and library workspace (~2n²) on the device; float64 check copies."""
        n = case.size
        return 2.0 * self.bytes_moved(case) + 2.0 * n * n * itemsize(case.dtype) \
            + 6.0 * 8 * n * n

    def check(self, case: Case, result: Any, ref: Any) -> Check:
        """Residuals in float64; the largest of the variant's relative errors is reported.

        solve: ‖A·x − b‖/‖b‖. inv: ‖A·X − I‖_F/√n. eigh: sorted eigenvalues against the
        reference (relative 2-norm), ‖A·V − V·diag(w)‖_F/‖A‖_F and ‖VᵀV − I‖_F/√n.
        svd: sorted singular values against the reference, ‖U·diag(s)·Vt − A‖_F/‖A‖_F,
        ‖UᵀU − I‖_F/√n and ‖Vt·Vtᵀ − I‖_F/√n. Orthogonality is what stops V = 0 (which
        has no eigen-residual) from passing.
        """
        tol = self.tolerance(case)
        n = case.size
        out = np.asarray(result)
        want = result_length(case.variant, n)
        if out.size != want:
            return Check(math.nan, tol, False,
                         f"expected {want} values ({case.variant} layout), got shape {out.shape}")
        out = out.astype(np.float64).ravel()
        n_bad = int(np.count_nonzero(~np.isfinite(out)))
        if n_bad:
            return Check(math.nan, tol, False, f"{n_bad} of {out.size} values not finite")
        errors = self.residuals(case.variant, out, ref)
        name, err = max(errors.items(), key=lambda kv: kv[1])
        passed = err <= tol
        return Check(err, tol, passed, "" if passed else f"{name} {err:.3g} > {tol:.3g}")

    @staticmethod
    def residuals(variant: str, out: np.ndarray, ref: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Each relative residual of a flat float64 result, by name."""
        a = ref["a"]
        n = a.shape[0]
        eye = np.eye(n)
        norm_a = float(np.linalg.norm(a))
        if variant == "solve":
            b = ref["b"]
            return {"residual |Ax-b|/|b|": _rel(float(np.linalg.norm(a @ out - b)),
                                                 float(np.linalg.norm(b)))}
        if variant == "inv":
            x = out.reshape(n, n)
            return {"residual |AX-I|/sqrt(n)": float(np.linalg.norm(a @ x - eye)) / math.sqrt(n)}
        if variant == "eigh":
            w, v = out[:n], out[n:].reshape(n, n)
            return {
                "eigenvalues": _rel(float(np.linalg.norm(np.sort(w) - ref["w"])),
                                    float(np.linalg.norm(ref["w"]))),
                "residual |AV-VW|/|A|": _rel(float(np.linalg.norm(a @ v - v * w)), norm_a),
                "orthogonality |VtV-I|/sqrt(n)":
                    float(np.linalg.norm(v.T @ v - eye)) / math.sqrt(n),
            }
        if variant == "svd":
            s, u = out[:n], out[n:n + n * n].reshape(n, n)
            vt = out[n + n * n:].reshape(n, n)
            return {
                "singular values": _rel(float(np.linalg.norm(np.sort(s) - ref["s"])),
                                        float(np.linalg.norm(ref["s"]))),
                "reconstruction |USVt-A|/|A|": _rel(float(np.linalg.norm((u * s) @ vt - a)),
                                                    norm_a),
                "orthogonality |UtU-I|/sqrt(n)":
                    float(np.linalg.norm(u.T @ u - eye)) / math.sqrt(n),
                "orthogonality |VtVt'-I|/sqrt(n)":
                    float(np.linalg.norm(vt @ vt.T - eye)) / math.sqrt(n),
            }
        raise ValueError(f"unknown linalg variant {variant!r}")


SPEC = Linalg()
