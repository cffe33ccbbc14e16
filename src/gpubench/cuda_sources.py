"""CUDA C sources shared by CuPy's RawKernel and CUDA Python (NVRTC).

Each kernel's CUDA C lives in ``kernels/<kernel>/<kernel>.cu``: one source compiled by
both frameworks, so their rows differ only in how the framework loads and launches it.
What several kernels share (``kernels/pack.cuh``, the 16-byte vector access) stands in
one file, which :func:`source` puts in place of the ``#include`` line: NVRTC gets one
source string and needs no include path.
"""

from __future__ import annotations

import re
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"

#: a quoted ``#include`` line of a ``.cu`` file, resolved against the file's folder
INCLUDE = re.compile(r'^#include "([^"]+)"$', re.MULTILINE)


def read_source(path: Path) -> str:
    """A ``.cu`` file's text with each quoted ``#include`` line replaced by the file it
    names (the project's own headers: no include path reaches NVRTC)."""
    return INCLUDE.sub(lambda m: (path.parent / m.group(1)).read_text().rstrip("\n"),
                       path.read_text())


def source(kernel: str) -> str:
    """The CUDA C source of ``kernel`` (``kernels/<kernel>/<kernel>.cu``, its headers
    inlined)."""
    return read_source(KERNEL_DIR / kernel / f"{kernel}.cu")


def all_sources() -> dict[str, str]:
    """Every ``.cu`` file in the package (headers inlined), by path relative to ``kernels/``."""
    return {str(p.relative_to(KERNEL_DIR)): read_source(p)
            for p in sorted(KERNEL_DIR.glob("*/*.cu"))}


def suffix(dtype: str) -> str:
    """The entry points' suffix convention of a NumPy dtype name: ``f32``/``f64``."""
    return {"float32": "f32", "float64": "f64"}[dtype]
