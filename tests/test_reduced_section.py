"""The Reduced precision section: each TF32/bfloat16/float16 row beside its framework's
float32 matmul of the same size, with its error and tolerance, never in the GEMM class's
ranking, and the verdict on "tensor cores give large speedups at reduced precision"."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from report_data import row

from gpubench.kernels.gemm_reduced import SPEC as REDUCED
from gpubench.kernels.gemm_reduced import reduced_tolerance
from gpubench.kernels.matmul import SPEC as FLOAT32
from gpubench.report import base, outline, verdicts
from gpubench.report.sections import reduced

N = 4096


def _reduced(framework: str, variant: str, median: float, device: str = "gpu",
             impl: str = "eager", n: int = N, rel_err: float = 2.6e-3,
             status: str = "ok", reason: str = "") -> dict:
    r = row(framework, device, impl, REDUCED.name, n, "float32", median, variant=variant,
            status=status, reason=reason)[0]
    if status == "ok":
        r.update(flops=2.0 * n**3, rel_err=rel_err,
                 tolerance=reduced_tolerance(variant, n))
    return r


def _float32(framework: str, median: float, device: str = "gpu", impl: str = "eager",
             n: int = N) -> dict:
    r = row(framework, device, impl, FLOAT32.name, n, "float32", median)[0]
    r.update(flops=2.0 * n**3)
    return r


def _frame(rows: list[dict]) -> pd.DataFrame:
    return base.prepare(pd.DataFrame(rows))


def test_each_reduced_row_stands_beside_its_frameworks_float32_row() -> None:
    df = _frame([_float32("torch", 4e-3), _float32("torch", 9e-3, impl="triton"),
                 _reduced("torch", "tf32", 1e-3, rel_err=2.6e-4),
                 _reduced("torch", "bf16", 5e-4),
                 _float32("cupy", 5e-3, impl="cublas"),
                 _reduced("cupy", "fp16", 1e-3, impl="cublas", rel_err=3.3e-4)])
    s = reduced.build(df)
    t = s.table
    assert list(t["backend"]) == ["cupy-gpu", "torch-gpu", "torch-gpu"]
    assert list(t["format"]) == ["float16", "TF32", "bfloat16"]
    torch_tf32 = t.iloc[1]
    # against the framework's fastest float32 row (eager, 4 ms), never another's
    assert torch_tf32["× float32"] in ("3.98×", "3.99×", "4.00×", "4.01×", "4.02×")
    pairs = reduced.paired_rows(df).set_index(["backend", "variant"])
    assert pairs.loc[("torch-gpu", "tf32"), "ratio"] == pytest.approx(4.0, rel=0.02)
    assert pairs.loc[("cupy-gpu", "fp16"), "ratio"] == pytest.approx(5.0, rel=0.02)
    assert "(eager)" in torch_tf32["float32 matmul GFLOP/s (implementation)"]
    assert torch_tf32["error vs float64 (tolerance)"].startswith("2.60e-04 (≤ 1.96e-03)")
    assert s.verdict == "holds"
    assert re.search(r"torch-gpu: bfloat16 [78]\.\d\d× float32 at n = 4,096", s.evidence)


def test_a_reduced_row_is_in_no_class_and_ranks_with_nothing() -> None:
    """A TF32 row four times faster than every float32 row leads nothing: the GEMM
    class ranks its float32 rows only."""
    assert REDUCED.report_class is None and REDUCED.ceiling == "none"
    assert all(REDUCED.name not in kernels for kernels in verdicts.classes().values())
    df = _frame([_float32("numpy", 0.1, device="cpu", impl="blas"),
                 _float32("torch", 4e-3), _float32("cupy", 3e-3, impl="cublas"),
                 _reduced("torch", "tf32", 1e-3)])
    found = [v for per in verdicts.verdicts(df).values() for v in per.values()]
    assert found
    for v in found:
        assert REDUCED.name not in v.kernels
        assert all(c[0] != REDUCED.name for c in v.cases)
    assert [v.winner.backend for v in found] == ["cupy-gpu"] * len(found)


def test_the_verdict_is_partly_or_does_not_hold_by_the_gpu_backends() -> None:
    partly = _frame([_float32("torch", 4e-3), _reduced("torch", "bf16", 1e-3),
                     _float32("jax", 4e-3, impl="jit"),
                     _reduced("jax", "bf16", 3e-3, impl="jit")])
    assert reduced.build(partly).verdict == "partly"
    none = _frame([_float32("torch", 4e-3), _reduced("torch", "bf16", 3e-3)])
    assert reduced.build(none).verdict == "does not hold"
    # the CPU's bfloat16 rows are shown but judge no GPU statement
    cpu = _frame([_float32("torch", 4e-2, device="cpu"),
                  _reduced("torch", "bf16", 1e-2, device="cpu")])
    s = reduced.build(cpu)
    assert s.table is not None and s.verdict == "not measured"


def test_no_float32_row_beside_it_leaves_the_ratio_empty_and_skips_are_named() -> None:
    df = _frame([_reduced("jax", "tf32", 1e-3, impl="jit", n=2048),
                 _reduced("torch", "tf32", 0, device="cpu", status="skipped",
                          reason="TF32 is a GPU tensor-core format")])
    s = reduced.build(df)
    assert list(s.table["× float32"]) == ["—"]
    assert s.verdict == "not measured"
    assert s.not_run == ["TF32 (torch-cpu): TF32 is a GPU tensor-core format"]


def test_no_reduced_rows_no_section() -> None:
    s = reduced.build(_frame([_float32("torch", 4e-3)]))
    assert s.table is None
    sec = next(x for x in outline.SECTIONS if x.key == "reduced")
    assert not sec.shown(s)


def test_the_section_renders_in_the_page_and_in_summary_md() -> None:
    from gpubench.report.render import render_html, render_md

    df = _frame([_float32("torch", 4e-3), _reduced("torch", "bf16", 5e-4),
                 _reduced("torch", "tf32", 0, device="cpu", status="skipped",
                          reason="TF32 is a GPU tensor-core format")])
    s = reduced.build(df)
    sec = next(x for x in outline.SECTIONS if x.key == "reduced")
    html = str(render_html(sec.html, s=s))
    md = render_md(sec.md, s=s)
    for text in (html, md):
        assert "Reduced precision" in text and "bfloat16" in text
        assert "holds" in text and "TF32 (torch-cpu): TF32 is a GPU" in text
    assert 'id="reduced-precision"' in html and sec.anchor == "reduced-precision"
    assert "| torch-gpu | bfloat16 | 4,096 |" in md


def test_the_claims_table_judges_tensor_cores_only_where_they_were_measured() -> None:
    from gpubench.report.claims import reduced_claim

    df = _frame([_float32("torch", 4e-3), _reduced("torch", "bf16", 5e-4)])
    statement, evidence, verdict = reduced_claim(df)
    assert "tensor cores" in statement and "workshop book" in statement
    assert verdict == "holds" and evidence.startswith("torch-gpu: bfloat16")
    slow = _frame([_float32("torch", 4e-3), _reduced("torch", "bf16", 3e-3)])
    assert reduced_claim(slow)[2] == "does not hold"
    assert reduced_claim(_frame([_float32("torch", 4e-3)])) is None
