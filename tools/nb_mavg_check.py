"""moving_average's Numba CUDA rows on a GPU: the warp-shuffle sliding kernel
(``cuda_jit_sliding``, Numba's counterpart of the CUDA C ``nvrtc_sliding``) against the
warp-scan one (``cuda_jit``), through the project's harness (``gpubench.harness.measure``:
first-call check, warm-up, device-clock samples, check after the timed calls), caller
clocks off. Modelled on tools/mavg_check.py (the CUDA C rows).

For float32 and float64 at 1024 .. 2^26 elements (default params: L = 1024, window 16)
and a few odd params (window 1, 33 and 100, L = 1000, size 3000), per row: status, the
harness's rel_err (2-norm), the largest elementwise relative error (from the output
after the last call), the device median, GB/s and % of the copy ceiling (2,992 GB/s),
and for the sliding row which kernel ran (``warp<dtype, W, V>`` with its registers per
thread and local memory, or the ``cuda_jit`` fallback past W = 32 V + 1). Exits 1 if
any row is not ``ok`` or its elementwise error exceeds the tolerance (stricter than
the harness's 2-norm check: one wrong partial window among 2^26 outputs passes that),
2 if the backend cannot start (no GPU, no numba-cuda, or the CUDA simulator: said why).

    python tools/nb_mavg_check.py
    python tools/nb_mavg_check.py --sizes 67108864   # 2^26 only, odd params too
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mavg_check import ODD, settings  # noqa: E402  (the same odd params and settings)

COPY_GBPS = 2992.0
BACKEND = "numba-gpu"
DEFAULT_SIZES = (1 << 10, 1 << 20, 1 << 24, 1 << 26)
IMPLS = ("cuda_jit_sliding", "cuda_jit")


def kernel_used(impl: str, case: Any) -> str:
    """Which kernel a row launched: the sliding row's ``warp<dtype, W, V>`` (registers
    and local bytes per thread where Numba reports them) or its fallback."""
    from gpubench.kernels.moving_average import series_shape
    from gpubench.kernels.moving_average.with_numba_cuda_sliding import _kernel, warp_v

    if impl != "cuda_jit_sliding":
        return "scan"
    w = int(case.params["window"])
    v = warp_v(series_shape(case)[1], w, case.dtype)
    if v is None:
        return "cuda_jit scan (fallback: W > 32 V + 1)"
    text = f"warp<{case.dtype}, {w}, {v}>"
    try:
        kernel = _kernel(case.dtype, w, v)
        text += (f" regs={kernel.get_regs_per_thread()}"
                 f" local={kernel.get_local_mem_per_thread()}B")
    except Exception as exc:  # noqa: BLE001 - informative only
        text += f" (registers unknown: {type(exc).__name__})"
    return text


def run_backend(conf: Any, sizes: tuple[int, ...]) -> int:
    """Measures and prints every row; returns how many are not ok. Raises Unavailable
    if the backend cannot start."""
    from gpubench.backends import Unavailable, load_backend
    from gpubench.backends.numba.gpu import is_simulator
    from gpubench.harness import measure
    from gpubench.spec import get_kernel, implementations

    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        raise Unavailable("NUMBA_ENABLE_CUDASIM is set: the CUDA simulator is not a GPU")
    backend = load_backend(BACKEND)
    versions = backend.start(1)
    if is_simulator():
        raise Unavailable("numba.cuda is the CUDA simulator: not a GPU")
    print(f"{BACKEND}: {backend.device_name()}; "
          + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    spec = get_kernel("moving_average")
    impls = {i.name: i for i in implementations("moving_average", backend.framework,
                                                   backend.device)}
    cases = [c for dtype in ("float32", "float64")
             for size, params in [*((s, {}) for s in sizes), *ODD]
             for c in spec.cases(sizes=[size], dtypes=[dtype], params=params)]
    bad = 0
    for case in cases:
        inputs = spec.make_inputs(case, np.random.default_rng(case.seed(conf.seed)))
        ref = spec.reference(case, inputs)
        for name in IMPLS:
            m = measure(spec, impls[name], case, backend, conf, inputs, ref)
            f = m.fields
            el_err = float("nan")
            if f.get("status") == "ok" and m.context is not None:
                out = np.asarray(backend.to_host(m.context.out("out")), dtype=np.float64)
                el_err = float(np.max(np.abs(out - ref) / np.abs(ref)))
            ok = f.get("status") == "ok" and el_err <= f["tolerance"]
            bad += not ok
            p = case.params
            med = f.get("median_s", float("nan"))
            gbps = f.get("gbps", float("nan"))
            print(f"{name:>16} {case.dtype} {case.size:>9} "
                  f"w={p['window']:<3} L={p['series_length']:<5} "
                  f"{f.get('status'):>12} rel_err={f.get('rel_err', float('nan')):.1e} "
                  f"el_err={el_err:.1e} {med * 1e6:9.1f} us {gbps:7.0f} GB/s "
                  f"{100 * gbps / COPY_GBPS:5.1f} % copy  {kernel_used(name, case)}"
                  + ("" if ok else f"  NOT OK ({f.get('reason') or 'el_err > tolerance'})"),
                  flush=True)
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(DEFAULT_SIZES),
                        help="element counts at the default params (the odd params run too)")
    args = parser.parse_args(argv)
    from gpubench.backends import Unavailable

    try:
        bad = run_backend(settings(), tuple(args.sizes))
    except Unavailable as exc:
        print(f"{BACKEND} unavailable: {exc}", file=sys.stderr)
        return 2
    print(f"{bad} row(s) not ok")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
