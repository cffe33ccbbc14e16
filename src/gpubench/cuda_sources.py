"""CUDA C sources shared by CuPy's RawKernel and CUDA Python (NVRTC).

Each kernel's CUDA C lives in ``kernels/<kernel>/<kernel>.cu``: one source compiled by
both frameworks, so their rows differ only in how the framework loads and launches it.
"""

from __future__ import annotations

from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


def source(kernel: str) -> str:
    """The CUDA C source of ``kernel`` (``kernels/<kernel>/<kernel>.cu``)."""
    path = KERNEL_DIR / kernel / f"{kernel}.cu"
    return path.read_text()


def all_sources() -> dict[str, str]:
    """Every ``.cu`` file in the package, by path relative to ``kernels/``."""
    return {str(p.relative_to(KERNEL_DIR)): p.read_text()
            for p in sorted(KERNEL_DIR.glob("*/*.cu"))}


def suffix(dtype: str) -> str:
    """The entry points' suffix convention of a NumPy dtype name: ``f32``/``f64``."""
    return {"float32": "f32", "float64": "f64"}[dtype]
