"""The comparison guide's claims, and the checks that judge them on this run's rows.

The source documents (the comparison guide, the workshop book, the Numba/CuPy guide)
say things about the frameworks: CuPy is gentle, Numba pays JIT compilation on the first
call, Numba's kernels match CUDA C, fusion reduces overhead... :data:`GUIDE` holds what
they say of each backend, with what the check needs to judge it (the pairs of
implementations compared, the baseline); :func:`claims` sets each claim beside this
run's answer: holds, does not hold or partly. The data stand here, beside the code
that reads them, not on the backend classes: they are the report's, and no run reads
them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gpubench.backends import backend_classes, split_backend_id
from gpubench.report import stats, verdicts
from gpubench.report.base import fmt_time
from gpubench.report.cells import ok_hot, range_text, times
from gpubench.report.render import text_table
from gpubench.report.verdicts import NOT_MEASURED, classes, speedup_aspect
from gpubench.workloads import crossover_class

#: the figures of the source documents the claims are checked against
SOURCE_SPEEDUP = (10.0, 100.0)
SOURCE_CROSSOVER = 10_000
#: from this median speedup over plain Python loops on a claim counts as holding
LOOPS_SPEEDUP = 10.0
#: the kinds of claim :func:`claims` judges
CLAIM_KINDS = ("verbosity", "jit", "loops", "cuda_c", "often_fast", "drop_in")


@dataclass(frozen=True)
class Guide:
    """What the source documents say of one backend, and what judging it needs."""

    #: ("verbosity", True: verbose / False: gentle, claim) or ("jit", True: the first
    #: call compiles / False: no compilation for standard operations, claim), ("loops",
    #: True, claim: faster than :attr:`plain_loops`' backend), ("cuda_c", True, claim:
    #: matches CUDA C, :attr:`cuda_c_pairs`), ("often_fast", True, claim: faster than
    #: :attr:`fast_against`'s first in >= half) or ("drop_in", True, claim:
    #: :attr:`drop_in`'s implementation replaces the other's)
    claims: tuple[tuple[str, bool, str], ...] = ()
    #: implementations compiled on first use (user-written kernels), left out of a
    #: ("jit", False, ...) claim about its standard operations
    compiled_implementations: frozenset[str] = frozenset()
    #: a ("cuda_c", ...) claim's pairs: (kernel, own implementation, the same algorithm's
    #: implementation in :attr:`cuda_c_reference`, the backend running the CUDA C)
    cuda_c_pairs: tuple[tuple[str, str, str], ...] = ()
    cuda_c_reference: str = ""
    #: the fusion claim: (fused implementations, the unfused ones, the kernels where both
    #: compute the same expression); None: no fusion to judge
    fusion: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None
    #: an ("often_fast", ...) claim's comparison: the backends it is compared with, the
    #: first judged, the rest shown beside it
    fast_against: tuple[str, ...] = ()
    #: a ("drop_in", ...) claim's pair: (own implementation, the backend it replaces, that
    #: backend's implementation, the kernel): the same calls, correct, and faster
    drop_in: tuple[str, str, str, str] | None = None
    #: it runs the kernels as plain interpreted loops: the baseline of the ("loops", ...)
    #: claims (:func:`loops_backend`)
    plain_loops: bool = False


#: jax.jit (XLA fuses) against eager jax.numpy: no eager implementation is registered,
#: so the fusion claim says JAX is not measured
_JAX_FUSION = (("jit",), ("eager",), ("elementwise", "reduction"))
#: torch.compile (Inductor fuses) against eager, the same expression
_TORCH_FUSION = (("compile",), ("eager",), ("elementwise", "reduction"))

#: what the source documents say, per backend id (a backend without an entry: nothing)
GUIDE: dict[str, Guide] = {
    "python-cpu": Guide(plain_loops=True),
    # its compiled loops against the same loops in plain Python (python-cpu)
    "numba-cpu": Guide(claims=(
        ("loops", True, "Numba: 10–100× faster than plain Python loops"),)),
    "jax-cpu": Guide(
        claims=(("often_fast", True, "JAX's CPU backend is often fast (faster than NumPy "
                 "in ≥ half the cases)"),),
        fusion=_JAX_FUSION, fast_against=("numpy-cpu", "numba-cpu")),
    "torch-cpu": Guide(fusion=_TORCH_FUSION),
    "cupy-gpu": Guide(
        claims=(("verbosity", False, "CuPy: gentle, low verbosity"),
                ("jit", False, "CuPy: no compilation overhead for standard operations"),
                ("drop_in", True, "cupyx.scipy.fft: a drop-in for scipy.fft, at the GPU's "
                 "speed (Numba/CuPy guide)")),
        drop_in=("cupyx_scipy_fft", "numpy-cpu", "scipy_fft", "fft"),
        # its user-written kernels (compiled on first use); the rest of its
        # implementations are its library's standard operations, which the comparison
        # guide says need no compilation
        compiled_implementations=frozenset({"raw_kernel", "raw_kernel_sliding",
                                            "raw_naive", "raw_tiled", "elementwise_kernel",
                                            "reduction_kernel", "fuse"}),
        # fused kernels against the array operations, where both compute one expression
        # (vector_add is one operation: nothing to fuse; the moving average's kernels
        # use another algorithm than cumsum)
        fusion=(("fuse", "elementwise_kernel", "reduction_kernel"),
                ("array_ops", "array_op"), ("elementwise", "reduction"))),
    "numba-gpu": Guide(
        claims=(("jit", True, "Numba: the first call pays JIT compilation"),
                ("cuda_c", True, "Numba matches CUDA C (hand-written kernels, same "
                 "algorithm)")),
        # the same algorithm hand-written in Numba and in the shared ``.cu`` files.
        # Monte Carlo is left out: Numba draws with xoroshiro128+ states, the CUDA C
        # with Philox, so a difference would be the generator's, not the compiler's
        cuda_c_pairs=(("vector_add", "cuda_jit", "nvrtc"),
                      ("elementwise", "cuda_jit", "nvrtc"),
                      ("reduction", "cuda_jit", "nvrtc"),
                      ("matmul", "cuda_jit_naive", "naive"),
                      ("matmul", "cuda_jit_tiled", "tiled"),
                      ("moving_average", "cuda_jit", "nvrtc"),
                      ("moving_average", "cuda_jit_sliding", "nvrtc_sliding")),
        cuda_c_reference="cuda_python-gpu"),
    "jax-gpu": Guide(claims=(("jit", True, "JAX: JIT (XLA) compiles on the first call"),),
                     fusion=_JAX_FUSION),
    "torch-gpu": Guide(fusion=_TORCH_FUSION),
    "cuda_python-gpu": Guide(claims=(("verbosity", True, "CUDA Python: verbose"),)),
}
_NOTHING = Guide()


def guide(backend: str) -> Guide:
    """What the source documents say of ``backend`` (nothing for one they do not name)."""
    return GUIDE.get(backend, _NOTHING)


def claim_pairs(df: pd.DataFrame) -> dict[Any, Any]:
    """The rows behind the claims judged on paired cases: ("cuda_c", backend) and
    ("often_fast", backend) per backend the guide says it of (:func:`cuda_c_pairs`,
    :func:`fast_pairs`), "fusion" (:func:`fusion_pairs`), "threads" (the thread counts'
    verdict, :func:`thread_claim`), "reduced" (tensor cores' speedup at reduced
    precision, :func:`reduced_claim`; None where not measured) and "block_size" (the block
    sizes' verdict, where a run swept them, :func:`block_size_claim`)."""
    out: dict[Any, Any] = {"fusion": fusion_pairs(df), "threads": thread_claim(df),
                           "reduced": reduced_claim(df)}
    block = block_size_claim(df)
    if block is not None:
        out["block_size"] = block
    for b in backend_classes():
        said = guide(b)
        for kind, _expect, _claim in said.claims:
            if kind == "cuda_c":
                out[(kind, b)] = cuda_c_pairs(df, b)
            elif kind == "often_fast":
                out[(kind, b)] = fast_pairs(df, b)
            elif kind == "drop_in" and said.drop_in is not None:
                mine, other, theirs, kernel = said.drop_in
                out[(kind, b)] = paired_cases(df, (b, (mine,)), (other, (theirs,)),
                                              "caller_s", (kernel,))
    return out


def loops_backend() -> str:
    """The plain-loop baseline of the ("loops", ...) claims: the backend that runs the
    same loops interpreted (:attr:`Guide.plain_loops`)."""
    return next((b for b in backend_classes() if guide(b).plain_loops), "")


def loop_speedups(df: pd.DataFrame, backend: str) -> pd.DataFrame:
    """Per case both measured, at one thread: ``backend``'s fastest ok hot row on the
    caller's clock (CPU: wall) over the plain-Python row (:func:`loops_backend`).

    One thread on both sides: the claim is about compiling a loop, not about cores (a
    ``prange`` row at 64 threads would multiply it by the machine). Columns: kernel,
    variant, dtype, size_key, implementation, caller_s, loop_s, speedup, row, loop_row
    (indices in ``df``); empty where the two share no case.
    """
    keys = ["kernel", "variant", "dtype", "size_key"]
    cols = [*keys, "implementation", "caller_s", "loop_s", "speedup", "row", "loop_row"]
    rows = ok_hot(df)
    rows = rows[(rows["caller_s"] > 0) & (rows["threads"] == 1)]

    def best(b: str) -> pd.DataFrame:
        mine = rows[rows["backend"] == b]
        mine = mine.assign(row=mine.index).sort_values(
            [*keys, "caller_s", "implementation"], kind="mergesort")
        return mine.drop_duplicates(keys, keep="first")[
            [*keys, "implementation", "caller_s", "row"]]

    loop = best(loops_backend()).rename(columns={"caller_s": "loop_s", "row": "loop_row"})
    both = best(backend).merge(loop.drop(columns="implementation"), on=keys)
    if both.empty:
        return pd.DataFrame(columns=cols)
    both["speedup"] = both["loop_s"] / both["caller_s"]
    return both[cols].sort_values(keys, kind="mergesort").reset_index(drop=True)


# -- the claims of the source documents ----------------------------------------------------------


def _verdict(flags: Sequence[bool]) -> str:
    if not flags:
        return NOT_MEASURED
    return "holds" if all(flags) else "does not hold" if not any(flags) else "partly"


def _jit_claim(matrix: Any, backend: str, claim: str, expect: bool,
               implementations: Sequence[str] | None = None,
               exclude: Sequence[str] = ()) -> list[str]:
    """A compilation claim judged on the first size of each case, cold caches only:
    ``expect`` True (the first call pays compilation) holds when the median first-call
    extra cost reaches 10 ms; False (no compilation overhead) when not even the largest
    does."""
    rows = matrix.first_calls.get(backend)
    if rows is not None and len(rows):
        if implementations is not None:
            rows = rows[rows["implementation"].isin(list(implementations))]
        rows = rows[~rows["implementation"].isin(list(exclude))]
    if rows is None or rows.empty:
        note = matrix.cells.get((backend, "first call, JIT"))
        why = note.text if note is not None and not note.measured else NOT_MEASURED
        return [claim, why, NOT_MEASURED]
    typical, worst = verdicts.jit_visible(rows["extra"])
    w = rows["extra"].idxmax()
    text = (f"first size of {len(rows)} cases, cold caches: median "
            f"{fmt_time(float(rows['extra'].median()))}, largest "
            f"{fmt_time(float(rows['extra'].max()))} ({rows.loc[w, 'kernel']} "
            f"{rows.loc[w, 'implementation']})")
    if expect:
        verdict = "holds" if typical else "partly" if worst else "does not hold"
    else:
        verdict = "does not hold" if typical else "partly" if worst else "holds"
    return [claim, text, verdict]


def loop_claim(matrix: Any, backend: str, claim: str, expect: bool) -> list[str]:
    """A "10–100× faster than plain Python loops" claim judged on the cases ``backend``
    and :func:`loops_backend` both measured at one thread (:func:`loop_speedups`):
    ``expect`` True holds when the median speedup reaches :data:`LOOPS_SPEEDUP` (or more:
    the claim is that compiling pays at least that much), partly when only some cases
    do, and does not hold when none does (False: the other way round)."""
    rows = matrix.loops.get(backend)
    if rows is None or rows.empty:
        why = (f"no {backend} and {loops_backend()} rows of the same case at one thread"
               if rows is not None else f"{backend} was not compared with plain Python")
        return [claim, f"{NOT_MEASURED}: {why}", NOT_MEASURED]
    lo, hi = SOURCE_SPEEDUP
    v = rows["speedup"]
    med = float(v.median())
    inside = int(((v >= lo) & (v <= hi)).sum())
    above, below = int((v > hi).sum()), int((v < lo).sum())
    text = (f"{backend} over {loops_backend()}, one thread, {len(rows)} shared cases "
            f"({', '.join(sorted(set(rows['kernel'])))}; "
            f"{int(rows['size_key'].min()):,}–{int(rows['size_key'].max()):,} elements): "
            f"median {times(med)} ({range_text(float(v.min()), float(v.max()))}); {inside} in "
            f"10–100×, {above} above, {below} below")
    reached, some = med >= LOOPS_SPEEDUP, bool((v >= LOOPS_SPEEDUP).any())
    if expect:
        verdict = "holds" if reached else "partly" if some else "does not hold"
    else:
        verdict = "does not hold" if reached else "partly" if some else "holds"
    return [claim, text, verdict]


# -- claims judged on paired rows: each side's fastest row of the cases both measured --------

#: the keys of one case: what both sides of a paired claim must have measured
CASE_KEYS = ["kernel", "variant", "dtype", "size_key"]
#: a ("cuda_c", ...) claim holds on a case when the backend's device time is at most
#: this multiple of the CUDA C's
CUDA_C_MATCH = 1.25
#: "often": faster in at least this share of the shared cases
OFTEN = 0.5
FUSION_CLAIM = ("fusion reduces overhead: cupy.fuse / ElementwiseKernel / ReductionKernel, "
                "torch.compile, jax.jit against unfused calls")


def paired_cases(df: pd.DataFrame, mine: tuple[str, Sequence[str]],
                 theirs: tuple[str, Sequence[str]], clock: str = "caller_s",
                 kernels: Sequence[str] | None = None,
                 equal_threads: bool = False) -> pd.DataFrame:
    """Like with like for a claim: per case (kernel, variant, dtype, size) that both
    sides measured (ok, hot), each side's fastest row among its implementations (none
    named: any) on ``clock`` ("caller_s": the caller's clock, CPU wall; "median_s": the
    device clock). ``ratio`` is their time over mine (> 1: mine is faster).

    ``equal_threads``: both sides at one thread count, per case the most both measured
    (a multithreaded row against a single-thread one would credit the cores, not the
    framework); ``threads`` then says which. Columns: the case keys, threads,
    implementation, time, other_implementation, other_time, ratio, row, other_row
    (indices in ``df``); empty where the two share no case."""
    cols = [*CASE_KEYS, "threads", "implementation", "time", "other_implementation",
            "other_time", "ratio", "row", "other_row"]
    rows = ok_hot(df)
    rows = rows[rows[clock] > 0]
    if kernels is not None:
        rows = rows[rows["kernel"].isin(list(kernels))]
    keys = [*CASE_KEYS, "threads"] if equal_threads else list(CASE_KEYS)

    def best(side: tuple[str, Sequence[str]]) -> pd.DataFrame:
        backend, impls = side
        mine = rows[rows["backend"] == backend]
        if impls:
            mine = mine[mine["implementation"].isin(list(impls))]
        mine = mine.assign(row=mine.index, time=mine[clock]).sort_values(
            [*keys, "time", "implementation"], kind="mergesort")
        return mine.drop_duplicates(keys, keep="first")[
            [*keys, "implementation", "time", "row"]]

    other = best(theirs).rename(columns={"implementation": "other_implementation",
                                         "time": "other_time", "row": "other_row"})
    both = best(mine).merge(other, on=keys)
    if both.empty:
        return pd.DataFrame(columns=cols)
    if equal_threads:  # per case, the most threads both sides measured
        both = both.sort_values([*CASE_KEYS, "threads"], kind="mergesort").drop_duplicates(
            list(CASE_KEYS), keep="last")
    else:
        both["threads"] = pd.NA
    both["ratio"] = both["other_time"] / both["time"]
    return both[cols].sort_values(list(CASE_KEYS), kind="mergesort").reset_index(drop=True)


def _threads_said(rows: pd.DataFrame) -> str:
    """"1 and 16 threads", "16 threads": the thread counts a paired claim compared at."""
    if "threads" not in rows:
        return ""
    counts = sorted({int(t) for t in rows["threads"].dropna()})
    if not counts:
        return ""
    words = ", ".join(f"{t:,}" for t in counts[:-1])
    words = f"{words} and {counts[-1]:,}" if words else f"{counts[-1]:,}"
    return f"{words} thread{'s' if counts != [1] else ''}"


def _sizes(rows: pd.DataFrame) -> str:
    lo, hi = int(rows["size_key"].min()), int(rows["size_key"].max())
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def _case(r: Any) -> str:
    return f"{r.kernel}/{r.variant} {r.dtype} at {int(r.size_key):,}"


def _named(rows: pd.DataFrame, what: str, limit: int = 3) -> str:
    """The first cases of ``rows`` named with their ratio ("" without any)."""
    if rows.empty:
        return ""
    named = ", ".join(f"{_case(r)} ({what} {times(r.ratio)})"
                      for r in rows.head(limit).itertuples(index=False))
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return named + more


def cuda_c_pairs(df: pd.DataFrame, backend: str) -> pd.DataFrame:
    """A backend's hand-written GPU kernels against the same algorithm in CUDA C (its
    :attr:`Guide.cuda_c_pairs` and :attr:`Guide.cuda_c_reference`), case by case on the device
    clock: the claim is about the code the compilers make, not the launch path.
    ``ratio`` is the backend's time over CUDA C's (> 1: slower); ``pair`` names the two
    implementations."""
    said = guide(backend)
    out = []
    for kernel, own, cuda_c in said.cuda_c_pairs:
        p = paired_cases(df, (said.cuda_c_reference, (cuda_c,)), (backend, (own,)),
                         "median_s", (kernel,))
        if not p.empty:
            out.append(p.assign(pair=f"{own}/{cuda_c}"))
    if not out:
        return pd.DataFrame(columns=[*CASE_KEYS, "pair", "ratio", "row", "other_row"])
    return pd.concat(out, ignore_index=True)


def cuda_c_claim(pairs: pd.DataFrame, backend: str, reference: str, claim: str) -> list[str]:
    """"Matches CUDA C": holds when the backend's device time is within
    :data:`CUDA_C_MATCH` × CUDA C's on every shared case, partly on some, does not hold
    on none; the text gives each pair of implementations' count and the slowest cases."""
    if pairs.empty:
        return [claim, f"{NOT_MEASURED}: no {backend} and {reference} rows of the same "
                "kernel and case", NOT_MEASURED]
    within = pairs["ratio"] <= CUDA_C_MATCH
    per = []
    for (kernel, pair), g in pairs.groupby(["kernel", "pair"], sort=True):
        ok = g["ratio"] <= CUDA_C_MATCH
        per.append(f"{kernel} {pair} {int(ok.sum())} of {len(g)} "
                   f"(median {times(float(g['ratio'].median()))}, {_sizes(g)})")
    slow = pairs[~within].sort_values("ratio", ascending=False, kind="mergesort")
    text = (f"{backend} over {reference}'s CUDA C, device clock (CUDA events), hot, "
            f"{len(pairs)} shared cases: time within {CUDA_C_MATCH:g}× of CUDA C's in "
            f"{int(within.sum())}; median {times(float(pairs['ratio'].median()))} "
            f"({range_text(float(pairs['ratio'].min()), float(pairs['ratio'].max()))}); "
            + "; ".join(per))
    if not slow.empty:
        text += f"; slowest: {_named(slow, 'time ratio', 3)}"
    return [claim, text, _verdict([bool(f) for f in within])]


def fusion_pairs(df: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (backend, fused implementation) of every backend with a
    :attr:`Guide.fusion`: its rows against the fastest unfused row of the same case on the caller's
    clock (what the Python loop waits for: fusion saves launches and memory passes), on
    the kernels the fact names. ``ratio`` is the unfused time over the fused (> 1:
    fusion is faster)."""
    out = {}
    for b in backend_classes():
        fusion = guide(b).fusion
        if fusion is not None:
            fused, unfused, kernels = fusion
            for f in fused:
                out[(b, f)] = paired_cases(df, (b, (f,)), (b, unfused), "caller_s", kernels)
    return out


def fusion_claim(pairs: Mapping[tuple[str, str], pd.DataFrame]) -> list[str]:
    """"Fusion reduces overhead": on a case fusion counts as faster when the unfused
    call takes at least 1 + MIN_EFFECT (5 %) as long; holds when it does in every
    shared case, partly in some, does not hold in none; pairs without shared rows are
    named as not measured."""
    edge = 1 + stats.MIN_EFFECT
    per, flags, missing = [], [], []
    for (b, fused), p in pairs.items():
        if p.empty:
            missing.append(f"{b} {fused}")
            continue
        faster = p["ratio"] >= edge
        flags += [bool(f) for f in faster]
        worse = p[~faster].sort_values("ratio", kind="mergesort")
        note = f"; not faster: {_named(worse, 'unfused/fused', 2)}" if len(worse) else ""
        per.append(f"{b} {fused} over {'/'.join(sorted(set(p['other_implementation'])))}: "
                   f"faster in {int(faster.sum())} of {len(p)} cases "
                   f"({', '.join(sorted(set(p['kernel'])))}; {_sizes(p)}; median "
                   f"{times(float(p['ratio'].median()))}){note}")
    if not flags:
        return [FUSION_CLAIM, f"{NOT_MEASURED}: no fused and unfused rows of the same case",
                NOT_MEASURED]
    text = (f"caller's clock, hot, faster = the unfused call takes ≥ {edge:g}× as long: "
            + "; ".join(per))
    if missing:
        text += f"; {NOT_MEASURED} (no shared rows): {', '.join(missing)}"
    return [FUSION_CLAIM, text, _verdict(flags)]


def fast_pairs(df: pd.DataFrame, backend: str) -> dict[str, pd.DataFrame]:
    """The backend against each of its :attr:`Guide.fast_against`: every side's fastest
    row (any implementation, any thread count: what a user gets) of each shared case of
    the report classes' kernels, on the caller's clock (CPU: wall). ``ratio``: the
    other's time over the backend's (> 1: the backend is faster)."""
    kernels = [k for ks in classes().values() for k in ks]
    return {o: paired_cases(df, (backend, ()), (o, ()), "caller_s", kernels,
                            equal_threads=True)
            for o in guide(backend).fast_against}


def often_fast_claim(pairs: Mapping[str, pd.DataFrame], backend: str, claim: str) -> list[str]:
    """"Often fast", against the first backend compared: faster on a case when the other
    takes at least 1 + MIN_EFFECT as long; holds when that is so in at least
    :data:`OFTEN` of the shared cases, partly in fewer but some, does not hold in none.
    The other backends are shown beside it, not judged."""
    edge = 1 + stats.MIN_EFFECT
    base = next(iter(pairs), "")
    p = pairs.get(base)
    if p is None or p.empty:
        return [claim, f"{NOT_MEASURED}: no {backend} and {base or 'baseline'} rows of the "
                "same case", NOT_MEASURED]
    texts = []
    for other, q in pairs.items():
        if q.empty:
            texts.append(f"against {other}: {NOT_MEASURED}")
            continue
        faster, slower = q["ratio"] >= edge, q["ratio"] <= 1 / edge
        at = _threads_said(q)
        texts.append(f"against {other}: faster in {int(faster.sum())} of {len(q)} shared "
                     f"cases ({', '.join(sorted(set(q['kernel'])))}; {_sizes(q)}"
                     f"{'; at ' + at + ' each' if at else ''}), slower "
                     f"in {int(slower.sum())}, median {times(float(q['ratio'].median()))} "
                     f"({range_text(float(q['ratio'].min()), float(q['ratio'].max()))})")
    n, k = len(p), int((p["ratio"] >= edge).sum())
    verdict = "holds" if k >= OFTEN * n else "partly" if k else "does not hold"
    return [claim, f"{backend}, caller's clock (CPU: wall), hot, each side's fastest row "
            "at one thread count, per case the most both measured; faster = the other "
            f"takes ≥ {edge:g}× as long; " + "; ".join(texts), verdict]


def drop_in_claim(pairs: pd.DataFrame, backend: str,
                  drop_in: tuple[str, str, str, str] | None, claim: str) -> list[str]:
    """A drop-in replacement: the same calls ran and passed the check (ok rows are
    checked) in every case both measured, and faster (the other takes at least
    1 + MIN_EFFECT as long): holds in every shared case, partly in some, does not hold
    in none; not measured without a shared case."""
    if drop_in is None or pairs.empty:
        what = f"{drop_in[0]} and {drop_in[1]} {drop_in[2]}" if drop_in else backend
        return [claim, f"{NOT_MEASURED}: no rows of {what} on the same case",
                NOT_MEASURED]
    mine, other, theirs, kernel = drop_in
    edge = 1 + stats.MIN_EFFECT
    faster = pairs["ratio"] >= edge
    n, k = len(pairs), int(faster.sum())
    verdict = "holds" if k == n else "partly" if k else "does not hold"
    slow = pairs[~faster]
    worst = "".join(f"; not faster: {r.kernel}/{r.variant} {r.dtype} at {int(r.size_key):,} "
                    f"({times(float(r.ratio))})" for r in slow.head(3).itertuples())
    return [claim, f"{backend} {mine} over {other} {theirs}, caller's clock (CPU: wall), "
            f"hot, {n} shared {kernel} cases ({_sizes(pairs)}), every one correct: faster "
            f"(≥ {edge:g}×) in {k}, median {times(float(pairs['ratio'].median()))} "
            f"({range_text(float(pairs['ratio'].min()), float(pairs['ratio'].max()))}){worst}",
            verdict]


def thread_claim(df: pd.DataFrame) -> list[str]:
    """The workshop book's "test with different thread counts to find the optimum", as
    the Threads section judges it (:mod:`.sections.threads`): holds where a count below
    the most threads was surely fastest in some case and size."""
    from gpubench.report.sections import threads

    judged = threads.build(df)
    statement = f"{threads.STATEMENT} (workshop book)"
    if judged.table is None:
        return [statement, f"{NOT_MEASURED}: no CPU case at two or more thread counts",
                NOT_MEASURED]
    verdict = {"holds": "holds", "does not hold here": "does not hold"}.get(
        judged.verdict, NOT_MEASURED)
    return [statement, judged.evidence, verdict]


def reduced_claim(df: pd.DataFrame) -> list[str] | None:
    """The workshop book's "tensor cores give large speedups at reduced precision", as
    the Reduced precision section judges it (:mod:`.sections.reduced`: each GPU
    framework's best reduced format against its own float32 GEMM); None where the run
    measured no reduced-precision GEMM on a GPU (the quick suite), so the table does
    not grow a row no run of that suite could answer."""
    from gpubench.report.sections import reduced

    judged = reduced.build(df)
    if judged.verdict == NOT_MEASURED:
        return None
    return [f"{reduced.STATEMENT} (workshop book; large: at least "
            f"{reduced.LARGE:g}× the framework's float32 GEMM)", judged.evidence,
            judged.verdict]


def block_size_claim(df: pd.DataFrame) -> list[str] | None:
    """The workshop book's advice to choose the threads per block, as the Block size
    section judges it (:mod:`.sections.block_size`): holds where a framework's default
    block size was surely slower than another in some case and size. None where the run
    swept no block sizes (the full suite's GPU steps do; a run without them has no row
    rather than a "not measured" one in every report)."""
    from gpubench.report.sections import block_size

    judged = block_size.build(df)
    if judged.table is None:
        return None
    verdict = {"holds": "holds", "does not hold here": "does not hold"}.get(
        judged.verdict, NOT_MEASURED)
    return [f"{block_size.STATEMENT} (workshop book)", judged.evidence, verdict]


def claims(matrix: Any) -> pd.DataFrame | None:
    """The source documents' assertions beside this run's answer: holds, does not hold
    or partly."""
    gpus = [b for b in matrix.backends if split_backend_id(b)[1] == "gpu"]
    rows = []
    # "Typical Speedup: 10-100x over NumPy"
    lo, hi = SOURCE_SPEEDUP
    per, flags = [], []
    for b in gpus:
        vals = [matrix.cells[(b, speedup_aspect(c))].value for c in classes()]
        vals = [v for v in vals if math.isfinite(v)]
        if vals:
            inside = [lo <= v <= hi for v in vals]
            flags += inside
            per.append(f"{b}: {sum(inside)} of {len(vals)} classes in 10–100× "
                       f"(range {times(min(vals))}–{times(max(vals))})")
    rows.append(["typical speedup 10–100× over NumPy (comparison guide)",
                 "; ".join(per) or NOT_MEASURED, _verdict(flags)])
    # "Small datasets (< 10,000 elements): use the CPU"
    per, flags = [], []
    for b in gpus:
        c = matrix.crossovers.get((b, crossover_class()))
        if c is not None and c.n and math.isfinite(c.median):
            flags.append(SOURCE_CROSSOVER / 3 <= c.median <= SOURCE_CROSSOVER * 3)
            per.append(f"{b}: {c.text()}")
    rows.append(["the GPU loses below ~10,000 elements, within 3× (workshop book)",
                 "; ".join(per) or NOT_MEASURED, _verdict(flags)])
    # code verbosity
    code = {b: matrix.cells[(b, "code per kernel")].value for b in matrix.backends}
    known = {b: v for b, v in code.items() if math.isfinite(v)}
    overall = float(np.median(list(known.values()))) if known else math.nan
    said = [(b, kind, expect, claim) for b in backend_classes()
            for kind, expect, claim in guide(b).claims]
    for name, verbose, claim in ((b, e, c) for b, k, e, c in said if k == "verbosity"):
        if name in known and math.isfinite(overall):
            v = known[name]
            ok = v >= 1.5 * overall if verbose else v <= overall
            rows.append([claim, f"{v:.0f} lines per kernel against a median of "
                         f"{overall:.0f} over all frameworks", "holds" if ok else
                         "does not hold"])
        else:
            rows.append([claim, NOT_MEASURED, NOT_MEASURED])
    # compilation, judged where it happens: the first size, cold caches, no interop
    # (those that expect compilation first); a framework's own compiled implementations
    # are left out of a "no compilation" claim
    jit = sorted(((b, e, c) for b, k, e, c in said if k == "jit"), key=lambda t: not t[1])
    for name, expect, claim in jit:
        exclude = () if expect else sorted(guide(name).compiled_implementations)
        rows.append(_jit_claim(matrix, name, claim, expect, exclude=exclude))
    # compiled loops against the same loops interpreted (python-cpu)
    for name, expect, claim in ((b, e, c) for b, k, e, c in said if k == "loops"):
        rows.append(loop_claim(matrix, name, claim, expect))
    # claims judged case by case on paired rows (a matrix built without them: empty)
    pairs = matrix.pairs
    for name, _expect, claim in ((b, e, c) for b, k, e, c in said if k == "cuda_c"):
        rows.append(cuda_c_claim(pairs.get(("cuda_c", name), pd.DataFrame(columns=["ratio"])),
                                 name, guide(name).cuda_c_reference, claim))
    rows.append(fusion_claim(pairs.get("fusion", {})))
    for name, _expect, claim in ((b, e, c) for b, k, e, c in said if k == "often_fast"):
        rows.append(often_fast_claim(pairs.get(("often_fast", name), {}), name, claim))
    for name, _expect, claim in ((b, e, c) for b, k, e, c in said if k == "drop_in"):
        rows.append(drop_in_claim(pairs.get(("drop_in", name), pd.DataFrame(
            columns=["ratio"])), name, guide(name).drop_in, claim))
    if "threads" in pairs:
        rows.append(pairs["threads"])
    if pairs.get("reduced"):
        rows.append(pairs["reduced"])
    if "block_size" in pairs:
        rows.append(pairs["block_size"])
    return text_table(["claim", "measured here", "verdict"], rows)
