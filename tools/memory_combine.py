"""Merge the largest-sizes, numpy-fft and allocation runs' timings into one table for the report
(evidence/peak-memory-and-allocation).

Allocation rows exist twice: allocation (f51d9d9, 1 KiB..1 GiB) and largest-sizes (ebb2d75,
1 GiB only, with the numba managed_array fix). allocation's rows are kept; from largest-sizes
only numba-gpu's managed_array row is kept, and it replaces allocation's errored
managed_array row at the same size. The other allocation managed_array sizes (1 KiB, 1 MiB,
64 MiB) stay as the errors they were.

usage: python tools/memory_combine.py OUT_TIMINGS [--samples DIR_ROOT OUT_SAMPLES]
(DIR_ROOT holds largest-sizes/ numpy-fft/ allocation/ each with samples.csv; samples are not
committed)
"""
import sys
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "evidence" / "peak-memory-and-allocation"
RUNS = ["largest-sizes", "numpy-fft", "allocation"]
KEY = ["backend", "implementation", "kernel", "variant", "size", "dtype"]


def keep(name: str, d: pd.DataFrame) -> pd.DataFrame:
    alloc = d["kernel"] == "allocation"
    if name == "largest-sizes":
        managed = (d["backend"] == "numba-gpu") & (d["implementation"] == "managed_array")
        return d[~alloc | managed]
    if name == "allocation":
        fixed = alloc & (d["backend"] == "numba-gpu") & (d["implementation"] == "managed_array") \
            & (d["size"] == 1 << 30)
        return d[~fixed]
    return d


def timings() -> pd.DataFrame:
    ds = {n: pd.read_csv(DATA / f"{n}.timings.csv.gz") for n in RUNS}
    cols = list(ds["largest-sizes"].columns)
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
