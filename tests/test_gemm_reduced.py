"""gemm_reduced: TF32, bfloat16 and float16 GEMMs. The CPU rows that exist pass their
check and are really rounded; the per-format tolerance passes a correctly rounded
product and fails a wrong one; the TF32 switch is scoped to the call."""

from __future__ import annotations

import types

import numpy as np
import pytest
from kernel_helpers import cpu_backend

from gpubench.harness import Settings, measure
from gpubench.kernels.gemm_reduced import FORMATS, SPEC, not_offered, reduced_tolerance
from gpubench.spec import BuildContext, Case, NotOffered, implementations

FAST = Settings(max_time_s=0.01, min_samples=2, warmup=1)


def _case(variant: str, n: int = 96) -> Case:
    return Case(SPEC.name, variant, n, "float32")


def _measure(framework: str, case: Case):
    impl = next(i for i in implementations(SPEC.name, framework, "cpu"))
    inputs = SPEC.make_inputs(case, np.random.default_rng(1))
    return measure(SPEC, impl, case, cpu_backend(framework), FAST, inputs,
                   SPEC.reference(case, inputs))


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_bfloat16_on_the_cpu_passes_and_is_really_rounded(framework: str) -> None:
    m = _measure(framework, _case("bf16"))
    assert m.fields["status"] == "ok", m.fields.get("reason")
    assert m.fields["rel_err"] <= m.fields["tolerance"]
    # a float32 product is ~1e-7 off; bfloat16's 8-bit significand ~2e-3
    assert m.fields["rel_err"] > 1e-4


@pytest.mark.parametrize("framework", ["torch", "jax"])
@pytest.mark.parametrize(("variant", "words"), [("tf32", "TF32 is a GPU"),
                                                ("fp16", "no float16 GEMM path")])
def test_gpu_formats_on_the_cpu_are_skipped_with_the_reason(framework: str, variant: str,
                                                            words: str) -> None:
    m = _measure(framework, _case(variant))
    assert m.fields["status"] == "skipped"
    assert words in m.fields["reason"]


def test_a_gpu_without_the_formats_tensor_cores_is_not_offered() -> None:
    for variant in ("tf32", "bf16"):
        with pytest.raises(NotOffered, match="compute capability 8"):
            not_offered(_case(variant), "gpu", 7.5)
        not_offered(_case(variant), "gpu", 9.0)
    not_offered(_case("fp16"), "gpu", 7.0)
    with pytest.raises(NotOffered):
        not_offered(_case("fp16"), "gpu", 6.1)


# -- the tolerance --------------------------------------------------------------------


def rounded(x: np.ndarray, keep: int, truncate: bool = False) -> np.ndarray:
    """float32 ``x`` with ``keep`` of its 23 significand bits: rounded to nearest even
    (bfloat16 keeps 7, TF32 10) or truncated."""
    drop = 23 - keep
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    if not truncate:
        u = u + (1 << (drop - 1)) - 1 + ((u >> drop) & 1)
    u &= ~np.uint64((1 << drop) - 1)
    return u.astype(np.uint32).view(np.float32)


def _product(variant: str, a: np.ndarray, b: np.ndarray, truncate: bool = False
             ) -> np.ndarray:
    """The product a correct ``variant`` GEMM gives: inputs rounded to the format,
    float32 accumulation (float64 here: closer still), C stored in the format."""
    if variant == "fp16":
        c = a.astype(np.float16).astype(np.float64) @ b.astype(np.float16).astype(np.float64)
        return c.astype(np.float16)
    keep = 7 if variant == "bf16" else 10
    c = (rounded(a, keep, truncate).astype(np.float64)
         @ rounded(b, keep, truncate).astype(np.float64)).astype(np.float32)
    return rounded(c, 7) if variant == "bf16" else c


@pytest.fixture(scope="module")
def operands():
    case = _case("bf16", 256)
    inputs = SPEC.make_inputs(case, np.random.default_rng(7))
    return inputs["a"], inputs["b"], SPEC.reference(case, inputs)


# truncated inputs too where a framework may truncate (TF32, bfloat16); float16's
# conversion always rounds
@pytest.mark.parametrize(("variant", "truncate"), [
    *((v, False) for v in FORMATS), *((v, True) for v in FORMATS if v != "fp16")])
def test_a_correctly_rounded_product_passes(operands, variant: str, truncate: bool) -> None:
    a, b, ref = operands
    case = _case(variant, 256)
    check = SPEC.check(case, _product(variant, a, b, truncate), ref)
    assert check.passed, check.reason
    # and it is the format's error, not float32's: a check too loose would not tell
    assert check.rel_err > 0.1 * FORMATS[variant].u_in


@pytest.mark.parametrize("variant", list(FORMATS))
def test_a_wrong_product_fails(operands, variant: str) -> None:
    a, b, ref = operands
    case = _case(variant, 256)
    transposed = _product(variant, a, b.T.copy())
    assert not SPEC.check(case, transposed, ref).passed
    one_row_unwritten = _product(variant, a, b).astype(np.float32)
    one_row_unwritten[17] = 0.0
    assert not SPEC.check(case, one_row_unwritten, ref).passed
    one_nan = _product(variant, a, b).astype(np.float32)
    one_nan[3, 5] = np.nan
    assert not SPEC.check(case, one_nan, ref).passed


