"""Results come back for their check through one reused page-locked buffer; a failure
there falls back to the plain copy-back, never to a wrong or missing check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from gpubench.backends.base import Backend
from gpubench.backends.hooks import PinnedStaging

ROOT = Path(__file__).resolve().parents[1]


class HostStaging(PinnedStaging):
    """NumPy memory standing in for pinned; its backend says whether copies fail."""

    min_bytes = 64

    def alloc(self, nbytes: int) -> np.ndarray:
        self.backend.allocs.append(nbytes)
        return np.zeros(nbytes, np.uint8)

    def copy(self, value):
        if self.backend.broken:
            raise RuntimeError("pinned memory exhausted")
        host = self.view(value.nbytes, value.dtype, value.shape)
        host[...] = value
        return host


class HostStaged(Backend):
    """A CPU backend that stages like a GPU one."""

    framework, device = "fake", "gpu"
    staging_type = HostStaging

    def __init__(self, broken: bool = False) -> None:
        self.broken, self.allocs = broken, []


def test_big_results_share_one_growing_buffer():
    b = HostStaged()
    x = np.arange(100, dtype=np.float64)
    got = b.to_host_for_check(x)
    np.testing.assert_array_equal(got, x)
    assert np.shares_memory(got, b.staging.buffer)
    y = np.arange(30, dtype=np.float32).reshape(5, 6)
    got = b.to_host_for_check(y)
    np.testing.assert_array_equal(got, y)
    assert got.shape == (5, 6) and b.allocs == [800]  # smaller: the same buffer
    b.to_host_for_check(np.ones(200))
    assert b.allocs == [800, 1600]
    small = np.ones(3)
    assert b.to_host_for_check(small) is not None and not np.shares_memory(
        b.to_host_for_check(small), b.staging.buffer)


def test_a_staging_failure_falls_back_once_and_says_so(capsys):
    b = HostStaged(broken=True)
    x = np.arange(100, dtype=np.float64)
    for _ in range(2):
        np.testing.assert_array_equal(b.to_host_for_check(x), x)
    err = capsys.readouterr().err
    assert err.count("staged copy-back failed") == 1 and "pinned memory exhausted" in err


SIM_SCRIPT = r"""
import json, numpy as np
from gpubench.backends import load_backend
b = load_backend("numba-gpu"); b.start(1)
b.staging = b.staging_type(b); b.staging.min_bytes = 64
out = {}
for dtype, n in (("float64", 1000), ("float32", 300)):
    x = np.random.default_rng(0).random(n).astype(dtype)
    got = b.to_host_for_check(b.to_device(x))
    out[dtype] = [bool(np.array_equal(got, x)), bool(np.shares_memory(got, b.staging.buffer)),
                  str(got.dtype)]
print(json.dumps(out))
"""


def test_numba_results_come_back_through_pinned_memory_under_the_simulator():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-c", SIM_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res == {"float64": [True, True, "float64"], "float32": [True, True, "float32"]}

