"""Every registered kernel's CPU rows pass the harness (the registry read, not a list);
the checks of linalg, autodiff, transfer, launch_overhead and interop bite.

GPU implementations cannot run here; transfer's check is tested on NumPy copies, and the
Numba CUDA implementations run under Numba's CUDA simulator in a subprocess.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_helpers import cpu_backend, cpu_cases, run_simulated

from gpubench.harness import Settings, measure
from gpubench.spec import Case, get_kernel, implementations, kernel_names

FAST = Settings(max_time_s=0.01, min_samples=2, warmup=1)
#: every kernel the registry knows, at its smallest default size: the harness path, not the
#: speed, is under test
SIZES = {name: (min(get_kernel(name).default_sizes),) for name in kernel_names()}



def inputs_and_ref(case: Case, seed: int = 0):
    spec = get_kernel(case.kernel)
    host_inputs = spec.make_inputs(case, np.random.default_rng(seed))
    return spec, host_inputs, spec.reference(case, host_inputs)




@pytest.mark.parametrize(("kernel", "framework", "impl_name", "case"), cpu_cases(SIZES))
def test_cpu_implementation_passes(kernel: str, framework: str, impl_name: str,
                                   case: Case) -> None:
    spec, host_inputs, ref = inputs_and_ref(case)
    backend = cpu_backend(framework)
    impl = next(i for i in implementations(kernel, framework, "cpu") if i.name == impl_name)
    m = measure(spec, impl, case, backend, FAST, host_inputs, ref)
    assert m.fields["status"] == "ok", m.fields.get("reason")
    assert m.fields["rel_err"] <= m.fields["tolerance"]
    if kernel == "interop":  # a hand-off is host work, timed as such; no bytes move
        assert m.fields["timer"] == "perf_counter+sync"
        assert math.isnan(m.fields["gbps"])


def test_registered_implementations() -> None:
    def names(kernel: str, device: str) -> set[tuple[str, str]]:
        return {(i.framework, i.name) for i in implementations(kernel, device=device)}

    assert names("linalg", "cpu") == {("numpy", "lapack"), ("jax", "jit"), ("torch", "eager")}
    assert names("linalg", "gpu") == {("jax", "jit"), ("torch", "eager"), ("cupy", "cusolver")}
    assert names("autodiff", "cpu") == {("numpy", "analytic_gradient"),
                                        ("numpy", "manual_backprop"),
                                        ("jax", "grad_jit"), ("torch", "autograd")}
    assert names("autodiff", "gpu") == {("jax", "grad_jit"), ("torch", "autograd")}
    assert names("transfer", "cpu") == set()
    assert names("transfer", "gpu") == {("cupy", "memcpy"), ("torch", "copy_"),
                                        ("jax", "device_put"), ("numba", "copy_to"),
                                        ("cuda_python", "memcpy_async")}
    assert names("launch_overhead", "cpu") == {("numpy", "ufunc"), ("numba", "njit"),
                                               ("jax", "jit"), ("torch", "eager")}
    assert names("launch_overhead", "gpu") == {
        ("jax", "jit"), ("torch", "eager"), ("cupy", "array_ops"),
        ("cupy", "elementwise_kernel"), ("numba", "cuda_jit"), ("cupy", "raw_kernel"),
        ("cuda_python", "nvrtc")}
    jax_transfer = next(i for i in implementations("transfer", "jax"))
    assert not jax_transfer.supports(Case("transfer", "h2d_pinned", 1024, "float32"))[0]
    assert jax_transfer.supports(Case("transfer", "d2h_pageable", 1024, "float32"))[0]
    assert get_kernel("transfer").place_inputs is False
    assert get_kernel("launch_overhead").hide_launch is False


# -- linalg ------------------------------------------------------------------------------


def _linalg(variant: str, n: int = 32, dtype: str = "float64"):
    case = Case("linalg", variant, n, dtype)
    spec, inputs, ref = inputs_and_ref(case)
    return spec, case, inputs["a"].astype(np.float64), inputs, ref


def test_linalg_input_is_spd_and_well_conditioned() -> None:
    _, _, a, inputs, _ = _linalg("solve", 128, "float32")
    assert np.array_equal(inputs["a"], inputs["a"].T)
    w = np.linalg.eigvalsh(a)
    assert w.min() >= 1.0 - 1e-6 and w.max() / w.min() < 6.0
    assert "b" in inputs and "b" not in _linalg("inv")[3]


def test_linalg_solve_and_inv_checks() -> None:
    spec, case, a, inputs, ref = _linalg("solve")
    x = np.linalg.solve(a, inputs["b"].astype(np.float64))
    assert spec.check(case, x, ref).passed
    bad = x.copy()
    bad[3] *= 1.001
    assert not spec.check(case, bad, ref).passed
    # a half-precision answer misses the float32 tolerance too
    case32 = Case("linalg", "solve", 32, "float32")
    assert not spec.check(case32, x.astype(np.float16), ref).passed
    assert spec.check(case32, x.astype(np.float32), ref).passed
    assert not spec.check(case, x[:-1], ref).passed

    spec, case, a, _, ref = _linalg("inv")
    x = np.linalg.inv(a)
    assert spec.check(case, x, ref).passed
    assert not spec.check(case, x.T * 1.0001, ref).passed
    x[0, 0] = np.nan
    assert "not finite" in spec.check(case, x, ref).reason


def test_linalg_eigh_check_ignores_sign_and_order_but_not_errors() -> None:
    spec, case, a, _, ref = _linalg("eigh")
    w, v = np.linalg.eigh(a)
    assert spec.check(case, np.concatenate([w, v.ravel()]), ref).passed
    # reversed order and flipped signs are the same decomposition
    flipped = v[:, ::-1] * np.where(np.arange(v.shape[0]) % 2, -1.0, 1.0)
    assert spec.check(case, np.concatenate([w[::-1], flipped.ravel()]), ref).passed
    wrong_w = w.copy()
    wrong_w[-1] *= 1.01
    check = spec.check(case, np.concatenate([wrong_w, v.ravel()]), ref)
    assert not check.passed and "eigenvalues" in check.reason
    # V = 0 has no eigen-residual; orthogonality rejects it
    check = spec.check(case, np.concatenate([w, np.zeros(v.size)]), ref)
    assert not check.passed and "orthogonality" in check.reason
    # vectors that do not belong to these eigenvalues
    shuffled = v[:, np.roll(np.arange(v.shape[0]), 1)]
    check = spec.check(case, np.concatenate([w, shuffled.ravel()]), ref)
    assert not check.passed and "residual" in check.reason


def test_linalg_svd_check() -> None:
    spec, case, a, _, ref = _linalg("svd")
    u, s, vt = np.linalg.svd(a)
    good = np.concatenate([s, u.ravel(), vt.ravel()])
    assert spec.check(case, good, ref).passed
    assert spec.check(case, np.concatenate([s, (-u).ravel(), (-vt).ravel()]), ref).passed
    check = spec.check(case, np.concatenate([s * 1.01, u.ravel(), vt.ravel()]), ref)
    assert not check.passed and "singular values" in check.reason
    check = spec.check(case, np.concatenate([s, u.ravel(), vt.T.ravel()]), ref)
    assert not check.passed and "reconstruction" in check.reason


# -- autodiff ----------------------------------------------------------------------------


def _central_difference(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """∂f/∂x for every element of x (modified in place and restored)."""
    flat = x.reshape(-1)
    grad = np.empty(flat.size)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        grad[i] = (up - down) / (2 * eps)
    return grad


def test_rosenbrock_gradient_matches_finite_differences() -> None:
    from gpubench.kernels.autodiff import rosenbrock, rosenbrock_grad

    x = np.random.default_rng(1).uniform(-1.5, 1.5, 7)
    fd = _central_difference(lambda: rosenbrock(x), x)
    assert np.allclose(rosenbrock_grad(x), fd, rtol=1e-7, atol=1e-6)


def test_pinn_reference_gradient_matches_finite_differences() -> None:
    from gpubench.kernels.autodiff import PINN_PARAMS, pinn_loss

    case = Case("autodiff", "pinn", 24, "float64", {"hidden": 32})
    _, inputs, ref = inputs_and_ref(case, seed=3)
    params = {k: inputs[k].copy() for k in PINN_PARAMS}
    fd = np.concatenate([_central_difference(lambda: pinn_loss(params, inputs["x"]), params[k])
                         for k in PINN_PARAMS])
    assert ref.shape == (32 + 32 + 32 * 32 + 32 + 32 + 1,)
    assert np.linalg.norm(fd - ref) / np.linalg.norm(ref) < 1e-7


def test_pinn_parameters_come_from_independent_streams() -> None:
    """The workshop book's §7.7.2 drew every parameter from one JAX key: all started equal."""
    case = Case("autodiff", "pinn", 64, "float32", {"hidden": 32})
    _, inputs, _ = inputs_and_ref(case)
    vectors = {k: inputs[k].astype(np.float64) for k in ("w1", "b1", "b2", "w3")}
    for a in vectors:
        assert np.unique(vectors[a]).size == vectors[a].size
        for b in vectors:
            if a < b:
                z = (vectors[a] - vectors[a].mean()) / vectors[a].std()
                zb = (vectors[b] - vectors[b].mean()) / vectors[b].std()
                assert abs(np.mean(z * zb)) < 0.6, (a, b)
    assert np.unique(inputs["w2"]).size == inputs["w2"].size
    other = get_kernel("autodiff").make_inputs(case, np.random.default_rng(1))
    assert not np.array_equal(other["w2"], inputs["w2"])


