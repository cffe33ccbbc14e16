"""Framework adapters ("backends"): one framework on one kind of device.

A backend knows how to start its framework (import it, pin threads, report versions)
on a device (0, or an MPI rank's), place arrays on it, poison and read back buffers,
hand buffers to MPI, and wait for work to finish. The single-device harness and the MPI
jobs (:mod:`gpubench.mpi`) both go through it and never touch a framework directly, so
adding one is one module here, its kernels' ``with_<framework>.py`` files, and one line
in :data:`BACKENDS` (a plugin may add that line from outside: :func:`load_plugins`).
"""

from __future__ import annotations

import importlib

from gpubench.backends.base import Backend, Unavailable
from gpubench.plugins import load_plugins

#: backend id -> "module:Class". Ids are ``<framework>-<device>``.
BACKENDS: dict[str, str] = {
    "numpy-cpu": "gpubench.backends.numpy_cpu:NumpyCPU",
    "python-cpu": "gpubench.backends.python_cpu:PythonCPU",
    "numba-cpu": "gpubench.backends.numba_cpu:NumbaCPU",
    "jax-cpu": "gpubench.backends.jax_backend:JaxCPU",
    "torch-cpu": "gpubench.backends.torch_backend:TorchCPU",
    "cupy-gpu": "gpubench.backends.cupy_gpu:CupyGPU",
    "numba-gpu": "gpubench.backends.numba_gpu:NumbaGPU",
    "jax-gpu": "gpubench.backends.jax_backend:JaxGPU",
    "torch-gpu": "gpubench.backends.torch_backend:TorchGPU",
    "cuda_python-gpu": "gpubench.backends.cuda_python_gpu:CudaPythonGPU",
}

__all__ = ["BACKENDS", "Backend", "Unavailable", "backend_class", "backend_classes",
           "find_backend_class", "load_backend", "load_plugins", "split_backend_id"]


def split_backend_id(backend_id: str) -> tuple[str, str]:
    """``"jax-cpu"`` -> ``("jax", "cpu")``."""
    framework, _, device = backend_id.rpartition("-")
    return framework, device


def backend_class(backend_id: str) -> type[Backend]:
    """The Backend class of a backend id, without importing its framework."""
    if backend_id not in BACKENDS:
        raise KeyError(f"unknown backend {backend_id!r}; known: {', '.join(BACKENDS)}")
    module, _, cls = BACKENDS[backend_id].partition(":")
    return getattr(importlib.import_module(module), cls)


def find_backend_class(backend_id: str) -> type[Backend] | None:
    """:func:`backend_class`, or None for a backend not registered here (plugins loaded)."""
    load_plugins()
    try:
        return backend_class(backend_id)
    except (KeyError, ImportError, AttributeError):
        return None


def backend_classes() -> dict[str, type[Backend]]:
    """Every registered backend's class (plugins' included), in :data:`BACKENDS` order."""
    load_plugins()
    return {b: backend_class(b) for b in BACKENDS}


def reader_name(backend_id: str) -> str:
    """How the report's answer names a backend: its framework's ``display_name``, with
    the device where the framework runs on both ("PyTorch on GPU", "Numba on CPU";
    "CuPy" alone). The one table of names: the backend classes; an unknown id stays."""
    classes = backend_classes()
    cls = classes.get(backend_id) or find_backend_class(backend_id)
    if cls is None or not cls.display_name:
        return backend_id
    framework, _, device = backend_id.rpartition("-")
    both = sum(b.rpartition("-")[0] == framework for b in classes) > 1
    return f"{cls.display_name} on {device.upper()}" if both and device else cls.display_name


def load_backend(backend_id: str) -> Backend:
    """Instantiate a backend without importing its framework (that happens in start())."""
    return backend_class(backend_id)()
