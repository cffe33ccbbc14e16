"""Each implementation's rate as % of the copy ceiling at 2^26 elements, the best
per framework, kernel, variant and dtype, and GEMM as % of a cuBLAS reference.

Usage (from the repository root, PYTHONPATH=src so the plausibility gate is importable):

    python tools/best_table.py evidence/copy-ceiling-targets/*.csv.gz \
        --host evidence/copy-ceiling-targets/host.json > evidence/copy-ceiling-targets/best_all.txt
    python tools/best_table.py evidence/copy-ceiling-targets/*.csv.gz \
        --host evidence/copy-ceiling-targets/host.json --markdown [--by]

``--host`` takes the probe's record: its ``d2d_copy_gbps`` is the ceiling of every row, and
its ceilings re-run the collect step's plausibility gate (gpubench.plausibility.judge) on
the per-step CSVs, so a row collect would call ``implausible`` is never ranked here either.
``--ceiling-gbps N`` (the first version's only option) overrides the copy ceiling.
Only ``hot`` rows with status ``ok`` are ranked; rows whose implementation carries host
transfers (``+transfers``) are listed but never the best."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

MEMORY_BOUND = ["vector_add", "elementwise", "reduction", "moving_average"]
FRAMEWORKS = ["cuda_python", "cupy", "jax", "numba", "torch"]
# Each framework's library GEMM (what `matmul` calls in its idiomatic form).
LIBRARY_GEMM = {"cupy": "cublas", "jax": "jit", "torch": "eager"}
REFERENCE = ("cupy", "cublas")  # CuPy's cuBLAS call, measured in the same call as the probe
TARGET = 95.0


def load(paths: list[str], host: str | None) -> tuple[pd.DataFrame, dict]:
    df = pd.concat((pd.read_csv(p) for p in paths), ignore_index=True)
    ceilings: dict = {}
    if host:
        ceilings = json.loads(Path(host).read_text()).get("ceilings") or {}
        from gpubench import plausibility

        plausibility.judge(df, ceilings)
    return df, ceilings


def memory_bound(df: pd.DataFrame, ceiling: float) -> pd.DataFrame:
    rows = df[(df["kernel"].isin(MEMORY_BOUND)) & (df["mode"] == "hot")
              & (df["status"] == "ok")]
    return rows.assign(pct=100 * rows["gbps"] / ceiling)


def best_per_framework(rows: pd.DataFrame) -> pd.DataFrame:
    rankable = rows[~rows["implementation"].str.contains("+", regex=False)]
    idx = rankable.groupby(["kernel", "variant", "dtype", "framework"])["pct"].idxmax()
    best = rankable.loc[idx, ["kernel", "variant", "dtype", "framework", "pct",
                              "implementation"]]
    order = {k: i for i, k in enumerate(MEMORY_BOUND)}
    return best.sort_values(["kernel", "variant", "dtype"],
                            key=lambda s: s.map(order) if s.name == "kernel" else s)


def gemm(df: pd.DataFrame) -> pd.DataFrame:
    m = df[(df["kernel"] == "matmul") & (df["status"] == "ok") & (df["mode"] == "hot")]
    m = m[~m["implementation"].str.contains("+", regex=False)]
    ref = m[(m["framework"] == REFERENCE[0]) & (m["implementation"] == REFERENCE[1])]
    ref = ref.set_index(["size", "dtype"])["gflops"]
    own = m[m.apply(lambda r: LIBRARY_GEMM.get(r["framework"]) == r["implementation"],
                    axis=1)].set_index(["framework", "size", "dtype"])["gflops"]
    out = m.assign(
        pct_of_cupy_cublas=[100 * g / ref.get((s, d), float("nan"))
                            for g, s, d in zip(m["gflops"], m["size"], m["dtype"],
                                               strict=True)],
        pct_of_own_library=[100 * g / own.get((f, s, d), float("nan"))
                            for g, f, s, d in zip(m["gflops"], m["framework"], m["size"],
                                                  m["dtype"], strict=True)])
    return out[["framework", "implementation", "size", "dtype", "gflops",
                "pct_of_cupy_cublas", "pct_of_own_library"]].sort_values(
        ["dtype", "size", "framework", "implementation"])


def markdown(best: pd.DataFrame, by: bool) -> str:
    head = "| kernel | variant | dtype | " + " | ".join(FRAMEWORKS) + " |"
    lines = [head, "| " + " | ".join(["---"] * (3 + len(FRAMEWORKS))) + " |"]
    for (kernel, variant, dtype), grp in best.groupby(["kernel", "variant", "dtype"],
                                                      sort=False):
        cells = []
        for fw in FRAMEWORKS:
            hit = grp[grp["framework"] == fw]
            if hit.empty:
                cells.append("–")
                continue
            pct, impl = float(hit["pct"].iloc[0]), hit["implementation"].iloc[0]
            text = f"{pct:.1f}"
            if pct < TARGET:
                text = f"**{text}**"
            if by:
                text += f" `{impl}`"
            cells.append(text)
        dt = {"float32": "f32", "float64": "f64"}.get(dtype, dtype)
        lines.append(f"| {kernel} | {variant} | {dt} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--host", help="the probe's host.json (copy ceiling + plausibility)")
    ap.add_argument("--ceiling-gbps", type=float)
    ap.add_argument("--markdown", action="store_true", help="only the README table")
    ap.add_argument("--by", action="store_true", help="name the best implementation")
    args = ap.parse_args()
    df, ceilings = load(args.csv, args.host)
    ceiling = args.ceiling_gbps or float(ceilings.get("d2d_copy_gbps") or 0)
    if ceiling <= 0:
        ap.error("give --host with a d2d_copy_gbps ceiling, or --ceiling-gbps")
    rows = memory_bound(df, ceiling)
    best = best_per_framework(rows)
    if args.markdown:
        print(markdown(best, args.by))
        return
    pd.set_option("display.width", 250)
    print(f"copy ceiling: {ceiling:.1f} GB/s ({ceilings.get('d2d_copy_method', 'given')}, "
          f"{ceilings.get('gpu_name', '')}); hot rows, status ok after the plausibility "
          f"gate; % = gbps / ceiling\n")
    print("== every implementation, % of copy ==")
    wide = rows.pivot_table(index=["framework", "kernel", "variant", "dtype"],
                            columns="implementation", values="pct")
    for _, part in wide.groupby(level="framework"):
        print(part.dropna(axis=1, how="all").round(1).to_string(), "\n")
    print(f"== best per framework, % of copy (** < {TARGET:.0f} %) ==")
    print(markdown(best, by=True), "\n")
    print(f"== cells < {TARGET:.0f} %: the same implementation's float32 and float64 median "
          "times (float32 moves half the bytes; a ratio near 1 means the time follows the "
          "element count, not the bytes) ==")
    low = best[best["pct"] < TARGET]
    times = rows.set_index(["framework", "implementation", "kernel", "variant", "dtype"])
    out = []
    for _, r in low.iterrows():
        key = (r["framework"], r["implementation"], r["kernel"], r["variant"])
        t32 = times["median_s"].get(key + ("float32",), float("nan"))
        t64 = times["median_s"].get(key + ("float64",), float("nan"))
        out.append({"framework": r["framework"], "implementation": r["implementation"],
                    "kernel": r["kernel"], "variant": r["variant"], "dtype": r["dtype"],
                    "pct": round(r["pct"], 1), "f32_us": round(1e6 * t32, 1),
                    "f64_us": round(1e6 * t64, 1), "f32/f64": round(t32 / t64, 2)})
    print(pd.DataFrame(out).to_string(index=False), "\n")
    print("== rows not ranked (status other than ok, or not hot) ==")
    off = df[(df["kernel"].isin(MEMORY_BOUND + ["matmul"]))
             & ((df["status"] != "ok") | (df["mode"] != "hot"))]
    print(off[["backend", "implementation", "kernel", "variant", "dtype", "size", "status",
               "reason"]].to_string(index=False) if len(off) else "(none)", "\n")
    print(f"== GEMM: GFLOP/s, % of {REFERENCE[0]} `{REFERENCE[1]}` (cuBLAS, same call as "
          "the probe) and % of the framework's own library matmul "
          f"({', '.join(f'{k} `{v}`' for k, v in LIBRARY_GEMM.items())}) ==")
    print(gemm(df).round(1).to_string(index=False))


if __name__ == "__main__":
    main()
