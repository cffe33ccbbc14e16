"""Float64 references shared by the steps of one results folder.

Every step draws the same seeded inputs for a case and computes the same float64
reference; for a GEMM at n = 8192 or an FFT of 2**24 points that is seconds of host
BLAS or FFT work, and five GPU steps repeated it (about 20 s per step on the H100 host).
The first step to need a reference that took at least :data:`MIN_SECONDS` stores it
under ``<results>/cache/references``; later steps load it. The key hashes the case, the
seed and the source of the code that draws inputs and computes references, so an edited
kernel never meets a stale reference. Files are written atomically; one that cannot be
read is recomputed and replaced, never trusted. Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gpubench.hostpar import blas_in_caller

#: references cheaper than this are recomputed: not worth the disk
MIN_SECONDS = 0.5
_SOURCES: dict[type, bytes] = {}


def _source_digest(spec: Any) -> bytes:
    """The kernel's module plus the shared input and reference helpers, hashed."""
    kind = type(spec)
    if kind not in _SOURCES:
        from gpubench import hostpar
        from gpubench import spec as spec_module

        h = hashlib.sha256()
        for obj in (kind, spec_module, hostpar):
            try:
                h.update(Path(inspect.getsourcefile(obj) or "").read_bytes())
            except (OSError, TypeError):
                h.update(repr(obj).encode())
        _SOURCES[kind] = h.digest()
    return _SOURCES[kind]


def cache_key(spec: Any, case: Any, seed: int) -> str:
    """A file name for the reference of ``case`` drawn with ``seed``."""
    what = json.dumps([case.kernel, case.variant, case.size, case.dtype,
                       sorted((str(k), str(v)) for k, v in case.params.items()), seed])
    digest = hashlib.sha256(what.encode() + _source_digest(spec)).hexdigest()[:32]
    return f"{case.kernel}-{digest}.npz"


def _load(path: Path) -> Any:
    try:
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            if names == ["__ref__"]:
                return z["__ref__"]
            return {name: z[name] for name in names}
    except Exception:  # noqa: BLE001 - missing, partial or corrupt: recompute instead
        return None


def _store(path: Path, ref: Any) -> None:
    arrays = {"__ref__": ref} if isinstance(ref, np.ndarray) else ref
    if not isinstance(arrays, dict) or not all(
            isinstance(k, str) and isinstance(v, np.ndarray) for k, v in arrays.items()):
        return  # scalars and other objects: cheap, not cached
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def reference(spec: Any, case: Any, inputs: dict[str, Any], seed: int,
              cache_dir: str | os.PathLike[str] | None) -> Any:
    """``spec.reference(case, inputs)``, from the cache when a step already computed it."""
    path = Path(cache_dir) / cache_key(spec, case, seed) if cache_dir else None
    if path is not None and path.exists():
        ref = _load(path)
        if ref is not None:
            return ref
    t0 = time.perf_counter()
    with blas_in_caller():
        ref = spec.reference(case, inputs)
    # A reference that is an input itself (transfer) must stay that very object.
    if path is not None and time.perf_counter() - t0 >= MIN_SECONDS and not any(
            ref is v for v in inputs.values()):
        try:
            _store(path, ref)
        except OSError:
            pass  # a read-only or full disk only costs the next step the same time
    return ref
