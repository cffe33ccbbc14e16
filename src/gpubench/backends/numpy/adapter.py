"""NumPy on the host: the baseline every speedup is quoted against."""

from __future__ import annotations

from gpubench.backends.base import Backend, Facts


class NumpyCPU(Backend):
    framework = "numpy"
    device = "cpu"
    facts = Facts(
        registry_order=0, baseline=True, environment="numpy", display_name="NumPy",
        order=0, version_keys=("numpy",),
        key_packages=("numpy", "scipy"),  # scipy: the fft kernel's scipy_fft
        probe_packages=("numpy",), mpi=True)

    def start(self, threads: int) -> dict[str, str]:
        import numpy as np
        from threadpoolctl import threadpool_limits

        # BLAS (matmul) is NumPy's only multi-threaded path; cap it explicitly.
        self._limits = threadpool_limits(limits=threads)
        return {"numpy": np.__version__}
