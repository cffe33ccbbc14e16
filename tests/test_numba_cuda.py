"""Numba CUDA backend and implementations, run under Numba's CUDA simulator.

``NUMBA_ENABLE_CUDASIM`` is read once, when ``numba.cuda`` is first imported, so every
check runs in a subprocess with the variable set (or unset) from the start: this very
file, run as a script (``python tests/test_numba_cuda.py worker ...``), measures the
implementations through the real harness and prints one JSON line per result. Two
workers run side by side (the simulator is slow: one Python thread per GPU thread),
sizes are tiny, and the tests below only read what they printed.

The simulator has no warp shuffles; the worker adds them (:func:`_add_simulator_shuffles`)
so the moving-average kernel, which scans with them, runs here too. Not covered here
(the simulator lacks it): ``@vectorize(target="cuda")``, whose implementations must fail
with a clear reason under the simulator; device-event timing; free memory; real launch
configurations (the simulator runs with 32-thread blocks and 8x8 matmul tiles, a GPU
with 256 and 16x16).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: tiny sizes (matmul: one multiple of the simulator's 8x8 tile and one not)
SIZES: dict[str, list[int]] = {
    "vector_add": [300],
    "elementwise": [300],
    "reduction": [300],
    "matmul": [20, 35],
    "monte_carlo_pi": [1 << 12],
    "moving_average": [300],
}
PARAMS: dict[str, dict[str, Any]] = {"moving_average": {"window": 4, "series_length": 100}}
#: kernels per worker process, balanced by simulator time
GROUPS: tuple[tuple[str, ...], ...] = (
    ("matmul", "vector_add"),
    ("monte_carlo_pi", "reduction", "elementwise", "moving_average"),
)
#: implementations the simulator cannot run (checked for a clear reason instead)
SIMULATOR_LACKS = {"vectorize_cuda"}


# -- the worker (runs in a subprocess) ------------------------------------------------


def _add_simulator_shuffles() -> None:
    """Give the simulator's fake ``cuda`` module ``shfl_up_sync`` and ``shfl_sync``.

    Each lane posts its value in a per-block dictionary, waits at the block barrier,
    reads its source lane's value and waits again. That is a warp shuffle as long as
    every thread of the block shuffles together, which holds for warp-uniform loops in
    blocks of whole warps (the backend launches one-warp blocks in the simulator).
    """
    import threading

    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    def exchange(value: Any, src: int | None) -> Any:
        thread = threading.current_thread()
        box = thread._manager.__dict__.setdefault("_shfl_box", {})  # type: ignore[attr-defined]
        me = thread.thread_id  # type: ignore[attr-defined]
        box[me] = value
        thread.syncthreads()  # type: ignore[attr-defined]
        out = value if src is None else box[me - me % 32 + src]
        thread.syncthreads()  # type: ignore[attr-defined]
        return out

    def shfl_up_sync(self: Any, mask: int, value: Any, delta: int) -> Any:
        lane = threading.current_thread().thread_id % 32  # type: ignore[attr-defined]
        return exchange(value, lane - delta if lane >= delta else None)

    def shfl_sync(self: Any, mask: int, value: Any, src_lane: int) -> Any:
        return exchange(value, src_lane % 32)

    if not hasattr(FakeCUDAModule, "shfl_up_sync"):
        FakeCUDAModule.shfl_up_sync = shfl_up_sync  # type: ignore[attr-defined]
        FakeCUDAModule.shfl_sync = shfl_sync  # type: ignore[attr-defined]


def _worker(kernels: list[str], drop_row_stack: bool) -> None:
    """Start the backend under the simulator and measure every case; print JSON lines."""
    import numpy as np

    if drop_row_stack and hasattr(np, "row_stack"):
        del np.row_stack  # what NumPy 2.5 did; the backend must put it back
    # The simulator's barriers wait on Python thread switches: switch more often.
    sys.setswitchinterval(5e-4)
    from gpubench.backends import load_backend
    from gpubench.harness import Settings, measure
    from gpubench.spec import BuildContext, get_kernel, implementations

    backend = load_backend("numba-gpu")
    versions = backend.start(1)  # first import of numba.cuda: the shim goes in before it
    _add_simulator_shuffles()
    print(json.dumps({"event": "start", "versions": versions, "timer": backend.facts.timer,
                      "device": backend.device_name(), "free": backend.free_memory(),
                      "row_stack_is_vstack": getattr(np, "row_stack", None) is np.vstack}),
          flush=True)
    # one timed call: correctness is the question; the caller's clocks (a dozen more
    # calls, each slow in the simulator) time nothing the simulator can say
    settings = Settings(warmup=0, min_samples=1, max_samples=1, max_time_s=0.0,
                        caller_clocks=False)
    for kernel in kernels:
        spec = get_kernel(kernel)
        for impl in implementations(kernel, "numba", "gpu"):
            for case in spec.cases(sizes=SIZES[kernel], params=PARAMS.get(kernel)):
                if not impl.supports(case)[0]:
                    continue
                rng = np.random.default_rng(case.seed(settings.seed))
                host = spec.make_inputs(case, rng)
                ref = spec.reference(case, host)
                m = measure(spec, impl, case, backend, settings, host, ref)
                print(json.dumps({"event": "result", "id": _case_id(impl.name, case),
                                  **{k: m.fields.get(k) for k in
                                     ("status", "reason", "rel_err", "timer", "samples")}}),
                      flush=True)
    if "monte_carlo_pi" in kernels:
        # Fresh samples on every call: three calls of one build give different estimates
        # (deterministic for the fixed seed, so never flaky).
        spec = get_kernel("monte_carlo_pi")
        case = spec.cases(sizes=SIZES["monte_carlo_pi"], dtypes=["float32"])[0]
        impl = next(i for i in implementations("monte_carlo_pi", "numba", "gpu"))
        call = impl.builder(BuildContext(case, backend, {}, {}, case.seed(settings.seed)))
        estimates = [float(backend.to_host(call())) for _ in range(3)]
        print(json.dumps({"event": "mc_calls", "estimates": estimates}), flush=True)


def _case_id(impl: str, case: Any) -> str:
    return f"{case.kernel}/{impl}/{case.variant}/{case.dtype}/{case.size}"


def _no_gpu_check() -> None:
    """Without the simulator on a machine with no GPU: start() raises Unavailable."""
    import numpy as np

    if hasattr(np, "row_stack"):
        del np.row_stack
    from gpubench.backends import Unavailable, load_backend

    out: dict[str, Any] = {"event": "nogpu"}
    try:
        out["versions"] = load_backend("numba-gpu").start(1)
        out["raised"] = None
    except Unavailable as exc:
        out["raised"], out["reason"] = "Unavailable", str(exc)
    except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
        out["raised"], out["reason"] = type(exc).__name__, str(exc)
    # The shim is in place for the real target too: its array support imports cleanly.
    import numba.cuda.np.arrayobj  # noqa: F401

    out["row_stack_is_vstack"] = getattr(np, "row_stack", None) is np.vstack
    print(json.dumps(out), flush=True)


# -- running the workers -------------------------------------------------------------


def _env(simulator: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_ENABLE_CUDASIM", "GPUBENCH_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env["CUDA_VISIBLE_DEVICES"] = ""  # no GPU even where there is one
    return env


def _parse(proc: subprocess.Popen[str], what: str) -> list[dict[str, Any]]:
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"{what} timed out; stderr tail:\n{err[-3000:]}")
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if proc.returncode != 0:
        pytest.fail(f"{what} exited {proc.returncode}; stderr tail:\n{err[-3000:]}")
    return lines


@pytest.fixture(scope="module")
def runs() -> dict[str, Any]:
    """Run both simulator workers and the no-GPU check in parallel; collect their output."""
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed")
    me = str(Path(__file__).resolve())
    procs = {
        f"worker {i}": subprocess.Popen(
            [sys.executable, me, "worker", ",".join(group), "drop" if i == 0 else "keep"],
            env=_env(True), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        for i, group in enumerate(GROUPS)
    }
    procs["nogpu"] = subprocess.Popen([sys.executable, me, "nogpu"], env=_env(False), cwd=ROOT,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = {name: _parse(proc, name) for name, proc in procs.items()}
    results = {d["id"]: d for name in procs if name != "nogpu"
               for d in lines[name] if d["event"] == "result"}
    starts = {name: next(d for d in lines[name] if d["event"] == "start")
              for name in procs if name != "nogpu"}
    mc = next(d for name in procs for d in lines[name] if d["event"] == "mc_calls")
    return {"results": results, "starts": starts, "mc": mc, "nogpu": lines["nogpu"][-1]}


def _expected_ids() -> list[str]:
    from gpubench.spec import get_kernel, implementations

    ids = []
    for kernel, sizes in SIZES.items():
        spec = get_kernel(kernel)
        for impl in implementations(kernel, "numba", "gpu"):
            ids += [_case_id(impl.name, c) for c in spec.cases(sizes=sizes,
                                                               params=PARAMS.get(kernel))
                    if impl.supports(c)[0]]
    return ids


# -- the tests -----------------------------------------------------------------------


def test_every_implementation_registered() -> None:
    """The six kernels each have Numba CUDA implementations, on the GPU only."""
    from gpubench.spec import implementations

    names = {k: sorted(i.name for i in implementations(k, "numba", "gpu")) for k in SIZES}
    assert names == {
        "vector_add": ["cuda_jit", "vectorize_cuda"],
        "elementwise": ["cuda_jit", "vectorize_cuda"],
        "reduction": ["cuda_jit", "cuda_reduce"],
        "matmul": ["cuda_jit_naive", "cuda_jit_tiled"],
        "monte_carlo_pi": ["xoroshiro"],
        "moving_average": ["cuda_jit", "cuda_jit_sliding"],
    }
    for k in SIZES:
        assert all(i.devices == ("gpu",) for i in implementations(k, "numba", "gpu"))


@pytest.mark.parametrize("case_id", _expected_ids())
def test_implementation_passes_harness(runs: dict[str, Any], case_id: str) -> None:
    """Each implementation x variant x dtype x size is correct through harness.measure."""
    row = runs["results"].get(case_id)
    assert row is not None, f"{case_id} was not measured"
    impl = case_id.split("/")[1]
    if impl in SIMULATOR_LACKS:
        assert row["status"] == "error" and "simulator" in row["reason"], row
        return
    assert row["status"] == "ok", row
    assert row["timer"] == "perf_counter+sync"
    assert row["rel_err"] is not None and row["rel_err"] >= 0


def test_simulator_backend_start(runs: dict[str, Any]) -> None:
    """Under the simulator: host timer, unknown free memory, versions recorded."""
    for start in runs["starts"].values():
        assert start["timer"] == "perf_counter+sync"
        assert start["free"] is None
        assert "simulator" in start["device"].lower()
        assert start["versions"]["numba-cuda"] and start["versions"]["numba"]
        assert "cuda_simulator" in start["versions"]


def test_row_stack_shim(runs: dict[str, Any]) -> None:
    """With numpy.row_stack gone (NumPy 2.5), start() restores it and records the shim."""
    dropped = runs["starts"]["worker 0"]
    assert dropped["versions"].get("numpy_row_stack_shim") == "applied"
    assert dropped["row_stack_is_vstack"] is True
    assert runs["nogpu"]["row_stack_is_vstack"] is True


def test_monte_carlo_draws_fresh_samples(runs: dict[str, Any]) -> None:
    estimates = runs["mc"]["estimates"]
    assert len(set(estimates)) > 1, estimates


def test_no_gpu_is_unavailable(runs: dict[str, Any]) -> None:
    """Without the simulator and with no GPU visible, start() raises Unavailable with a reason."""
    nogpu = runs["nogpu"]
    assert nogpu["raised"] == "Unavailable", nogpu
    assert nogpu["reason"].strip()


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        _worker(sys.argv[2].split(","), drop_row_stack=sys.argv[3] == "drop")
    elif sys.argv[1] == "nogpu":
        _no_gpu_check()
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]!r}")


GRID_SCRIPT = r"""
import json, numpy as np
from gpubench.backends import load_backend
from gpubench.kernels.elementwise.with_numba_cuda import _kernel
from gpubench.kernels.elementwise.with_numba import _scalar
b = load_backend("numba-gpu"); b.start(1)
from numba import cuda
ok = {}
# around the 2- and 4-element trip boundaries of 64 threads
sizes = (1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 1000)
for variant, dtype in (("sigmoid", "float32"), ("sigmoid", "float64"), ("hypot", "float32")):
    for n in sizes:
        a = np.random.default_rng(n).random(n).astype(dtype) + 0.5
        c = a[::-1].copy()
        out = cuda.to_device(np.full(n, np.nan, dtype))
        ins = (a,) if variant == "sigmoid" else (a, c)
        args = tuple(cuda.to_device(x) for x in ins)
        _kernel(variant, dtype)[2, 32](*args, out)  # 64 threads: many trips per thread
        f = _scalar(variant, dtype)
        want = np.array([f(*xs) for xs in zip(*ins)])
        ok[f"{variant}{dtype}{n}"] = bool(np.allclose(out.copy_to_host(), want, rtol=1e-6))
print(json.dumps(ok))
"""


def test_numba_elementwise_grid_stride_covers_every_element_under_the_simulator():
    """Two (float32 sigmoid: four) elements per trip round the grid-stride loop: every
    index written, for sizes around the trip boundaries of a small grid (the harness's
    small sizes fit one trip)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-c", GRID_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res and all(res.values()), res
