"""Headline numbers of evidence/peak-memory-and-allocation/README.md, generated from the
committed CSVs (and evidence/cpu-suite's timings).

usage: PYTHONPATH=src python tools/memory_headline.py [CPU_TIMINGS] \
           > evidence/peak-memory-and-allocation/headline.md
CPU_TIMINGS defaults to evidence/cpu-suite/timings.csv.gz.
"""
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import memory_combine as combine  # noqa: E402

from gpubench.report.base import prepare  # noqa: E402
from gpubench.report.claims import loop_claim, loop_speedups  # noqa: E402


def us(s: float) -> str:
    return "—" if pd.isna(s) else f"{s * 1e6:,.1f} µs" if s < 1e-3 else f"{s * 1e3:,.2f} ms"


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(out + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def memory(big: pd.DataFrame) -> None:
    g = big[(big.device == "gpu") & (big.status == "ok")]
    print("## 1. Peak device memory at each kernel's largest size (largest-sizes)\n")
    print("Cell: multiple of inputs+outputs, min–max over the implementations/variants/dtypes "
          "at that size (largest peak in MiB). `n/a`: no multiple (memory_reason).\n")
    kernels = sorted(g.kernel.unique())
    backends = sorted(g.backend.unique())
    rows = []
    for k in kernels:
        r = [k]
        for b in backends:
            d = g[(g.kernel == k) & (g.backend == b)]
            if d.empty:
                r.append("—")
                continue
            d = d[d["size"] == d["size"].max()]
            m = d.memory_multiple.dropna()
            peak = d.memory_peak_bytes.max() / 2**20
            r.append("n/a" if m.empty else
                     f"{m.min():,.3g}–{m.max():,.3g}× ({peak:,.0f} MiB)" if m.min() != m.max()
                     else f"{m.min():,.3g}× ({peak:,.0f} MiB)")
        rows.append(r)
    print(table(["kernel"] + backends, rows))
    meters = g.groupby("backend").memory_meter.agg(lambda s: ", ".join(sorted(set(s.dropna()))))
    print("\nMeters: " + "; ".join(f"{b}: {m}" for b, m in meters.items()))
    low = g[g.memory_multiple < 1]
    print(f"\nRows with a multiple below 1 (peak smaller than inputs+outputs): {len(low)}")
    if len(low):
        print(table(["backend", "impl", "kernel", "variant", "dtype", "size", "peak MiB",
                     "data MiB", "×"],
                    [[r.backend, r.implementation, r.kernel, r.variant, r.dtype, f"{r.size:,}",
                             f"{r.memory_peak_bytes / 2**20:,.1f}",
                             f"{r.memory_data_bytes / 2**20:,.1f}", f"{r.memory_multiple:.3g}"]
                            for r in low.itertuples()]))
    hi = g[g.memory_multiple > 100]
    print(f"\nRows with a multiple above 100: {len(hi)} "
          f"(kernels: {', '.join(sorted(set(hi.kernel)))}; their inputs+outputs are tiny, "
          f"max data {hi.memory_data_bytes.max():,.0f} B)")
    none = g[g.memory_multiple.isna()]
    if len(none):
        print("\nOk rows without a multiple: " + "; ".join(
            f"{b}/{k}: {r}" for (b, k, r), _ in none.groupby(
                ["backend", "kernel", none.memory_reason.fillna("?")]).size().items()))
    print("\n## 2. Autodiff (autograd) memory\n")
    a = g[g.kernel == "autodiff"].sort_values(
        ["variant", "backend", "implementation", "dtype", "size"])
    print(table(["backend", "impl", "variant", "dtype", "size", "peak MiB", "call MiB",
                 "data KiB", "×"],
                [[r.backend, r.implementation, r.variant, r.dtype, f"{r.size:,}",
                  f"{r.memory_peak_bytes / 2**20:,.1f}", f"{r.memory_call_bytes / 2**20:,.1f}",
                  f"{r.memory_data_bytes / 2**10:,.1f}", f"{r.memory_multiple:,.3g}"]
                 for r in a.itertuples()]))


def allocation(t: pd.DataFrame) -> None:
    a = t[t.kernel == "allocation"]
    print("\n## 3. Allocate-and-free, caller's clock, median per iteration "
          "(allocation, numba managed 1 GiB from largest-sizes)\n")
    sizes = sorted(a["size"].unique())
    label = {1 << 10: "1 KiB", 1 << 20: "1 MiB", 1 << 26: "64 MiB", 1 << 30: "1 GiB"}
    rows = []
    for (b, i), d in a.groupby(["backend", "implementation"]):
        r = [b, i]
        for s in sizes:
            x = d[d["size"] == s]
            r.append("—" if x.empty else us(x.caller_s.iloc[0]) if x.status.iloc[0] == "ok"
                     else f"{x.status.iloc[0]} ({x.git_commit.iloc[0]})")
        rows.append(r)
    print(table(["backend", "implementation"] + [label.get(s, str(s)) for s in sizes], rows))


def loops(cpu_timings: Path) -> None:
    print("\n## 4. Numba vs plain Python loops (cpu-suite, one thread, caller's clock)\n")
    if not cpu_timings.exists():
        print(f"cpu-suite timings not found ({cpu_timings}): not computed")
        return
    df = prepare(pd.read_csv(cpu_timings))
    rows = loop_speedups(df, "numba-cpu")
    print(table(["kernel", "variant", "dtype", "size", "numba impl", "numba", "python", "speedup"],
                [[r.kernel, r.variant, r.dtype, f"{r.size_key:,}", r.implementation, us(r.caller_s),
                  us(r.loop_s), f"{r.speedup:,.0f}×"] for r in rows.sort_values(
                      ["kernel", "dtype", "size_key"]).itertuples()]))
    _, text, verdict = loop_claim(SimpleNamespace(loops={"numba-cpu": rows}), "numba-cpu",
                                      "Numba: 10–100× faster than plain Python loops", True)
    print(f"\nReport's verdict (gpubench.report.claims.loop_claim): **{verdict}** — {text}")


def fft(t: pd.DataFrame) -> None:
    n = 1 << 24
    f = t[(t.kernel == "fft") & (t["size"] == n) & (t.status == "ok")]
    print(f"\n## 5. FFT at 2^24 = {n:,} elements, caller's clock (CPU: wall), hot\n")
    print(table(["backend", "implementation", "variant", "dtype", "threads", "median"],
                [[r.backend, r.implementation, r.variant, r.dtype, r.threads_key, us(r.caller_s)]
                 for r in f.sort_values(["variant", "dtype", "backend", "implementation",
                                         "threads_key"]).itertuples()]))
    piv = f.pivot_table(index=["variant", "dtype"], columns=["backend", "implementation"],
                        values="caller_s", aggfunc="min")
    print("\nRatios (min over thread counts):\n")
    rows = []
    for idx, r in piv.iterrows():
        def g(b: str, i: str, r: pd.Series = r) -> float:
            return r.get((b, i), float("nan"))
        np_, sp = g("numpy-cpu", "pocketfft"), g("numpy-cpu", "scipy_fft")
        cx, cf = g("cupy-gpu", "cupyx_scipy_fft"), g("cupy-gpu", "cufft")
        rows.append([*idx, f"{np_ / sp:.2f}×", f"{sp / cx:,.0f}×", f"{cx / cf:.2f}"])
    print(table(["variant", "dtype", "numpy.fft (pocketfft) / scipy.fft time",
                 "scipy.fft / cupyx.scipy.fft time", "cupyx.scipy.fft / cupy.fft (cufft) time"],
                rows))


def mpi() -> None:
    m = pd.read_csv(combine.DATA / "mpi.csv.gz")
    m = m[m.status == "ok"]
    print("\n## 6. Halo exchange, blocking (halo) vs overlapped (halo_overlap), 2^24 cells, "
          "median step, compute/comm agreed across ranks\n")
    print("GPU rows: ranks share the one H100, staged through host memory (Open MPI 4.1.6 is not "
          "CUDA-aware: `direct` rows skipped). hidden_s: communication the overlap hid "
          "(gpubench.mpi.schema.add_hidden); negative = overlap cost more than it hid.\n")
    rows = []
    for (b, n, sm), d in m.groupby(["backend", "ranks", "size_meaning"]):
        h, o = d[d.job == "halo"], d[d.job == "halo_overlap"]
        if h.empty or o.empty:
            continue
        h, o = h.iloc[0], o.iloc[0]
        rows.append([b, n, sm, h.path, us(h.median_s), f"{us(h.compute_s)} / {us(h.comm_s)}",
                     us(o.median_s), f"{us(o.compute_s)} / {us(o.comm_s)}", us(o.hidden_s),
                     f"{h.median_s / o.median_s:.2f}×", f"{h.git_commit}/{o.git_commit}"])
    print(table(["backend", "ranks", "size", "path", "blocking", "compute / comm", "overlapped",
                 "compute / comm", "hidden", "blocking/overlapped", "commits"], rows))


def main() -> int:
    t = prepare(combine.timings())
    big = prepare(pd.read_csv(combine.DATA / "largest-sizes.timings.csv.gz"))
    memory(big)
    allocation(t)
    cands = [Path(a) for a in sys.argv[1:]] + [combine.DATA.parent / "cpu-suite" / "timings.csv.gz"]
    loops(next((c for c in cands if c.exists()), cands[-1]))
    fft(t)
    mpi()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
