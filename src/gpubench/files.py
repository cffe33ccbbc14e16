"""Writing files so that a reader never sees half of one (no gpubench imports: every
step, the environment builder's included, can use it)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write via a temporary file in the same folder and rename: never half a file."""
    atomic_write_bytes(path, text.encode("utf-8"))


class WriteError(OSError):
    """A file could not be written (a read-only folder, a full disk, a folder in the way):
    one line naming the file and the cause; nothing half-written is left behind."""

    def __str__(self) -> str:
        return str(self.strerror)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """:func:`atomic_write_text` for bytes (a compiled kernel, say). Raises
    :class:`WriteError` naming ``path`` when the write fails (the file keeps its earlier
    content, and no temporary is left)."""
    path = Path(path)
    if path.is_dir():
        raise WriteError(errno.EISDIR, f"cannot write {path}: it is a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(exc.errno or errno.EIO, f"cannot write {path}: "
                         f"{exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the file the mode a plain open() would have
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(exc.errno or errno.EIO, f"cannot write {path}: "
                         f"{exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
