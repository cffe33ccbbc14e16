"""Numba compiling for the host CPU (njit, prange, vectorize, guvectorize)."""

from __future__ import annotations

from gpubench.backends.base import Backend, Unavailable


class NumbaCPU(Backend):
    framework = "numba"
    device = "cpu"

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