def test_a_float32_product_passes_tf32s_check_and_tf32_is_tighter_than_bfloat16(
        operands) -> None:
    a, b, ref = operands
    assert SPEC.check(_case("tf32", 256), (a @ b).astype(np.float32), ref).passed
    for n in (1024, 8192):
        assert reduced_tolerance("tf32", n) < reduced_tolerance("fp16", n) \
            < reduced_tolerance("bf16", n)
    # the accumulator's share grows like sqrt(n)
    grow = reduced_tolerance("tf32", 4 * 4096) - reduced_tolerance("tf32", 4096)
    assert grow == pytest.approx(2 * np.sqrt(4096) * 2.0**-24)


# -- PyTorch's TF32 switch is the call's own ------------------------------------------------


def test_torch_tf32_is_switched_on_for_the_call_and_back_off_after(monkeypatch) -> None:
    """The switch is global to the process: the row's call sets TF32 ("high") and puts
    back what was there, so float32 rows measured after it (or called again in the
    spread rounds) stay float32. Run on the CPU with a GPU's answers stubbed in."""
    torch = pytest.importorskip("torch")
    impl = next(i for i in implementations(SPEC.name, "torch", "gpu"))
    seen: list[str] = []
    real = torch.matmul

    def matmul(*args, **kwargs):
        seen.append(torch.get_float32_matmul_precision())
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_: (9, 0))
    monkeypatch.setattr(torch, "matmul", matmul)
    case = _case("tf32", 8)
    a, b = torch.rand(8, 8), torch.rand(8, 8)
    c = torch.full((8, 8), float("nan"))
    ctx = BuildContext(case, types.SimpleNamespace(device="gpu"), {"a": a, "b": b},
                       {"c": c}, seed=0)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        impl.builder(ctx)()
        assert seen == ["high"]
        assert torch.get_float32_matmul_precision() == "highest"
        assert torch.allclose(c, a @ b)
    finally:
        torch.set_float32_matmul_precision(before)


# -- where it runs -------------------------------------------------------------------------


def test_the_full_suite_runs_it_and_the_quick_one_does_not() -> None:
    from gpubench import suites
    from gpubench.runner import plan

    def kernels(suite: str, backend: str) -> set[str]:
        return {it.kernel for it in plan(backend, suites.suite_config(suite), 4)}

    for backend in ("torch-gpu", "jax-gpu", "cupy-gpu", "torch-cpu", "jax-cpu"):
        assert SPEC.name in kernels("full", backend), backend
        assert SPEC.name not in kernels("quick", backend), backend


def test_the_device_overlay_runs_the_reduced_gemms_and_float32_beside_them() -> None:
    """tools/device/reduced-precision.yaml: the gemm_reduced rows of every framework that
    offers a reduced format and its float32 library GEMM at n = 1024-8192, nothing else."""
    from pathlib import Path

    from gpubench import suites
    from gpubench.config import validate_config
    from gpubench.kernels.matmul import SPEC as FLOAT32
    from gpubench.runner import plan

    root = Path(__file__).resolve().parents[1]
    over = suites.load_yaml(root / "tools" / "device" / "reduced-precision.yaml")
    cfg = suites.suite_config("full", over)
    validate_config(cfg)
    assert cfg["environments"]["mode"] == "system"
    items = {b: plan(b, cfg, 16) for b in cfg["backends"]}
    gpu = [it for b, its in items.items() if b.endswith("-gpu") for it in its]
    assert {it.kernel for it in gpu} == {SPEC.name, FLOAT32.name}
    assert {it.size for it in gpu} == {1024, 2048, 4096, 8192}
    assert {it.dtype for it in gpu} == {"float32"}
    reduced = {(it.implementation, it.variant) for it in gpu if it.kernel == SPEC.name}
    assert reduced == {("eager", v) for v in FORMATS} | {("jit", v) for v in FORMATS} \
        | {("cublas", "tf32"), ("cublas", "fp16")}
    assert {b for b, its in items.items() if its} == {"torch-gpu", "jax-gpu", "cupy-gpu"}
    library = {(it.implementation) for it in gpu if it.kernel == FLOAT32.name}
    assert library == {"cublas", "jit", "eager"}


def test_a_format_with_no_cpu_path_is_one_skipped_row_not_one_per_thread_count() -> None:
    from gpubench import suites
    from gpubench.runner import plan

    items = [it for it in plan("torch-cpu", suites.suite_config("full"), 16)
             if it.kernel == SPEC.name]
    sizes = suites.suite_config("full")["kernels"][SPEC.name]["sizes"]
    for variant in ("tf32", "fp16"):
        mine = [it for it in items if it.variant == variant]
        assert sorted(it.size for it in mine) == sorted(sizes)
        assert {it.threads for it in mine} == {16}
    assert len({it.threads for it in items if it.variant == "bf16"}) > 1  # swept
