"""Merge session 32's largest28 + fft28 + alloc28 timings into one table for the report.

Allocation rows exist twice: alloc28 (f51d9d9, 1 KiB..1 GiB) and largest28 (ebb2d75, 1 GiB only,
with the numba managed_array fix). alloc28's rows are kept; from largest28 only numba-gpu's
managed_array row is kept, and it replaces alloc28's errored managed_array row at the same size.
The other alloc28 managed_array sizes (1 KiB, 1 MiB, 64 MiB) stay as the errors they were.

usage: combine.py OUT_TIMINGS [--samples DIR_ROOT OUT_SAMPLES]
(DIR_ROOT holds largest28/ fft28/ alloc28/ each with samples.csv; samples are not committed)
"""
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
RUNS = ["largest28", "fft28", "alloc28"]
KEY = ["backend", "implementation", "kernel", "variant", "size", "dtype"]


def keep(name: str, d: pd.DataFrame) -> pd.DataFrame:
    alloc = d["kernel"] == "allocation"
    if name == "largest28":
        return d[~alloc | ((d["backend"] == "numba-gpu") & (d["implementation"] == "managed_array"))]
    if name == "alloc28":
        fixed = alloc & (d["backend"] == "numba-gpu") & (d["implementation"] == "managed_array") \
            & (d["size"] == 1 << 30)
        return d[~fixed]
    return d


def timings() -> pd.DataFrame:
    ds = {n: pd.read_csv(HERE / f"{n}.timings.csv.gz") for n in RUNS}
    cols = list(ds["largest28"].columns)
    return pd.concat([keep(n, d) for n, d in ds.items()], ignore_index=True).reindex(columns=cols)


def main(argv: list[str]) -> int:
    t = timings()
    dup = t.duplicated(KEY + ["threads"], keep=False)
    if dup.any():
        print(t[dup][KEY].to_string(), file=sys.stderr)
    t.to_csv(argv[0], index=False)
    if len(argv) >= 4 and argv[1] == "--samples":
        root = Path(argv[2])
        parts = [keep(n, pd.read_csv(root / n / "samples.csv")) for n in RUNS]
        pd.concat(parts, ignore_index=True).to_csv(argv[3], index=False)
    print(f"combine: {len(t)} rows -> {argv[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
