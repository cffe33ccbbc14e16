"""Safe by default with the user's files.

- ``report`` and ``compare`` refuse an output path that is one of their inputs
  (:func:`outputs_among_inputs`): ``--md results/timings.csv`` would overwrite the run.
- The report's figures folder: the report replaces the ``fig-*.png`` files it wrote
  there (listed in :data:`FIGURES_MANIFEST`) and refuses to start when one it did not
  write is in the way (:func:`foreign_figures`, :func:`write_figures_manifest`).
- A results or logs folder is written only when it is new, empty, or carries the marker
  of an earlier run (:data:`RESULTS_MARKER`, :func:`check_results_folder`); ``/`` and
  the home folder are refused outright, naming the config key.
- An output the report or compare cannot write (a folder, a read-only place) is refused
  before the work (:func:`unwritable_output`); a write that fails on the way (a full
  disk) leaves the earlier file (gpubench.files.WriteError).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

#: written into a results folder by the workflow that made it (:func:`mark_results_folder`)
RESULTS_MARKER = ".gpubench-results"
#: what an earlier run left in a results folder before the marker existed
#: (gpubench.runlock's lock): accepted as the marker
LEGACY_MARKERS = (".gpubench-run.lock",)
#: the list of figure files the report wrote into its figures folder
FIGURES_MANIFEST = ".gpubench-figures"
#: a results CSV's name endings (gpubench.results.CSV_SUFFIXES: plain, gzip, xz)
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.xz")


def _same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    pa, pb = Path(a), Path(b)
    try:
        if pa.exists() and pb.exists():
            return os.path.samefile(pa, pb)
    except OSError:
        pass
    return pa.resolve() == pb.resolve()


def outputs_among_inputs(outputs: Mapping[str, str | os.PathLike[str] | None],
                         inputs: Iterable[str | os.PathLike[str] | None]) -> str | None:
    """A message for the first output (``{flag: path}``) that is one of ``inputs`` or
    another output, or None when every output is a file of its own."""
    ins = [Path(p) for p in inputs if p]
    seen: dict[str, Path] = {}
    for flag, out in outputs.items():
        if not out:
            continue
        for inp in ins:
            if _same(out, inp):
                return (f"{flag} {out} is one of the inputs ({inp}): writing it would "
                        "overwrite that file; give another output path")
        for other, path in seen.items():
            if _same(out, path):
                return f"{flag} {out} is the same file as {other}; give each its own path"
        seen[flag] = Path(out)
    return None


def unwritable_output(outputs: Mapping[str, str | os.PathLike[str] | None]) -> str | None:
    """A message for the first output (``{flag: path}``) that cannot be written: a
    folder, below a file, or in a folder this user may not write to; None when each can
    be. Checked before the work, so that a report is not built to be lost, or written
    in part (a full disk is met only while writing: :class:`gpubench.files.WriteError`)."""
    for flag, out in outputs.items():
        if not out:
            continue
        path = Path(out)
        if path.is_dir():
            return f"{flag} {out} is a folder: give a file name"
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            return f"{flag} {out}: {folder} is a file, not a folder"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{flag} {out}: cannot write in {folder} (read-only?)"
    return None


def result_set_files(spec: str | os.PathLike[str]) -> list[Path]:
    """The files ``compare`` may read of a result set: a folder's ``timings.csv``,
    ``samples.csv`` (each plain, .gz or .xz), ``host.json``, ``env/host.json``, or a
    timings CSV and those beside it (as gpubench.report.compare.resolve looks them up)."""
    path = Path(spec)
    folder = path if path.is_dir() else path.parent
    timings = [folder / f"timings{s}" for s in CSV_SUFFIXES] if path.is_dir() else [path]
    return [*timings, *(folder / f"samples{s}" for s in CSV_SUFFIXES),
            folder / "host.json", folder / "env" / "host.json"]


# -- the report's figures folder ---------------------------------------------------------


def figures_folder(md: str | os.PathLike[str], figures: str | os.PathLike[str] | None
                   ) -> Path:
    """Where the report puts its PNGs: ``--figures``, or ``<md stem>_figures`` beside
    the Markdown (gpubench.report.build_report's default)."""
    return Path(figures) if figures else Path(md).parent / f"{Path(md).stem}_figures"


def _written_before(folder: Path, md: str | os.PathLike[str]) -> set[str]:
    manifest = folder / FIGURES_MANIFEST
    if manifest.is_file():
        return {line.strip() for line in manifest.read_text().splitlines() if line.strip()}
    # a report from before the manifest: the figures its summary.md links
    try:
        text = Path(md).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {p.name for p in folder.glob("fig-*.png") if f"{folder.name}/{p.name}" in text}


def foreign_figures(folder: str | os.PathLike[str], md: str | os.PathLike[str]) -> list[Path]:
    """``fig-*.png`` files in the figures folder that no earlier report wrote: the
    report would replace them (it removes the earlier figures before drawing)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    ours = _written_before(folder, md)
    return sorted(p for p in folder.glob("fig-*.png") if p.name not in ours)


def write_figures_manifest(folder: str | os.PathLike[str],
                           names: Iterable[str] | None = None) -> Path:
    """List the figures the report wrote in the folder's manifest: every ``fig-*.png``
    there (all its own once :func:`foreign_figures` found none); with ``names``, those
    about to be written added to the list first, so that a report stopped while writing
    them (a full disk) knows them for its own when it runs again."""
    from gpubench.files import atomic_write_text

    folder = Path(folder)
    if names is None:
        listed = {p.name for p in folder.glob("fig-*.png")}
    else:
        listed = _written_before(folder, "") | set(names)
    manifest = folder / FIGURES_MANIFEST
    atomic_write_text(manifest, "".join(f"{n}\n" for n in sorted(listed)))
    return manifest


# -- the results folder ------------------------------------------------------------------


class UnsafeFolder(ValueError):
    """A results or logs folder the workflow must not write into; names the key."""


def check_results_folder(folder: str | os.PathLike[str], key: str = "results_dir",
                         home: str | os.PathLike[str] | None = None,
                         marker_needed: bool = True) -> None:
    """Refuse ``/``, the home folder (``home``: default ``~``) and, when
    ``marker_needed``, a folder with files in it but no marker of an earlier run: the
    workflow deletes and rewrites files in its results folder."""
    path = Path(folder).expanduser().resolve()
    home_dir = Path(home if home is not None else Path.home()).resolve()
    if path == Path(path.anchor):
        raise UnsafeFolder(
            f"config key {key}: {str(folder)!r} is the root folder /: the workflow "
            f"deletes and rewrites files in its {key}; give a folder of its own, e.g. "
            f"{key}: results")
    if path == home_dir:
        raise UnsafeFolder(
            f"config key {key}: {str(folder)!r} is the home folder {home_dir}: the "
            f"workflow deletes and rewrites files in its {key}; give a folder of its own, "
            f"e.g. {key}: results")
    if not marker_needed or not path.is_dir():
        return
    if any((path / m).exists() for m in (RESULTS_MARKER, *LEGACY_MARKERS)):
        return
    entries = sorted(p.name for p in path.iterdir())
    if entries:
        shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more"
                                          if len(entries) > 3 else "")
        raise UnsafeFolder(
            f"config key {key}: {str(folder)!r} holds files ({shown}) and no "
            f"{RESULTS_MARKER} marker, so no gpubench run made it: the workflow would "
            f"overwrite files there. Give a new or empty folder, or, if it does hold an "
            f"earlier run's files, mark it: touch {Path(folder) / RESULTS_MARKER}")


def mark_results_folder(folder: str | os.PathLike[str]) -> Path:
    """Create the folder if needed and put the marker in it (kept if present)."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    marker = path / RESULTS_MARKER
    if not marker.exists():
        marker.write_text("A folder a gpubench run writes into (results_dir or logs_dir; "
                          "docs/running.md, 'Safe with your files').\n")
    return marker
