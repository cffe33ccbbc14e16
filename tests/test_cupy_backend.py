"""CuPy without a GPU: the backend says why it cannot run, and nothing else breaks.

These run on GPU-less machines whether or not CuPy is installed; with CuPy installed
but no driver, ``import cupy`` succeeds and only device calls fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpubench.backends import Unavailable, load_backend
from gpubench.spec import KERNELS, implementations

SRC = Path(__file__).resolve().parents[1] / "src"

#: implementation names each kernel's with_cupy.py must register
EXPECTED: dict[str, set[str]] = {
    "vector_add": {"array_ops", "elementwise_kernel", "array_ops+transfers"},
    "elementwise": {"array_ops", "elementwise_kernel", "fuse"},
    "reduction": {"array_op", "reduction_kernel", "fuse"},
    "matmul": {"cublas", "cublas+transfers"},
    "fft": {"cufft", "cupyx_scipy_fft"},
    "monte_carlo_pi": {"array_ops"},
    "moving_average": {"cumsum", "elementwise_kernel"},
}


def _has_gpu() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - not installed, no driver, no device
        return False


no_gpu = pytest.mark.skipif(_has_gpu(), reason="a CUDA GPU is present here")


@no_gpu
def test_start_without_gpu_is_unavailable_with_reason() -> None:
    backend = load_backend("cupy-gpu")
    with pytest.raises(Unavailable) as info:
        backend.start(1)
    reason = str(info.value)
    assert reason.strip()
    assert "cupy" in reason


def test_start_without_cupy_is_unavailable_with_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy now raises ImportError
    with pytest.raises(Unavailable, match="import cupy failed"):
        load_backend("cupy-gpu").start(1)


def test_backend_describes_itself() -> None:
    backend = load_backend("cupy-gpu")
    assert (backend.framework, backend.device, backend.facts.timer) == ("cupy", "gpu",
                                                                        "cuda_event")
    assert backend.facts.supports_cold


def test_implementations_register_without_cupy() -> None:
    """Importing every with_cupy module with cupy blocked registers the expected names."""
    script = (
        "import json, sys\n"
        "sys.modules['cupy'] = None\n"
        "from gpubench.spec import KERNELS, implementations\n"
        "names = {k: sorted(i.name for i in implementations(k, 'cupy', 'gpu')\n"
        "                   if i.source_file == f'gpubench.kernels.{k}.with_cupy')\n"
        "         for k in KERNELS}\n"
        "assert 'cupy' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
        "print(json.dumps(names))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, check=False)
    assert done.returncode == 0, done.stderr
    names = json.loads(done.stdout)
    assert {k: set(names[k]) for k in EXPECTED} == EXPECTED


def test_implementations_are_gpu_only() -> None:
    for kernel in KERNELS:
        for impl in implementations(kernel, "cupy"):
            assert impl.devices == ("gpu",), (kernel, impl.name)
            assert not impl.parallel


@no_gpu
def test_runner_records_one_unavailable_row_per_item() -> None:
    from gpubench.runner import BackendRun

    config = {
        "threads": [1],
        "harness": {"warmup": 1, "min_samples": 2, "max_time_s": 0.01,
                    "case_timeout_s": 60, "start_timeout_s": 120},
        "kernels": {"vector_add": {"sizes": [1024, 4096], "dtypes": ["float32"]}},
    }
    run = BackendRun("cupy-gpu", config, cores=1)
    names = {item.implementation for item in run.items}
    assert EXPECTED["vector_add"] <= names
    assert {item.mode for item in run.items} == {"hot", "cold"}
    run.run()
    planned = sorted((i.implementation, i.size, i.mode) for i in run.items)
    got = sorted((r["implementation"], r["size"], r["mode"]) for r in run.rows)
    assert got == planned
    assert {r["status"] for r in run.rows} == {"unavailable"}
    assert all("cupy" in r["reason"] for r in run.rows)
