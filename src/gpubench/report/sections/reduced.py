"""Reduced precision: the TF32, bfloat16 and float16 GEMMs (``gemm_reduced``) beside
their framework's float32 ``matmul`` of the same size.

Why a section of its own. A reduced-precision product is a different, less accurate
operation than a float32 one: ranked together, a TF32 row would "win" the GEMM class
by computing less. So these rows stand in no class (no leaders, no crossover, no % of
the float32 GEMM ceiling) and are read here only against the float32 rows of their
own framework, each with its error against the float64 reference and the tolerance
its format allows (:func:`gpubench.kernels.gemm_reduced.reduced_tolerance`).

The rate is 2·n³ flops over the caller's clock (pipelined; CPU: wall), as the float32
row's; "× float32" is the float32 row's time over the reduced row's, framework by
framework. The source documents' statement judged here: tensor cores give GPUs large
speedups at reduced precision (the workshop book). "Large" is this report's reading:
at least :data:`LARGE` times the framework's float32 GEMM at the largest size both
measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from gpubench.kernels.gemm_reduced import FORMATS
from gpubench.kernels.gemm_reduced import SPEC as REDUCED
from gpubench.kernels.matmul import SPEC as FLOAT32
from gpubench.report.base import fmt_int, fmt_relerr, fmt_sig, fmt_speedup
from gpubench.report.render import text_table
from gpubench.report.sections.common import TRANSFERS_SUFFIX, Judged, best_per, primary_mode

#: the statement judged, and the speedup over float32 from which it counts as holding
STATEMENT = "tensor cores give GPUs large speedups at reduced precision"
LARGE = 2.0


@dataclass
class Reduced(Judged):
    """The section (table None: no reduced-precision rows; a sentence per GPU backend),
    the formats not run and why, and the verdict on :data:`STATEMENT`."""

    verdict: str = "not measured"
    statement: str = STATEMENT
    not_run: list[str] = field(default_factory=list)
    large: float = LARGE


def paired_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend, format and size: the fastest ok reduced row (primary mode, caller's
    clock) with its framework's fastest float32 matmul row of the same size beside it
    (``f32_*`` columns; NaN where there is none), and ``ratio``: float32's time over the
    reduced row's."""
    mode = primary_mode(df)
    ok = df[(df["status"] == "ok") & (df["mode"] == mode) & (df["caller_s"] > 0)]
    mine = ok[ok["kernel"] == REDUCED.name]
    if mine.empty:
        return mine.assign(ratio=pd.Series(dtype=float))
    mine = best_per(mine, ["backend", "variant", "size_key"], by="caller_s")
    f32 = ok[(ok["kernel"] == FLOAT32.name) & (ok["dtype"] == "float32")
             & ~ok["implementation"].astype(str).str.endswith(TRANSFERS_SUFFIX)]
    f32 = best_per(f32, ["backend", "size_key"], by="caller_s")[
        ["backend", "size_key", "implementation", "caller_s"]].rename(
        columns={"implementation": "f32_implementation", "caller_s": "f32_caller_s"})
    out = mine.merge(f32, on=["backend", "size_key"], how="left")
    out["ratio"] = out["f32_caller_s"] / out["caller_s"]
    order = {v: i for i, v in enumerate(FORMATS)}
    return out.assign(_v=out["variant"].map(order)).sort_values(
        ["backend", "_v", "size_key"], kind="mergesort").drop(columns="_v")


def _rate(gflops: float) -> str:
    """GFLOP/s in whole numbers from 100 up (tensor-core rates run to 10^5 and more)."""
    return f"{gflops:,.0f}" if gflops >= 100 else fmt_sig(gflops)


def _label(variant: object) -> str:
    f = FORMATS.get(str(variant))
    return f.label if f is not None else str(variant)


