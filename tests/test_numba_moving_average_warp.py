"""Numba's warp-shuffle moving average (``cuda_jit_sliding``, the CUDA C
``moving_average_warp`` in Numba): V and the fallback chosen in Python, the kernel
compiled to sm_90 PTX (registers only, constant shuffles, launch bounds), and the row
run through the harness in Numba's CUDA simulator on awkward shapes, checked
elementwise against the spec's float64 reference.

The simulator runs in a subprocess (``NUMBA_ENABLE_CUDASIM`` is read once, at the
first import of ``numba.cuda``): this file run as a script is the worker; it adds the
warp shuffles the simulator lacks (tests/test_numba_cuda.py) and prints one JSON line
per case. Sizes stay at a few thousand elements: every GPU thread is a Python thread.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (size, params) per dtype for the simulator: short rows, rows not a multiple of a
#: chunk (32 V), V halved by L, windows 1, > V, 33, at the cap (32 V + 1) and one past
CASES: dict[str, list[tuple[int, dict[str, int]]]] = {
    "float32": [
        (300, {}),  # one row shorter than L: (1, 300)
        (2000, {"series_length": 1000}),  # 1000 % 128 != 0: rows start mid-chunk
        (2000, {"series_length": 1000, "window": 1}),
        (2000, {"series_length": 1000, "window": 33}),
        (2000, {"series_length": 1000, "window": 5}),  # > V, R = 0 (4 = 1 lane)
        (1000, {"series_length": 250, "window": 7}),  # V = 2 (250 % 4 != 0)
        (999, {"series_length": 333, "window": 33}),  # V = 1, at its cap
        (999, {"series_length": 333, "window": 34}),  # V = 1, one past: fallback
        (2048, {"window": 129}),  # V = 4, at the cap: d = 32 is the previous chunk
        (2048, {"window": 130}),  # one past: the cuda_jit scan
    ],
    "float64": [
        (300, {}),
        (2000, {"series_length": 1000}),
        (2000, {"series_length": 1000, "window": 1}),
        (2000, {"series_length": 1000, "window": 33}),
        (999, {"series_length": 333, "window": 20}),  # V = 1
        (2048, {"window": 65}),  # V = 2, at the cap
        (2048, {"window": 66}),  # one past: fallback
    ],
}


# -- the worker (runs in a subprocess) ------------------------------------------------


def _worker(dtype: str) -> None:
    """Measure ``cuda_jit_sliding`` on CASES[dtype] in the simulator; print JSON lines
    with the status, the largest elementwise relative error, the tolerance and which
    kernel ran (``warp`` or ``fallback``: the ``cuda_jit`` builder was called)."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.setswitchinterval(5e-4)  # the simulator's barriers wait on thread switches
    from test_numba_cuda import _add_simulator_shuffles

    import gpubench.kernels.moving_average.with_numba_cuda as scan
    from gpubench.backends import load_backend
    from gpubench.harness import Settings, measure
    from gpubench.spec import get_kernel, implementations

    backend = load_backend("numba-gpu")
    backend.start(1)
    _add_simulator_shuffles()
    fallbacks: list[int] = []
    builder = scan.cuda_jit

    def counted(ctx: Any) -> Any:
        fallbacks.append(1)
        return builder(ctx)

    scan.cuda_jit = counted  # cuda_jit_sliding imports it from the module when built
    spec = get_kernel("moving_average")
    impl = next(i for i in implementations("moving_average", "numba", "gpu")
                if i.name == "cuda_jit_sliding")
    # one timed call: correctness is the question; the caller's clocks (a dozen more
    # calls, each slow in the simulator) time nothing the simulator can say
    settings = Settings(warmup=0, min_samples=1, max_samples=1, max_time_s=0.0,
                        caller_clocks=False)
    for size, params in CASES[dtype]:
        case = spec.cases(sizes=[size], dtypes=[dtype], params=params)[0]
        host = spec.make_inputs(case, np.random.default_rng(case.seed(settings.seed)))
        ref = spec.reference(case, host)
        before = len(fallbacks)
        m = measure(spec, impl, case, backend, settings, host, ref)
        el_err = None
        if m.fields["status"] == "ok" and m.context is not None:
            out = np.asarray(backend.to_host(m.context.out("out")), dtype=np.float64)
            el_err = float(np.max(np.abs(out - ref) / np.abs(ref)))
        print(json.dumps({"size": size, "params": params, "status": m.fields["status"],
                          "reason": m.fields.get("reason"), "el_err": el_err,
                          "tolerance": spec.tolerance(case),
                          "kernel": "fallback" if len(fallbacks) > before else "warp"}),
              flush=True)


# -- the tests -----------------------------------------------------------------------


def _module() -> Any:
    from gpubench.kernels.moving_average import with_numba_cuda_sliding

    return with_numba_cuda_sliding


