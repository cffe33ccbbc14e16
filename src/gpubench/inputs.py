"""Reading what a user or an earlier run hands in, within bounds, each refusal one line
naming the input.

A results file, a probe record, a lock or a config is data from outside: it may be a
folder, a device that never ends (``/dev/zero``, ``/dev/urandom``), a pipe, a file cut
short, larger than anything a run writes, or nested deeper than Python's recursion
limit. Such an input is refused before it is parsed (not a regular file), while it is
read (over its size limit: the reader stops at the limit instead of filling memory) or
after (a CSV whose last line has no newline was cut mid-row), with an
:class:`InputError` that names the path and the bound.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import lzma
import math
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

#: JSON records (host.json) nest a few levels; deeper is not one the probe wrote
MAX_JSON_DEPTH = 32
#: the probe's host.json is a few kB
MAX_JSON_BYTES = 16 * 2**20
#: a text file read whole (a lock: a line per package, a few kB)
MAX_TEXT_BYTES = 16 * 2**20
#: what a damaged compressed file raises besides OSError (gzip's BadGzipFile is one)
DECOMPRESS_ERRORS: tuple[type[Exception], ...] = (EOFError, lzma.LZMAError)


class InputError(ValueError):
    """An input cannot be used; the message is one line that names it."""


def mb(nbytes: float) -> str:
    """A size for a message: MB (decimal, as ``ls -lh --si`` and file managers show),
    bytes below 0.1 MB."""
    return f"{nbytes / 1e6:,.1f} MB" if nbytes >= 1e5 else f"{nbytes:,.0f} bytes"


def check_file(path: str | os.PathLike[str], limit: int | None = None,
               what: str = "file") -> Path:
    """``path`` as a Path if it is a regular file of at most ``limit`` bytes on disk;
    :class:`InputError` otherwise (missing, a folder, a device or pipe, too large)."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: file is missing") from None
    except OSError as exc:
        raise InputError(f"{path}: not readable: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: not a regular file (a device, pipe or socket): give a "
                         f"{what} saved on disk")
    if limit is not None and st.st_size > limit:
        raise InputError(f"{path}: {mb(st.st_size)}, over the {mb(limit)} a {what} may "
                         "have")
    return path


class _Bounded(io.RawIOBase):
    """A binary stream that refuses to give more than ``limit`` bytes (the decompressed
    ones, for a .gz or .xz file) and remembers the last byte it gave."""

    def __init__(self, raw: BinaryIO, limit: int, path: Path, what: str) -> None:
        super().__init__()
        self.raw, self.limit, self.path, self.what = raw, limit, path, what
        self.total = 0
        self.last = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self.raw.read(min(len(view), self.limit + 1 - self.total))
        self.total += len(data)
        if self.total > self.limit:
            raise InputError(f"{self.path}: more than {mb(self.limit)} of text, the most a "
                             f"{self.what} may have: refused")
        if data:
            self.last = data[-1:]
        view[: len(data)] = data
        return len(data)


@contextmanager
def open_bounded(path: str | os.PathLike[str], limit: int, what: str = "file"
                 ) -> Iterator[_Bounded]:
    """A regular file opened for reading at most ``limit`` bytes, decompressed by its
    suffix (.gz, .xz); raises :class:`InputError` for anything else."""
    path = Path(path)
    # a plain file's size on disk is its text's: refused at once, with its size
    path = check_file(path, None if path.suffix in (".gz", ".xz") else limit, what)
    opener: Callable[..., Any] = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    try:
        raw = opener(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: not readable: {exc.strerror or exc}") from None
    with raw:
        yield _Bounded(raw, limit, path, what)


def read_text(path: str | os.PathLike[str], limit: int = MAX_TEXT_BYTES,
              what: str = "file") -> str:
    """The whole of a UTF-8 text file of at most ``limit`` bytes."""
    with open_bounded(path, limit, what) as fh:
        try:
            data = fh.read()
        except (OSError, *DECOMPRESS_ERRORS) as exc:
            raise InputError(f"{path}: not readable: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}): a binary file?") from None


def json_depth(value: Any, limit: int) -> int:
    """How deep ``value`` nests (a scalar: 0, ``{"a": 1}``: 1), counted level by level
    (no recursion) and at most to ``limit + 1``."""
    depth, level = 0, [value]
    while depth <= limit:
        containers = [v for v in level if isinstance(v, dict | list)]
        if not containers:
            break
        depth += 1
        level = [c for v in containers for c in (v.values() if isinstance(v, dict) else v)]
    return depth


def load_json(path: str | os.PathLike[str], what: str = "JSON file",
              limit: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A JSON file of at most ``limit`` bytes and ``max_depth`` levels of nesting."""
    text = read_text(path, limit, what)
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputError(f"{path}: nested deeper than Python can parse; a {what} nests "
                         f"at most {max_depth} levels") from None
    except ValueError as exc:
        raise InputError(f"{path}: not JSON: {exc}") from None
    if json_depth(value, max_depth) > max_depth:
        raise InputError(f"{path}: nested more than {max_depth} levels deep, more than a "
                         f"{what} has")
    return value


# -- numbers on the command line ---------------------------------------------------------


def number_in(low: float, high: float = math.inf, *, low_open: bool = False,
              high_open: bool = False, integer: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a finite number from ``low`` to ``high`` (an end left out
    where ``*_open``), a whole one if ``integer``; argparse words the refusal as a usage
    error naming the option (exit 2)."""
    span = (("(" if low_open else "[") + f"{low:g}, {high:g}" + (")" if high_open else "]")
            if math.isfinite(high) else f"{'>' if low_open else '>='} {low:g}")

    def parse(text: str) -> float:
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'a whole number' if integer else 'a number'}") from None
        inside = (math.isfinite(value) and (value > low if low_open else value >= low)
                  and (value < high if high_open else value <= high))
        if not inside:
            raise argparse.ArgumentTypeError(f"{text!r} is outside {span}")
        return value

    return parse
