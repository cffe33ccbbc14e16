"""Each GEMM and linalg row records what its framework allowed its float32 products to
round to (``matmul_precision``), read from the framework's own setting, and the report
says so."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from gpubench.backends.cupy import adapter as cupy_gpu
from gpubench.backends.jax import adapter as jax_backend
from gpubench.backends.numpy.adapter import NumpyCPU
from gpubench.backends.torch import adapter as torch_backend
from gpubench.harness import Settings, measure
from gpubench.report import headline, matrix, verdicts
from gpubench.report.verdicts import precision_note
from gpubench.spec import Case, get_kernel, implementations

QUICK = Settings(max_time_s=0.02, min_samples=3, warmup=1)


class _Reduced(NumpyCPU):
    """A stand-in whose framework setting allows bfloat16 float32 products."""

    def matmul_precision(self, dtype: str) -> str:
        return "bf16" if dtype == "float32" else "full"


@pytest.mark.parametrize(("kernel", "variant", "size", "expected"), [
    ("matmul", "default", 16, "bf16"),
    ("linalg", "solve", 16, "bf16"),
    ("vector_add", "default", 1000, ""),
])
def test_the_harness_records_the_backends_reading_for_matrix_classes_only(
        kernel, variant, size, expected):
    spec = get_kernel(kernel)
    case = Case(kernel, variant, size, "float32", {})
    backend = _Reduced()
    backend.start(1)
    impl = next(i for i in implementations(kernel, "numpy")
                if "cpu" in i.devices and not i.name.endswith("+transfers"))
    inputs = spec.make_inputs(case, np.random.default_rng(0))
    m = measure(spec, impl, case, backend, QUICK, inputs, spec.reference(case, inputs))
    assert m.fields["status"] == "ok", m.fields
    assert m.fields.get("matmul_precision", "") == expected
    assert NumpyCPU().matmul_precision("float32") == "full"


def test_torch_reads_its_float32_matmul_precision():
    torch = pytest.importorskip("torch")
    backend = torch_backend.TorchCPU()
    backend._torch = torch
    before = torch.get_float32_matmul_precision()
    try:
        for level, expected in (("highest", "full"), ("high", "tf32"), ("medium", "bf16")):
            torch.set_float32_matmul_precision(level)
            assert backend.matmul_precision("float32") == expected
            assert backend.matmul_precision("float64") == "full"
    finally:
        torch.set_float32_matmul_precision(before)


def test_torch_gpu_reads_allow_tf32():
    fake = types.SimpleNamespace(
        get_float32_matmul_precision=lambda: "highest",
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(
            matmul=types.SimpleNamespace(allow_tf32=True))))
    backend = torch_backend.TorchGPU()
    backend._torch = fake
    assert backend.matmul_precision("complex64") == "tf32"
    fake.backends.cuda.matmul.allow_tf32 = False
    assert backend.matmul_precision("complex64") == "full"


def test_jax_reads_its_default_matmul_precision():
    backend = jax_backend.JaxGPU()
    config = types.SimpleNamespace(jax_default_matmul_precision=None)
    backend._jax = types.SimpleNamespace(config=config)
    assert backend.matmul_precision("float32") == "tf32"  # XLA's default on a GPU
    config.jax_default_matmul_precision = "highest"
    assert backend.matmul_precision("float32") == "full"
    config.jax_default_matmul_precision = "tensorfloat32"
    assert backend.matmul_precision("float64") == "full"
    cpu = jax_backend.JaxCPU()
    cpu._jax = backend._jax
    assert cpu.matmul_precision("float32") == "full"


def test_jax_start_sets_highest():
    jax = pytest.importorskip("jax")
    before = jax.config.jax_default_matmul_precision
    try:
        backend = jax_backend.JaxCPU()
        backend.start(1)
        assert jax.config.jax_default_matmul_precision == "highest"
    finally:
        jax.config.update("jax_default_matmul_precision", before)


def test_cupy_reads_its_compute_type(monkeypatch):
    backend = cupy_gpu.CupyGPU()
    monkeypatch.setattr(cupy_gpu, "cupy_tf32", lambda: True)
    assert backend.matmul_precision("float32") == "tf32"
    assert backend.matmul_precision("float64") == "full"
    monkeypatch.setattr(cupy_gpu, "cupy_tf32", lambda: False)
    assert backend.matmul_precision("float32") == "full"


def test_cupy_tf32_falls_back_to_the_environment(monkeypatch):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy installed: its compute type decides")
    except ImportError:
        pass
    monkeypatch.setenv("CUPY_TF32", "1")
    assert cupy_gpu.cupy_tf32()
    monkeypatch.setenv("CUPY_TF32", "0")
    assert not cupy_gpu.cupy_tf32()


def _rows(**precision: str) -> pd.DataFrame:
    return pd.DataFrame([{"backend": b, "kernel": "matmul", "status": "ok",
                          "dtype": "float32", "matmul_precision": p}
                         for b, p in precision.items()])


def test_the_report_names_reduced_precision_and_full_precision():
    assert precision_note(_rows(a="full", b="full")) == \
        "full precision (no TF32 or bfloat16) in every row"
    assert precision_note(_rows(a="full", b="tf32", c="bf16")) == \
        "reduced precision allowed: b (TF32), c (bfloat16)"
    assert precision_note(_rows(a="", b="")) == \
        "precision not recorded (an older results file)"
    assert precision_note(_rows(a="full", b="")) == "precision not recorded in 1 of 2 rows"


def test_the_gemm_verdict_and_its_line_state_the_precision():
    from test_verdicts import cases, frame

    gemm = cases("matmul", ["default"], ["float32"], 4096)
    df = frame([("numpy-cpu", *gemm[0], 1.0), ("a-gpu", *gemm[0], 0.01),
                ("b-gpu", *gemm[0], 0.02)])
    df["matmul_precision"] = ["full", "tf32", "full"]
    v = verdicts.verdicts(df)["GEMM"]["large"]
    assert v.precision == "reduced precision allowed: a-gpu (TF32)"
    assert matrix.sentence(v, {}).endswith("; reduced precision allowed: a-gpu (TF32).")
    assert headline.short_line(v, {}).endswith("; reduced precision allowed: a-gpu (TF32).")
    lin = frame([("numpy-cpu", "vector_add", "default", "float32", 1 << 24, 1.0),
                 ("a-gpu", "vector_add", "default", "float32", 1 << 24, 0.01)])
    lin["matmul_precision"] = ""
    assert verdicts.verdicts(lin)["elementwise work"]["large"].precision == ""
