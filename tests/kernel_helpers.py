"""Helpers shared by the kernel tests: started CPU backends, cached per test session."""

from __future__ import annotations

import pytest

from gpubench.backends import Backend, load_backend

#: framework -> module that must import for its CPU backend (None: always there)
CPU_FRAMEWORKS = {"numpy": None, "numba": "numba", "jax": "jax", "torch": "torch"}

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
