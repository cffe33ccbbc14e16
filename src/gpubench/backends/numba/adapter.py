"""Numba compiling for the host CPU (njit, prange, vectorize, guvectorize)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpubench.backends.base import Backend, Facts, Unavailable

#: the facts Numba's CPU and CUDA backends both declare (one framework, one column)
NUMBA: dict[str, Any] = dict(
    compile_cache_vars={"NUMBA_CACHE_DIR": "numba"},  # cache=True functions (none here)
    display_name="Numba", order=40, version_keys=("numba", "numba-cuda"),
    key_packages=("numba", "numba-cuda", "llvmlite", "numpy"))


class NumbaCPU(Backend):
    framework = "numba"
    device = "cpu"
    facts = Facts(**NUMBA, registry_order=2, probe_module="numba", environment="numba",
                  probe_packages=("numba",))

    def compile_cache_dirs(self) -> list[Path]:
        """None: Numba stores compiled functions (``NUMBA_CACHE_DIR``, or
        ``__pycache__`` beside the source) only for ``cache=True``, which no
        implementation here uses, so every process compiles anew."""
        return []

    def start(self, threads: int) -> dict[str, str]:
        try:
            import numba
        except Exception as exc:
            raise Unavailable(f"import numba failed: {type(exc).__name__}: {exc}") from exc
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        import numpy as np

        # The layer (tbb, omp, workqueue) is chosen at the first parallel launch and
        # changes results a lot (omp runs 1-D parallel ufuncs element by element), so
        # launch once and record the one really in use.
        @numba.njit(parallel=True)
        def touch(x):
            for i in numba.prange(x.shape[0]):
                x[i] = i

        touch(np.empty(4))
        return {"numba": numba.__version__, "numpy": np.__version__,
                "threading_layer": numba.threading_layer()}
