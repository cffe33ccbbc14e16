"""Plugins: modules named in ``GPUBENCH_PLUGINS`` that add backends, kernels or
implementations from outside the package (no gpubench imports here, so the kernel and
backend registries can both load plugins without importing each other)."""

from __future__ import annotations

import importlib
import os


def load_plugins() -> list[str]:
    """Import the modules named in ``GPUBENCH_PLUGINS`` (comma-separated).

    A plugin registers extra backends (a package listing its classes in ``BACKENDS``, as
    the framework packages do, or a module adding to :data:`gpubench.backends.BACKENDS`),
    kernels (:func:`gpubench.spec.register_kernel`) or implementations without editing
    this package: out-of-tree frameworks, and the fault-injection tests.
    """
    names = [n.strip() for n in os.environ.get("GPUBENCH_PLUGINS", "").split(",") if n.strip()]
    for name in names:
        importlib.import_module(name)
    return names