def reduced_table(pairs: pd.DataFrame) -> pd.DataFrame | None:
    """One line per backend, format and size: the reduced row's rate and error, the
    float32 row's rate, and the ratio of their times."""
    if pairs.empty:
        return None
    out = []
    for _, r in pairs.iterrows():
        rate = r["flops"] / r["caller_s"] / 1e9
        f32 = (r["flops"] / r["f32_caller_s"] / 1e9 if r["f32_caller_s"] > 0
               else float("nan"))
        out.append([r["backend"], _label(r["variant"]), fmt_int(r["size_key"]),
                    f"{_rate(rate)} ({r['implementation']})",
                    f"{fmt_relerr(r['rel_err'])} (≤ {fmt_relerr(r['tolerance'])})",
                    "—" if pd.isna(r["f32_implementation"]) else
                    f"{_rate(f32)} ({r['f32_implementation']})",
                    fmt_speedup(r["ratio"])])
    headers = ["backend", "format", "n", "reduced GFLOP/s (implementation)",
               "error vs float64 (tolerance)", "float32 matmul GFLOP/s (implementation)",
               "× float32"]
    return text_table(headers, out, frozenset(headers[2:]))


def largest(pairs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per backend: its reduced rows at the largest size where a float32 row stands
    beside them."""
    out = {}
    for backend, g in pairs[pairs["ratio"] > 0].groupby("backend", sort=True):
        out[str(backend)] = g[g["size_key"] == g["size_key"].max()]
    return out


def judge(pairs: pd.DataFrame) -> tuple[str, str]:
    """(verdict, evidence) on :data:`STATEMENT` from the GPU backends: holds where each
    one's best format is at least :data:`LARGE` times its float32 GEMM at the largest
    size both measured, partly where some are, does not hold where none is."""
    gpu = largest(pairs[pairs["device"] == "gpu"])
    if not gpu:
        return "not measured", "no GPU reduced-precision row beside a float32 one"
    best = {b: g.loc[g["ratio"].idxmax()] for b, g in gpu.items()}
    large = [b for b, r in best.items() if r["ratio"] >= LARGE]
    evidence = "; ".join(f"{b}: {_label(r['variant'])} {fmt_speedup(r['ratio'])} float32 "
                         f"at n = {fmt_int(r['size_key'])}" for b, r in best.items())
    verdict = ("holds" if len(large) == len(best) else "partly" if large
               else "does not hold")
    return verdict, evidence


def sentences(pairs: pd.DataFrame) -> list[str]:
    """Per backend, at its largest size with a float32 row: each format's ratio and
    error."""
    out = []
    for backend, g in largest(pairs).items():
        n = fmt_int(g["size_key"].iloc[0])
        parts = [f"{_label(r['variant'])} {fmt_speedup(r['ratio'])} "
                 f"(error {fmt_relerr(r['rel_err'])})" for _, r in g.iterrows()]
        out.append(f"{backend} at n = {n}, against its float32 GEMM "
                   f"({g['f32_implementation'].iloc[0]}): " + ", ".join(parts))
    return out


def not_run(df: pd.DataFrame) -> list[str]:
    """"format (backends): reason" for each format some backends skipped, once per
    reason."""
    rows = df[(df["kernel"] == REDUCED.name) & (df["status"] == "skipped")]
    seen: dict[tuple[str, str], set[str]] = {}
    for _, r in rows.iterrows():
        seen.setdefault((str(r["variant"]), str(r["reason"])), set()).add(str(r["backend"]))
    order = {v: i for i, v in enumerate(FORMATS)}
    return [f"{_label(v)} ({', '.join(sorted(b))}): {why}"
            for (v, why), b in sorted(seen.items(), key=lambda t: (order.get(t[0][0], 99),
                                                                    t[0][1]))]


def build(df: pd.DataFrame) -> Reduced:
    pairs = paired_rows(df)
    verdict, evidence = judge(pairs) if not pairs.empty else ("not measured", "")
    return Reduced(reduced_table(pairs), sentences(pairs), verdict, evidence,
                   not_run=not_run(df))
