"""A stand-in framework added from outside the package: the dry run of docs/extending.md's
"Adding a framework" (``GPUBENCH_PLUGINS=standin_plugin``, tests/test_standin_framework.py).

Everything a framework needs is here, and nothing else was edited: the adapter (a thin
NumPy-based ``Backend``: the defaults serve it, including what the MPI jobs ask of it to
move buffers), the one registration line, and one kernel implementation (the one the
reduction job computes with; the halo and grad_avg jobs would need the stencil,
linear_grad and axpy kernels' too). In-tree the same
pieces are a folder ``src/gpubench/backends/standin/`` (the adapter, and
``BACKENDS = (StandinCPU,)`` in its ``__init__``) and
``src/gpubench/kernels/reduction/with_standin.py``; a plugin may be laid out as that
folder too (``tests/standin_gpu/``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpubench.backends import BACKENDS
from gpubench.backends.base import Backend, Facts
from gpubench.spec import BuildContext, implementation

# -- the registration line -------------------------------------------------------------
BACKENDS["standin-cpu"] = "standin_plugin:StandinCPU"


# -- the adapter --------------------------------------------------------------------------
class StandinCPU(Backend):
    """Host NumPy under another name; runs the MPI jobs too (``mpi=True``)."""

    framework = "standin"
    device = "cpu"
    # its facts (tests/test_registry_complete.py): NumPy underneath, so NumPy's
    # environment and packages; no several-device version
    facts = Facts(mpi=True, environment="numpy", display_name="Stand-in", order=100,
                  version_keys=("standin",), key_packages=("numpy",),
                  probe_packages=("numpy",))

    def start(self, threads: int) -> dict[str, str]:
        self.started_on = self.device_index
        return {"standin": "0.1", "numpy": np.__version__}


# -- the kernel implementation --------------------------------------------------------------
@implementation("reduction", "standin", "einsum", variants=("sumsq", "dot"))
def einsum(ctx: BuildContext) -> Callable[[], Any]:
    """sum(a*a) or sum(a*b) with ``np.einsum``: what the MPI reduction job calls too."""
    a = ctx.inputs["a"]
    b = ctx.inputs["b"] if ctx.case.variant == "dot" else a
    return lambda: np.einsum("i,i->", a, b)