@pytest.mark.parametrize(("length", "window", "dtype", "v"), [
    (1024, 16, "float32", 4), (1024, 16, "float64", 2),
    (1000, 16, "float32", 4), (1000, 16, "float64", 2),
    (250, 16, "float32", 2), (333, 16, "float32", 1), (333, 16, "float64", 1),
    (1024, 1, "float32", 4),
    (1024, 129, "float32", 4), (1024, 130, "float32", None),
    (1024, 65, "float64", 2), (1024, 66, "float64", None),
    (250, 65, "float32", 2), (250, 66, "float32", None),
    (333, 33, "float32", 1), (333, 34, "float32", None),
])
def test_v_and_the_fallback(length: int, window: int, dtype: str, v: int | None) -> None:
    """V: 16 bytes' worth halved until it divides L; None (the scan kernel) past 32 V + 1."""
    assert _module().warp_v(length, window, dtype) == v


def test_the_pair_is_in_the_numba_claim() -> None:
    """Same algorithm again: cuda_jit_sliding is paired with nvrtc_sliding."""
    from gpubench.report.claims import guide

    pairs = guide("numba-gpu").cuda_c_pairs
    assert ("moving_average", "cuda_jit_sliding", "nvrtc_sliding") in pairs


@pytest.mark.parametrize(("dtype", "window", "v"), [
    ("float32", 16, 4), ("float64", 16, 2), ("float32", 1, 4), ("float32", 33, 4),
    ("float32", 129, 4), ("float64", 65, 2), ("float32", 33, 1), ("float32", 7, 2),
])
def test_kernel_compiles_for_h100(dtype: str, window: int, v: int) -> None:
    """numba-cuda compiles the kernel to sm_90 PTX without a GPU (NVVM): the local
    arrays are registers (no ``.local``), no shared memory, scalar loads and stores
    V per lane (plus V for the previous chunk), the launch bounds, and up to Q = 16
    every shuffle unrolled: Q + V of them (a double is two 32-bit shuffles). NVVM
    unrolls the lane-sum loop fully up to Q = 24 (window 100 at float32); at Q = 31 (the
    cap windows) it unrolls it partly: correct, more instructions."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("NUMBA_ENABLE_CUDASIM is set: no compiler to check")
    numba = pytest.importorskip("numba")
    if importlib.util.find_spec("numba.cuda") is None:
        pytest.skip("numba-cuda is not installed")
    from numba import cuda

    module = _module()
    t = getattr(numba, dtype)
    kernel = module._kernel(dtype, window, v)
    try:
        ptx, _ = cuda.compile_ptx(kernel.py_func, (t[::1], t[::1], numba.int64, numba.int64),
                                  cc=(9, 0), launch_bounds=module.LAUNCH_BOUNDS)
    except Exception as exc:
        if "nvvm" in str(exc).lower() or type(exc).__name__ == "CudaSupportError":
            pytest.skip(f"numba-cuda cannot compile here: {type(exc).__name__}: "
                        f"{str(exc)[:200]}")
        raise
    body = ptx[ptx.index(".entry"):]
    assert ".local" not in body and ".shared" not in body
    assert ".maxntid 256, 1, 1" in body and ".minnctapersm 8" in body
    width = "f32" if dtype == "float32" else "f64"
    loads = len(re.findall(rf"ld\.global\.{width}", body))
    stores = len(re.findall(rf"st\.global\.{width}", body))
    q, r = divmod(window - 1, v)
    assert loads == (2 * v if window > 1 else v)  # window 1 reads no previous chunk
    assert stores == 2 * v  # full windows (times 1 / W) and the row's first W - 1
    if q <= 16:  # fully unrolled: Q + (R > 0) + (V - 1) shuffles, none at d = 0
        slide = sum((window - j + v - 1) // v != 0 for j in range(1, v))
        shuffles = q + (r > 0) + slide
        assert body.count("shfl.sync") == shuffles * (2 if dtype == "float64" else 1)


@pytest.fixture(scope="module")
def simulated() -> dict[str, list[dict[str, Any]]]:
    """The worker's results per dtype (both dtypes side by side)."""
    pytest.importorskip("numba")
    if importlib.util.find_spec("numba.cuda") is None:
        pytest.skip("numba-cuda is not installed")
    paths = [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    procs = {dtype: subprocess.Popen([sys.executable, __file__, "worker", dtype], env=env,
                                     cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
             for dtype in CASES}
    out = {}
    for dtype, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, stderr[-3000:]
        out[dtype] = [json.loads(line) for line in stdout.splitlines()
                      if line.startswith("{")]
    return out


@pytest.mark.parametrize("dtype", list(CASES))
def test_correct_in_the_simulator(simulated: dict[str, list[dict[str, Any]]],
                                  dtype: str) -> None:
    """Every case ok through the harness, every output within the tolerance (not only
    the 2-norm), and the scan kernel run exactly where the window is past the cap."""
    rows = simulated[dtype]
    assert len(rows) == len(CASES[dtype])
    module = _module()
    for (size, params), row in zip(CASES[dtype], rows, strict=True):
        assert row["status"] == "ok", row
        assert row["el_err"] <= row["tolerance"], row
        length = min(size, params.get("series_length", 1024))
        expect = module.warp_v(length, params.get("window", 16), dtype)
        assert row["kernel"] == ("warp" if expect else "fallback"), row


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    _worker(sys.argv[2])