def _wrong_pinn_gradients(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Gradients of plausible but wrong PINN losses, by JAX."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    from gpubench.kernels.autodiff import PINN_PARAMS

    def u(p, x):
        w1, b1, w2, b2, w3, b3 = p
        return jnp.tanh(jnp.tanh(x * w1 + b1) @ w2 + b2) @ w3 + b3[0]

    u_batch = jax.vmap(u, in_axes=(None, 0))

    def no_derivative(p, x):  # the residual built from u instead of du/dx
        return jnp.mean((u_batch(p, x) - jnp.cos(x)) ** 2) + u(p, 0.0) ** 2

    def boundary_only(p, x):  # the physics term dropped
        return u(p, 0.0) ** 2

    def parameter_derivative(p, x):  # the workshop book's mistake: d/dθ where d/dx was meant
        du_dw1 = jax.vmap(lambda xi: jax.grad(u)(p, xi)[0].sum())(x)
        return jnp.mean((du_dw1 - jnp.cos(x)) ** 2) + u(p, 0.0) ** 2

    p = tuple(jnp.asarray(inputs[k]) for k in PINN_PARAMS)
    x = jnp.asarray(inputs["x"])
    return {f.__name__: np.concatenate([np.ravel(g) for g in jax.grad(f)(p, x)])
            for f in (no_derivative, boundary_only, parameter_derivative)}


def test_pinn_check_rejects_gradients_without_the_du_dx_term() -> None:
    case = Case("autodiff", "pinn", 64, "float64", {"hidden": 32})
    spec, inputs, ref = inputs_and_ref(case)
    assert spec.check(case, ref.copy(), ref).passed
    for name, grad in _wrong_pinn_gradients(inputs).items():
        check = spec.check(case, grad, ref)
        assert not check.passed and check.rel_err > 0.05, name


def test_rosenbrock_check_rejects_a_wrong_descent() -> None:
    from gpubench.kernels.autodiff import rosenbrock_descent, rosenbrock_grad

    case = Case("autodiff", "rosenbrock", 64, "float32",
                dict(get_kernel("autodiff").default_params))
    spec, inputs, ref = inputs_and_ref(case)
    x0 = inputs["x0"]
    assert spec.check(case, rosenbrock_descent(x0, 10, 1e-4), ref).passed
    assert not spec.check(case, rosenbrock_descent(x0, 9, 1e-4), ref).passed
    assert not spec.check(case, x0.copy(), ref).passed
    x = x0.copy()
    for _ in range(10):  # the chain-rule term from the next coordinate forgotten
        g = rosenbrock_grad(x)
        g[1:] -= 200.0 * (x[1:] - x[:-1] ** 2)
        x -= 1e-4 * g
    assert not spec.check(case, x, ref).passed


def test_autodiff_tolerances_scale() -> None:
    spec = get_kernel("autodiff")
    small = spec.tolerance(Case("autodiff", "pinn", 256, "float32"))
    large = spec.tolerance(Case("autodiff", "pinn", 1 << 20, "float32"))
    assert small == 1e-5 and math.isclose(large, 4 * 1024 * 2.0**-24)
    assert spec.tolerance(Case("autodiff", "rosenbrock", 1 << 20, "float64")) == 1e-12
    assert spec.flops(Case("autodiff", "pinn", 100, "float32", {"hidden": 32})) == 12 * 100 * 32**2


# -- transfer ----------------------------------------------------------------------------


def test_transfer_check_is_exact_and_needs_a_copy() -> None:
    spec = get_kernel("transfer")
    for variant in spec.variants:
        case = Case("transfer", variant, 4096, "float32")
        _, inputs, ref = inputs_and_ref(case)
        assert ref is inputs["x"]
        copy = inputs["x"].copy()
        check = spec.check(case, copy, ref)
        assert check.passed and check.rel_err == 0.0
        copy[17] = np.nextafter(copy[17], np.float32(np.inf))  # one ulp off
        assert not spec.check(case, copy, ref).passed
        assert not spec.check(case, np.full_like(copy, np.nan), ref).passed
        assert not spec.check(case, copy[:-1], ref).passed
        check = spec.check(case, inputs["x"], ref)
        assert not check.passed and "not a copy" in check.reason
    assert spec.bytes_moved(Case("transfer", "h2d_pinned", 1 << 20, "float32")) == 4 << 20


# -- Numba CUDA under the simulator ------------------------------------------------------

_SIMULATED = r"""
import json, sys
import numpy as np
import gpubench.spec as S
from gpubench.backends import load_backend
from gpubench.harness import Settings, measure
from gpubench.spec import Case, get_kernel, implementations, kernel_names

backend = load_backend("numba-gpu")
backend.start(1)
rows = []
for kernel, variants, sizes in (("transfer", None, (1000,)), ("launch_overhead", None, (1, 70))):
    spec = get_kernel(kernel)
    for case in spec.cases(sizes=list(sizes)):
        inputs = spec.make_inputs(case, np.random.default_rng(0))
        ref = spec.reference(case, inputs)
        for impl in implementations(kernel, "numba", "gpu"):
            m = measure(spec, impl, case, backend, Settings(max_time_s=0.01, min_samples=2,
                                                            warmup=1), inputs, ref)
            rows.append([kernel, case.variant, case.size, impl.name, m.fields["status"],
                         m.fields.get("reason", "")])
print(json.dumps(rows))
"""


def test_numba_cuda_implementations_under_the_simulator() -> None:
    rows = run_simulated(_SIMULATED)
    assert len(rows) == 4 + 2
    for kernel, variant, size, name, status, reason in rows:
        assert status == "ok", (kernel, variant, size, name, reason)


# -- interop -----------------------------------------------------------------------------


def test_interop_registry_covers_both_protocols() -> None:
    names = {(i.framework, i.name, i.variants) for i in implementations("interop", device="gpu")}
    cai = {(f, n) for f, n, v in names if v == ("cuda_array_interface",)}
    dlpack = {(f, n) for f, n, v in names if v == ("dlpack",)}
    assert ("numba", "from_cupy") in cai and ("cupy", "from_numba") in cai
    assert ("torch", "from_cupy") in dlpack and ("jax", "from_cupy") in dlpack
    assert ("cupy", "from_torch") in dlpack and ("cuda_python", "from_jax") in dlpack
    assert {i.framework for i in implementations("interop", device="cpu")} == {
        "numpy", "jax", "torch"}
    assert get_kernel("interop").host_timed and not get_kernel("interop").place_inputs


def test_interop_hand_off_that_copies_is_a_wrong_result() -> None:
    from gpubench.kernels.interop import handoff
    from gpubench.spec import BuildContext, Implementation

    case = Case("interop", "dlpack", 256, "float32")
    spec, host_inputs, ref = inputs_and_ref(case)
    copying = Implementation("interop", "numpy", "copies", lambda ctx: handoff(
        ctx, "numpy", lambda x: np.array(x, copy=True)))
    m = measure(spec, copying, case, cpu_backend("numpy"), FAST, host_inputs, ref)
    assert m.fields["status"] == "wrong_result"
    assert "copied" in m.fields["reason"]
    assert m.samples == []
    viewing = Implementation("interop", "numpy", "views",
                             lambda ctx: handoff(ctx, "numpy", np.from_dlpack))
    assert measure(spec, viewing, case, cpu_backend("numpy"), FAST, host_inputs,
                   ref).fields["status"] == "ok"
    assert isinstance(BuildContext, type)


def test_interop_missing_producer_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpubench.kernels.interop as interop
    from gpubench.spec import Implementation

    def absent(producer: str, host: np.ndarray, device: str) -> None:
        raise ModuleNotFoundError(f"No module named {producer!r}")

    monkeypatch.setattr(interop, "produce", absent)
    case = Case("interop", "dlpack", 256, "float32")
    spec, host_inputs, ref = inputs_and_ref(case)
    impl = Implementation("interop", "numpy", "from_cupy", lambda ctx: interop.handoff(
        ctx, "cupy", np.from_dlpack))
    m = measure(spec, impl, case, cpu_backend("numpy"), FAST, host_inputs, ref)
    assert m.fields["status"] == "unavailable"
    assert "No module named 'cupy'" in m.fields["reason"]


def test_interop_check_is_bit_exact() -> None:
    case = Case("interop", "dlpack", 64, "float32")
    spec, _inputs, ref = inputs_and_ref(case)
    assert spec.check(case, ref.copy(), ref).passed
    bad = ref.copy()
    bad[3] = np.nextafter(bad[3], np.float32(2))
    assert not spec.check(case, bad, ref).passed
    assert not spec.check(case, ref[:10], ref).passed
