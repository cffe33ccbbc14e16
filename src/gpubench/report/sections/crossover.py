"""CPU/GPU crossover: the size from which each GPU backend beats the case's one CPU
reference (:func:`cpu_reference`) for good, on the caller's clock (with transfers
measured and estimated) and the device clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gpubench.report import verdicts
from gpubench.report.base import (
    _kernel_spec,
)
from gpubench.report.render import text_table
from gpubench.report.sections.ceilings import (
    ceilings_of,
)
from gpubench.report.sections.common import (
    BOOK_CROSSOVER,
    TRANSFERS_SUFFIX,
    _cases,
    best_per,
    narrow,
    primary_mode,
)
from gpubench.report.verdicts import NO_CALLER_CLOCK

# -- CPU/GPU crossover --------------------------------------------------------------------


def crossover(sizes: np.ndarray, gpu: np.ndarray, cpu: np.ndarray) -> tuple[str, float]:
    """(text, size) where the GPU starts to win for good: the smallest size from which it
    is faster at every larger measured size, interpolated log-log between the last size
    it loses and the first it wins. NaN when it never wins at the largest size."""
    order = np.argsort(sizes)
    s, g, c = sizes[order], gpu[order], cpu[order]
    if s.size == 0:
        return "—", math.nan
    wins = g < c
    if not wins[-1]:
        return f"> {int(s[-1]):,} (slower at the largest size compared)", math.nan
    k = s.size - 1
    while k > 0 and wins[k - 1]:
        k -= 1
    if k == 0:
        return f"≤ {int(s[0]):,} (faster at every size)", float(s[0])
    r_lo, r_hi = math.log(g[k - 1] / c[k - 1]), math.log(g[k] / c[k])
    frac = r_lo / (r_lo - r_hi) if r_lo != r_hi else 0.5
    x = math.exp(math.log(s[k - 1]) + frac * (math.log(s[k]) - math.log(s[k - 1])))
    x = float(f"{x:.2g}")
    return f"≈ {x:,.0f} (between {int(s[k - 1]):,} and {int(s[k]):,})", x


def crossover_range(sizes: np.ndarray, gpu: tuple[np.ndarray, np.ndarray],
                    cpu: tuple[np.ndarray, np.ndarray], point: float
                    ) -> tuple[float, float]:
    """The range of a crossover at ``point``: the crossover of the GPU's lower quartiles
    against the CPU's upper ones (the earliest the quartiles allow) to that of the GPU's
    upper quartiles against the CPU's lower ones (the latest), each held between the
    measured sizes on either side of ``point`` (a range never spans more). ``gpu`` and
    ``cpu``: (q1, q3) at ``sizes``. (NaN, NaN) where ``point`` is never or not a size."""
    if not math.isfinite(point) or sizes.size == 0:
        return math.nan, math.nan
    s = np.sort(sizes)
    below = s[s <= point]
    above = s[s >= point]
    lo_edge = float(below[-1]) if below.size else float(s[0])
    hi_edge = float(above[0]) if above.size else float(s[-1])
    early = crossover(sizes, gpu[0], cpu[1])[1]
    late = crossover(sizes, gpu[1], cpu[0])[1]
    early = lo_edge if not math.isfinite(early) else min(max(early, lo_edge), hi_edge)
    late = hi_edge if not math.isfinite(late) else min(max(late, lo_edge), hi_edge)
    return min(early, point), max(late, point)


def cpu_reference(cpu: pd.DataFrame) -> tuple[str, int, pd.DataFrame]:
    """The one CPU reference of a case: of the (CPU backend, thread count) pairs measured
    at the most sizes, the fastest (lowest geometric-mean time over the sizes those
    share); its fastest row per size. Returns (backend, threads, rows)."""
    ok = cpu[(cpu["status"] == "ok") & (cpu["caller_s"] > 0)]
    if ok.empty:
        return "", 0, ok
    keys = list(zip(ok["backend"], ok["threads_key"], strict=True))
    pairs = pd.Series(keys, index=ok.index)
    sizes = ok.groupby(pairs)["size_key"].nunique()
    tops = sorted(sizes[sizes == sizes.max()].index)
    shared = set.intersection(*(set(ok.loc[pairs == p, "size_key"]) for p in tops))

    def rows_of(p: tuple[str, int], at: set[Any] | None = None) -> pd.DataFrame:
        mine = ok[pairs == p]
        mine = mine if at is None else mine[mine["size_key"].isin(at)]
        return best_per(mine, ["size_key"], by="caller_s")

    def geomean(p: tuple[str, int]) -> float:
        return float(np.mean(np.log(rows_of(p, shared)["caller_s"].to_numpy(float))))

    best = min(tops, key=lambda p: (geomean(p), p))
    return str(best[0]), int(best[1]), rows_of(best)


@dataclass
class Crossing:
    """Where one GPU backend starts to beat the best CPU row for one case, per clock.

    Each field is (text, size) from :func:`crossover`. All but ``device_clock`` are on
    the caller's clock (the CPU's wall time against what a caller of the GPU waits for);
    ``device_clock`` puts the GPU's device time against the CPU's wall time, which is
    what the hardware did and not a verdict a user can act on."""

    kernel: str
    variant: str
    dtype: str
    backend: str
    device_resident: tuple[str, float]
    measured_transfers: tuple[str, float] | None
    estimated_transfers: tuple[str, float] | None
    elements: bool
    device_resident_sync: tuple[str, float] | None = None
    device_clock: tuple[str, float] | None = None
    #: the CPU reference every crossover of the case is against (:func:`cpu_reference`):
    #: "numba-cpu, 16 threads"
    reference: str = ""
    #: the ranges of ``device_resident`` and of the with-transfers figure
    #: (:func:`crossover_range`)
    device_range: tuple[float, float] = (math.nan, math.nan)
    transfers_range: tuple[float, float] = (math.nan, math.nan)


#: the crossover cell of a GPU backend whose rows have no caller's clock (schema 1)


def _loglog(xs: np.ndarray, ys: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``ys`` at ``at``, interpolated linearly in log-log between the measured ``xs``."""
    order = np.argsort(xs)
    return np.exp(np.interp(np.log(at), np.log(xs[order]), np.log(ys[order])))


