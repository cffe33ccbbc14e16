"""Helpers shared by the kernel tests: started CPU backends, cached per test session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpubench.backends import Backend, backend_classes, load_backend

#: framework -> module that must import for its CPU backend (each backend's
#: ``probe_module``)
CPU_FRAMEWORKS = {cls.framework: cls.facts.probe_module for cls in backend_classes().values()
                  if cls.device == "cpu"}

_started: dict[str, Backend] = {}


def cpu_backend(framework: str) -> Backend:
    """One started CPU backend per framework for the whole session (starting JAX is slow)."""
    if CPU_FRAMEWORKS[framework]:
        pytest.importorskip(CPU_FRAMEWORKS[framework])
    if framework not in _started:
        backend = load_backend(f"{framework}-cpu")
        backend.start(threads=1)
        _started[framework] = backend
    return _started[framework]


def cpu_cases(sizes: dict[str, tuple[int, ...]]) -> list:
    """``pytest.param(kernel, framework, implementation, case)`` for every registered CPU
    implementation of each kernel at the given sizes, every variant and dtype it supports
    that the kernel offers on a CPU (:meth:`~gpubench.spec.KernelSpec.unoffered`)."""
    from gpubench.spec import get_kernel, implementations

    params = []
    for kernel, kernel_sizes in sizes.items():
        spec = get_kernel(kernel)
        for impl in implementations(kernel, device="cpu"):
            for case in spec.cases(sizes=list(kernel_sizes)):
                if impl.supports(case)[0] and not spec.unoffered(case, "cpu"):
                    params.append(pytest.param(
                        kernel, impl.framework, impl.name, case,
                        id=f"{kernel}-{impl.framework}-{impl.name}-"
                           f"{case.variant}-{case.dtype}-{case.size}"))
    return params


SRC = Path(__file__).resolve().parents[1] / "src"


def run_simulated(script: str) -> list[Any]:
    """Run ``script`` in a fresh interpreter under Numba's CUDA simulator (it must be set
    before numba is imported, hence the subprocess) and return the JSON its last line
    prints."""
    pytest.importorskip("numba.cuda")
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH"))
                                         if p)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
