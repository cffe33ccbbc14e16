"""Framework adapters ("backends"): one framework on one kind of device.

A backend knows how to start its framework (import it, pin threads, report versions)
on a device (0, or an MPI rank's), place arrays on it, poison and read back buffers,
hand buffers to MPI, and wait for work to finish. The single-device harness and the MPI
jobs (:mod:`gpubench.mpi`) both go through it and never touch a framework directly.

Each framework is one package here, ``gpubench/backends/<framework>/``, found by a scan
(as kernels are): its ``__init__`` lists its Backend classes in ``BACKENDS``, and the
package holds everything that imports the framework (the adapter, its memory probe, its
ceiling measurements, its several-device code), none of it at module level. A backend
class declares its facts in one frozen record (:class:`~gpubench.backends.facts.Facts`)
and names its hook objects (:mod:`gpubench.backends.hooks`). Nothing outside the
packages names a framework. A plugin (:func:`load_plugins`) adds an out-of-tree one to
:data:`BACKENDS`.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from gpubench.backends.base import (
    ID_SEPARATOR,
    Backend,
    Facts,
    Unavailable,
    backend_id,
    split_backend_id,
)
from gpubench.plugins import load_plugins as _import_plugins

__all__ = ["BACKENDS", "BASELINE_FRAMEWORK", "ID_SEPARATOR", "Backend", "Facts", "Unavailable",
           "backend_class", "backend_classes", "backend_id", "find_backend_class",
           "load_backend", "load_plugins", "split_backend_id"]

_scanned: list[type[Backend]] = []


def _listed(module: object) -> list[type[Backend]]:
    """The Backend classes a framework package lists in its ``BACKENDS``."""
    return [c for c in getattr(module, "BACKENDS", ())
            if isinstance(c, type) and issubclass(c, Backend)]


def _entry(cls: type[Backend]) -> tuple[str, str]:
    return backend_id(cls.framework, cls.device), f"{cls.__module__}:{cls.__qualname__}"


def _scan() -> dict[str, str]:
    """Backend id -> "module:Class" of every class the framework packages list in their
    ``BACKENDS``, in their ``facts.registry_order``. Importing a package imports its
    adapter and the hook modules it names, none of which imports the framework at
    module level: no framework is imported before a backend starts."""
    found: list[type[Backend]] = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg:
            module = importlib.import_module(f"{__name__}.{info.name}")
            found += _listed(module)
    found.sort(key=lambda c: (c.facts.registry_order, backend_id(c.framework, c.device)))
    _scanned[:] = found
    return dict(_entry(c) for c in found)


#: backend id -> "module:Class": the scanned packages', then any a plugin adds
BACKENDS: dict[str, str] = _scan()
#: the framework every other is compared with (speed-ups, correctness references): the
#: one whose backend class's facts say ``baseline``
BASELINE_FRAMEWORK: str = next(c.framework for c in _scanned if c.facts.baseline)


def load_plugins() -> list[str]:
    """Import the modules named in ``GPUBENCH_PLUGINS`` (:func:`gpubench.plugins.
    load_plugins`) and register the backends of those laid out as a framework package
    (a ``BACKENDS`` tuple of classes, as the packages here); a plugin may also add its
    ``"module:Class"`` to :data:`BACKENDS` itself."""
    names = _import_plugins()
    for name in names:
        for cls in _listed(sys.modules.get(name)):
            key, where = _entry(cls)
            BACKENDS.setdefault(key, where)
    return names


def backend_class(backend_id: str) -> type[Backend]:
    """The Backend class of a backend id, without importing its framework."""
    if backend_id not in BACKENDS:
        load_plugins()  # a plugin package's backends register when its id is asked for
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
    if cls is None or not cls.facts.display_name:
        return backend_id
    name = cls.facts.display_name
    framework, device = split_backend_id(backend_id)
    both = sum(split_backend_id(b)[0] == framework for b in classes) > 1
    return f"{name} on {device.upper()}" if both and device else name


def load_backend(backend_id: str) -> Backend:
    """Instantiate a backend without importing its framework (that happens in start())."""
    return backend_class(backend_id)()