def cross_curves(g_sizes: np.ndarray, g_times: np.ndarray, c_sizes: np.ndarray,
                 c_times: np.ndarray) -> tuple[str, float] | None:
    """:func:`crossover` of two measured curves, compared at every size either measured
    inside the range both cover (each interpolated log-log between its own sizes, never
    extrapolated); None when the ranges do not overlap or a time is missing."""
    sizes = _shared_sizes(g_sizes, g_times, c_sizes, c_times)
    if sizes is None:
        return None
    return crossover(sizes, _loglog(g_sizes, g_times, sizes),
                     _loglog(c_sizes, c_times, sizes))


def speedup_curve(g_sizes: np.ndarray, g_times: np.ndarray, c_sizes: np.ndarray,
                  c_times: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(sizes, CPU time over GPU time) at the sizes :func:`cross_curves` compares, each
    curve interpolated the same way: drawn log-log, it crosses 1 where the crossover is,
    so a figure of it agrees with the tables. None where :func:`cross_curves` is."""
    sizes = _shared_sizes(g_sizes, g_times, c_sizes, c_times)
    if sizes is None:
        return None
    return sizes, _loglog(c_sizes, c_times, sizes) / _loglog(g_sizes, g_times, sizes)


def reference_name(backend: str, threads: int) -> str:
    """"numba-cpu, 16 threads": how every sentence names a case's CPU reference."""
    return f"{backend}, {threads} thread{'s' if threads != 1 else ''}"


def _shared_sizes(g_sizes: np.ndarray, g_times: np.ndarray, c_sizes: np.ndarray,
                  c_times: np.ndarray) -> np.ndarray | None:
    """Every size either curve measured inside the range both cover; None where the
    ranges do not overlap or a time is missing."""
    if not (np.isfinite(g_times).all() and np.isfinite(c_times).all()) or (
            (g_times <= 0).any() or (c_times <= 0).any()):
        return None
    lo = max(g_sizes.min(), c_sizes.min())
    hi = min(g_sizes.max(), c_sizes.max())
    if lo > hi:
        return None
    sizes = np.unique(np.r_[g_sizes, c_sizes])
    return sizes[(sizes >= lo) & (sizes <= hi)]


def curves_range(g: pd.DataFrame, c: pd.DataFrame, point: float,
                 extra: np.ndarray | None = None) -> tuple[float, float]:
    """:func:`crossover_range` of the GPU rows ``g`` against the CPU reference ``c``
    (one row per size each, caller's clock, ``extra`` seconds added to the GPU's)."""
    gs, cs = g["size_key"].to_numpy(float), c["size_key"].to_numpy(float)
    add = extra if extra is not None else 0.0
    gq = [g[q].to_numpy(float) + add for q in ("caller_q1", "caller_q3")]
    cq = [c[q].to_numpy(float) for q in ("caller_q1", "caller_q3")]
    sizes = _shared_sizes(gs, g["caller_s"].to_numpy(float) + add, cs,
                          c["caller_s"].to_numpy(float))
    if sizes is None or not all(np.isfinite(x).all() and (x > 0).all() for x in (*gq, *cq)):
        return math.nan, math.nan
    at = [_loglog(gs, x, sizes) for x in gq], [_loglog(cs, x, sizes) for x in cq]
    return crossover_range(sizes, (at[0][0], at[0][1]), (at[1][0], at[1][1]), point)


def crossings(df: pd.DataFrame, env_data: Mapping[str, Any]) -> list[Crossing]:
    """Every GPU backend against the best CPU row (wall time), per kernel, variant and
    dtype: on the caller's clock (pipelined, and sync), with transfers measured and
    estimated, and the device clock for reference."""
    mode = primary_mode(df)
    link = ceilings_of(env_data).get("h2d_pageable_gbps")
    df = narrow(df)
    ok = df[(df["status"] == "ok") & (df["mode"] == mode)]
    out = []
    for kernel, variant, dtype, g in _cases(ok):
        ref, threads, cpu = cpu_reference(g[g["device"] == "cpu"])
        gpu_rows = g[g["device"] == "gpu"]
        if cpu.empty or gpu_rows.empty:
            continue
        reference = reference_name(ref, threads)
        c_sizes = cpu["size_key"].to_numpy(float)
        c_times = cpu["caller_s"].to_numpy(float)
        spec = _kernel_spec(kernel)
        elements = bool(spec and spec.size_meaning.startswith("elements"))
        for backend in sorted(set(gpu_rows["backend"])):
            b = gpu_rows[gpu_rows["backend"] == backend]
            e2e = b["implementation"].str.endswith(TRANSFERS_SUFFIX)

            def cross(rows: pd.DataFrame, col: str, extra: bool = False,
                      c_sizes: np.ndarray = c_sizes, c_times: np.ndarray = c_times,
                      cpu: pd.DataFrame = cpu
                      ) -> tuple[tuple[str, float] | None, tuple[float, float]]:
                best = best_per(rows, ["size_key"], by=col)
                if best.empty:
                    return None, (math.nan, math.nan)
                t = best[col].to_numpy(float)
                add = best["bytes"].to_numpy(float) / (link * 1e9) if extra else None
                if add is not None:
                    t = t + add
                found = cross_curves(best["size_key"].to_numpy(float), t, c_sizes, c_times)
                if found is None or col != "caller_s":
                    return found, (math.nan, math.nan)
                return found, curves_range(best, cpu, found[1], add)

            resident = b[~e2e]
            dev, dev_range = cross(resident, "caller_s")
            hardware = cross(resident, "median_s")[0]
            if dev is None and hardware is None:
                continue
            if dev is None:
                dev = (NO_CALLER_CLOCK, math.nan)
            meas, meas_range = cross(b[e2e], "caller_s") if e2e.any() else (
                None, (math.nan, math.nan))
            est, est_range = None, (math.nan, math.nan)
            if link and (resident["bytes"] > 0).all():
                est, est_range = cross(resident, "caller_s", extra=True)
            out.append(Crossing(kernel, variant, dtype, backend, dev, meas, est, elements,
                                cross(resident, "sync_s")[0], hardware, reference,
                                dev_range, meas_range if meas else est_range))
    return out


def numpy_only(references: Iterable[str]) -> bool:
    """Whether every named reference is NumPy: "× NumPy" (over NumPy's fastest row of a
    case) already says what a figure over it would."""
    return all(r.startswith("numpy-cpu,") for r in references)


def reference_speedups(df: pd.DataFrame, found: Mapping[str, Mapping[str, Any]]
                       ) -> dict[tuple[str, str], tuple[float, list[str]]]:
    """Per (class, backend) of each class's headline verdict (its largest band): the
    median over the verdict's cases of the case's CPU reference (:func:`cpu_reference`,
    the one the crossovers are against) over the backend's caller's-clock time at the
    case's size (the reference read log-log between its sizes, never extrapolated), and
    the references. Only where a reference is not NumPy (:func:`numpy_only`): there a
    sentence quoting "× NumPy" beside a crossover against another CPU framework would
    set two baselines side by side, one of them unnamed."""
    ok = df[(df["status"] == "ok") & (df["mode"] == primary_mode(df)) & (df["caller_s"] > 0)
            & (df["device"] == "cpu")]
    refs: dict[tuple[str, str, str], tuple[str, pd.DataFrame]] = {}

    def ref_of(k: str, var: str, d: str) -> tuple[str, pd.DataFrame]:
        if (k, var, d) not in refs:
            rows = ok[(ok["kernel"] == k) & (ok["variant"] == var) & (ok["dtype"] == d)]
            b, threads, cpu = cpu_reference(rows)
            refs[(k, var, d)] = (reference_name(b, threads) if b else "", cpu)
        return refs[(k, var, d)]

    out: dict[tuple[str, str], tuple[float, list[str]]] = {}
    for cls, per in found.items():
        band = next((b for b in reversed(verdicts.BAND_NAMES) if b in per), None)
        if band is None:
            continue
        for st in [*per[band].ranked, *per[band].partial]:
            ratios, names = [], set()
            for (k, var, d, size), i in zip(st.cases, st.rows, strict=True):
                name, cpu = ref_of(k, var, d)
                xs = cpu["size_key"].to_numpy(float)
                if not name or not xs.size or not xs.min() <= size <= xs.max():
                    continue
                t = _loglog(xs, cpu["caller_s"].to_numpy(float), np.array([float(size)]))[0]
                ratios.append(t / float(df.loc[i, "caller_s"]))
                names.add(name)
            if ratios and not numpy_only(names):
                out[(cls, st.backend)] = (float(np.median(ratios)), sorted(names))
    return out


def crossover_table(found: list[Crossing]) -> pd.DataFrame | None:
    if not found:
        return None

    def cell(x: tuple[str, float] | None) -> str:
        return x[0] if x else "—"

    rows = [[c.kernel, c.variant, c.dtype, c.backend, cell(c.device_resident),
             cell(c.device_resident_sync), cell(c.measured_transfers),
             cell(c.estimated_transfers), cell(c.device_clock)] for c in found]
    return text_table(["kernel", "variant", "dtype", "GPU backend",
                  "data on the device (caller, pipelined)", "data on the device (caller, sync)",
                  "with transfers, measured +transfers (caller, pipelined)",
                  "with transfers, estimated (caller, pipelined)",
                  "device clock (hardware only, not a verdict)"], rows)


def crossover_headline(found: list[Crossing]) -> list[str]:
    """One sentence per GPU backend and class on element-sized kernels, on the caller's
    clock: the same figure the matrix cell, the "Which framework?" bullet and the claims
    check show (:func:`gpubench.report.verdicts.class_crossovers`; rows without a
    caller's clock, from a schema-1 file, are not counted as "never")."""
    summaries = verdicts.class_crossovers(found)
    order = list(verdicts.classes())
    lines = []
    for (backend, _), c in sorted(summaries.items(),
                                  key=lambda kv: (kv[0][0], order.index(kv[0][1]))):
        lines.append(f"{backend}, {c.title}: a caller waiting for the GPU (pipelined calls, "
                     f"data on the device) is served faster than by the CPU reference "
                     f"({c.reference_text() or 'none named'}) from {c.text()}; with host "
                     f"transfers from {c.transfers_text()}.")
    return lines


@dataclass
class Crossover:
    """The crossover section: one sentence per GPU backend, the table of every case, and
    why there is none when there is none."""

    mode: str
    found: list[Crossing]
    headline: list[str]
    table: pd.DataFrame | None
    why_none: str = ""
    #: the size below which the workshop book says the GPU loses
    book_crossover: int = BOOK_CROSSOVER


def build(df: pd.DataFrame, found: list[Crossing]) -> Crossover:
    """``found``: :func:`crossings` of the frame."""
    mode = primary_mode(df)
    if not found:
        have_gpu = bool((df["device"] == "gpu").any() and (
            (df["device"] == "gpu") & (df["status"] == "ok")).any())
        why = ("no CPU rows to compare with" if have_gpu else
               "no successful GPU measurements in this result set")
        return Crossover(mode, [], [], None, why)
    return Crossover(mode, found, crossover_headline(found), crossover_table(found))
