"""moving_average's CUDA C rows on a GPU: the warp-sliding kernel (``nvrtc_sliding``,
``raw_kernel_sliding``) against the tiled one (``nvrtc``, ``raw_kernel``), through the
project's harness (``gpubench.harness.measure``: first-call check, warm-up, device-clock
samples, check after the timed calls), caller clocks off.

For float32 and float64 at 1024 .. 2^26 elements (default params) and a few odd params
(window 1, 33 and 100, L = 1000, size 3000), per row: status, the harness's rel_err
(2-norm), the largest elementwise relative error (from the output after the last call),
the device median, GB/s and % of the copy ceiling (2,988 GB/s: an H100's probe), and
for the sliding rows which kernel ran (``warp<T, W, V>`` or the tiled fallback). Exits 1
if any row is not ``ok`` or its elementwise error exceeds the tolerance (stricter than
the harness's 2-norm check: one wrong partial window among 2^26 outputs passes that;
both kernels sum directly, ~1e-7 / 1e-16 expected), 2 if a backend cannot start (no
GPU, no cupy / cuda-core: said why).

    python tools/mavg_check.py                      # both frameworks
    python tools/mavg_check.py --backends cupy-gpu  # CuPy only
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

COPY_GBPS = 2988.0
DEFAULT_SIZES = (1 << 10, 1 << 12, 1 << 20, 1 << 24, 1 << 26)
#: (size, params) beyond the defaults
ODD = ((1 << 24, {"window": 1}), (1 << 24, {"window": 33}), (1 << 24, {"window": 100}),
       (1 << 24, {"series_length": 1000}), (3000, {}))
IMPLS = {"cuda_python-gpu": ("nvrtc_sliding", "nvrtc"),
         "cupy-gpu": ("raw_kernel_sliding", "raw_kernel")}


def settings() -> Any:
    """The GPU steps' harness settings (``harness`` merged with ``gpu_harness`` of
    config/config.yaml where PyYAML is there), caller clocks off: only the device clock."""
    from gpubench.harness import Settings

    values: dict[str, Any] = {}
    try:
        import yaml

        config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
        values = {**config.get("harness", {}), **config.get("gpu_harness", {})}
    except Exception as exc:  # noqa: BLE001 - defaults are fine for this check
        print(f"(config not read, harness defaults: {type(exc).__name__}: {exc})")
    known = {k: v for k, v in values.items() if k in Settings.__dataclass_fields__}
    return replace(Settings(**known), caller_clocks=False)


def kernel_used(impl: str, case: Any) -> str:
    """Which kernel a sliding row launches for the case (:func:`warp_kernel`)."""
    from gpubench.kernels.moving_average import series_shape
    from gpubench.kernels.moving_average.with_cuda_python_sliding import warp_kernel

    if not impl.endswith("sliding"):
        return "tiled"
    found = warp_kernel(*series_shape(case), int(case.params["window"]), case.dtype)
    return "tiled (fallback)" if found is None else found[0].replace("moving_average_", "")


def run_backend(backend_id: str, conf: Any) -> int:
    """Measures and prints one backend's rows; returns how many are not ok. Raises
    Unavailable if the backend cannot start."""
    from gpubench.backends import load_backend
    from gpubench.harness import measure
    from gpubench.spec import get_kernel, implementations

    backend = load_backend(backend_id)
    versions = backend.start(1)
    print(f"{backend_id}: {backend.device_name()}; "
          + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    spec = get_kernel("moving_average")
    impls = {i.name: i for i in
             implementations("moving_average", backend.framework, backend.device)}
    cases = [c for dtype in ("float32", "float64")
             for size, params in [*((s, {}) for s in DEFAULT_SIZES), *ODD]
             for c in spec.cases(sizes=[size], dtypes=[dtype], params=params)]
    bad = 0
    for case in cases:
        inputs = spec.make_inputs(case, np.random.default_rng(case.seed(conf.seed)))
        ref = spec.reference(case, inputs)
        for name in IMPLS[backend_id]:
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
            print(f"{backend_id:>15} {name:>18} {case.dtype} {case.size:>9} "
                  f"w={p['window']:<3} L={p['series_length']:<5} "
                  f"{f.get('status'):>12} rel_err={f.get('rel_err', float('nan')):.1e} "
                  f"el_err={el_err:.1e} {med * 1e6:9.1f} us {gbps:7.0f} GB/s "
                  f"{100 * gbps / COPY_GBPS:5.1f} % copy  {kernel_used(name, case)}"
                  + ("" if f.get("status") == "ok" else f"  ({f.get('reason')})"))
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=list(IMPLS), choices=list(IMPLS))
    args = parser.parse_args(argv)
    return each_backend(args.backends, lambda backend_id: run_backend(backend_id, settings()))


def each_backend(backend_ids: list[str], run: Any, after: Any = None) -> int:
    """``run(backend_id)`` (rows not ok) for each backend, one that cannot start noted and
    skipped; ``after()`` once they ran (a summary table). Exit code: 2 if any could not
    start, else 1 if any row was not ok, else 0."""
    from gpubench.backends import Unavailable

    bad, unavailable = 0, []
    for backend_id in backend_ids:
        try:
            bad += run(backend_id)
        except Unavailable as exc:
            unavailable.append(backend_id)
            print(f"{backend_id} unavailable: {exc}", file=sys.stderr)
    if after is not None:
        after()
    print(f"{bad} row(s) not ok" + (f"; could not start: {', '.join(unavailable)}"
                                    if unavailable else ""))
    return 2 if unavailable else 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
