"""The memory-bound CUDA C rows on a GPU at each unroll factor U (packs per thread per
grid-stride step: ``<entry>``, ``<entry>_u2``, ``<entry>_u4``; moving_average's
``moving_average_warp<T, W, V, U>`` has U = 1, 2), through the project's harness
(``gpubench.harness.measure``, caller clocks off), U set by ``GPUBENCH_UNROLL`` before
each build.

vector_add, elementwise (hypot, sigmoid, rational) and moving_average (default params,
the sliding rows), float32 and float64 at 2^24 and 2^26 elements, the CUDA Python and
CuPy RawKernel rows. Per row: status, rel_err, device median, GB/s, % of the copy
ceiling (2,988 GB/s: an H100's probe); then % of copy at 2^26 by U. Exits 1 if any
row is not ok, 2 if a backend cannot start (no GPU, no cupy / cuda-core: said why).

    python tools/unroll_check.py
    python tools/unroll_check.py --backends cupy-gpu
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from mavg_check import COPY_GBPS, each_backend, settings  # noqa: E402

SIZES = (1 << 24, 1 << 26)
#: kernel -> (variants or None, unroll factors it has)
KERNELS = {"vector_add": (None, (1, 2, 4)),
           "elementwise": (["hypot", "sigmoid", "rational"], (1, 2, 4)),
           "moving_average": (None, (1, 2))}
#: backend -> kernel -> implementation name
IMPLS = {"cuda_python-gpu": {"vector_add": "nvrtc", "elementwise": "nvrtc",
                             "moving_average": "nvrtc_sliding"},
         "cupy-gpu": {"vector_add": "raw_kernel", "elementwise": "raw_kernel",
                      "moving_average": "raw_kernel_sliding"}}


def run_backend(backend_id: str, conf, table: dict) -> int:
    """Measures and prints one backend's rows (filling ``table``); returns how many are
    not ok. Raises Unavailable if the backend cannot start."""
    from gpubench.backends import load_backend
    from gpubench.cuda_launch import UNROLL_ENV
    from gpubench.harness import measure
    from gpubench.spec import get_kernel, implementations

    backend = load_backend(backend_id)
    versions = backend.start(1)
    print(f"{backend_id}: {backend.device_name()}; "
          + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    bad = 0
    for kernel, (variants, unrolls) in KERNELS.items():
        spec = get_kernel(kernel)
        name = IMPLS[backend_id][kernel]
        impl = {i.name: i for i in
                implementations(kernel, backend.framework, backend.device)}[name]
        for case in spec.cases(sizes=list(SIZES), dtypes=["float32", "float64"],
                               variants=variants):
            inputs = spec.make_inputs(case, np.random.default_rng(case.seed(conf.seed)))
            ref = spec.reference(case, inputs)
            for u in unrolls:
                os.environ[UNROLL_ENV] = str(u)  # read when measure builds the row
                f = measure(spec, impl, case, backend, conf, inputs, ref).fields
                ok = f.get("status") == "ok"
                bad += not ok
                gbps = f.get("gbps", float("nan"))
                pct = 100 * gbps / COPY_GBPS
                if case.size == SIZES[-1]:
                    table[(kernel, case.variant, case.dtype, backend_id, name)][u] = pct
                print(f"{backend_id:>15} {kernel:>14} {case.variant:>8} {name:>18} "
                      f"{case.dtype} {case.size:>9} U={u} {f.get('status'):>12} "
                      f"rel_err={f.get('rel_err', float('nan')):.1e} "
                      f"{f.get('median_s', float('nan')) * 1e6:9.1f} us {gbps:7.0f} GB/s "
                      f"{pct:5.1f} % copy" + ("" if ok else f"  ({f.get('reason')})"),
                      flush=True)
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=list(IMPLS), choices=list(IMPLS))
    args = parser.parse_args(argv)
    from collections import defaultdict

    conf = settings()
    table: dict = defaultdict(dict)

    def summary() -> None:
        if not table:
            return
        print(f"\n% of copy ({COPY_GBPS:,.0f} GB/s) at 2^{SIZES[-1].bit_length() - 1}, by U")
        print(f"{'kernel':>14} {'variant':>8} {'dtype':>7} {'row':>18}   U=1   U=2   U=4")
        for (kernel, variant, dtype, _b, name), by_u in table.items():
            cells = " ".join(f"{by_u[u]:5.1f}" if u in by_u else "    -" for u in (1, 2, 4))
            print(f"{kernel:>14} {variant:>8} {dtype:>7} {name:>18} {cells}")

    return each_backend(args.backends, lambda b: run_backend(b, conf, table), summary)

if __name__ == "__main__":
    raise SystemExit(main())
