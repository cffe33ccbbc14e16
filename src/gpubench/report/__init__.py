"""Build the HTML report and summary.md from the result CSVs and the environment records.

The report reads the timings CSV, the probe's environment JSON and, optionally, the
samples file, the steps' environment locks and the MPI results; it never re-runs
anything, so it can be rebuilt anywhere. The same inputs give byte-identical outputs,
whatever their row order: data is sorted before it is drawn or tabled, figures carry
no software tag or time, and the only timestamps shown are those in the data. Every
string from the inputs is escaped (the HTML templates autoescape). Only ``ok`` rows are
plotted or ranked.

Each section computes its data once (:meth:`Inputs.analyse`): :mod:`.sections` (one
module per section: summary, per kernel, speedup, ceilings and roofline, crossover,
launch floor, first call, correctness, code size, failures, environment),
:mod:`.matrix` ("Which framework?") and :mod:`.mpi`. The Jinja2 templates in
``templates/`` render that data to the page (``page.html.j2``) and to summary.md
(``summary.md.j2``) through :mod:`.render`. Also: :mod:`.base` (formatting, inputs,
:func:`~.base.img`), :mod:`.stats` (samples and the noise-aware test), :mod:`.figures`
(deterministic figures: interactive on the page, PNGs drawn in parallel for summary.md),
:mod:`.plots` (the figures' interactive Plotly twins) and :mod:`.compare` (run-vs-run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpubench import hostload, occupancy, results
from gpubench.cli_parsers import report_parser
from gpubench.files import WriteError
from gpubench.report import (
    cells,
    conditions,
    figures,
    headline,
    matrix,
    mpi,
    outline,
    render,
    sections,
    stats,
)
from gpubench.report.base import (
    CSS,
    UNKNOWN,
    Environment,
    _ordered,
    backend_table,
    cpu_only,
    data_table,
    environment_table,
    esc,
    failure_groups,
    gpu_notice,
    judged,
    load_env,
    load_locks,
    lock_table,
    prepare,
)
from gpubench.report.render import Markup, md_esc
from gpubench.spec import kernel_names

__all__ = [
    "build_report",
    "esc",
    "main",
    "md_esc",
    "prepare",
    "read_timings_lenient",
    "render_html",
    "render_markdown",
]


def read_timings_lenient(path: str | Path) -> tuple[pd.DataFrame, list[str]]:
    """Read a timings CSV; rows of an older schema are accepted with a note.

    A missing, unreadable, cut short or too large file (:func:`results.read_csv`), or a
    structurally wrong one (no key or status columns, duplicate
    keys, ok rows without a time) raises :class:`results.SchemaError` with a message that
    names the file; so does a measured value the verdicts would use that is not finite,
    out of its bound or out of order (:func:`results.validate`: the message names the
    line, the row's key, the column and the value). Columns an older schema did not have
    are filled as unknown (absent, which the checks allow); columns this code does not
    know are dropped; both are reported on the page."""
    path = Path(path)
    frame = results.read_csv(path, results.TIMINGS_MAX_BYTES, "timings file",
                             dtype={"reason": str})
    notes: list[str] = []
    required = [*results.KEY_NAMES, "status"]
    lacking = [c for c in required if c not in frame.columns]
    if lacking:
        raise results.SchemaError(f"{path}: missing columns {lacking}; not a gpubench "
                                  f"timings file (schema v{results.SCHEMA_VERSION})")
    missing = [c for c in results.COLUMN_NAMES if c not in frame.columns]
    # the host's conditions are shown only where a step was busy, occupancy only in the
    # block-size sweep's rows, which files without the column do not have: without them,
    # nothing is shown and nothing changes, so they need no note
    named = [c for c in missing if c not in (*hostload.COLUMNS, *occupancy.COLUMNS)]
    if named:
        notes.append(missing_in_words(path.name, named))
    if missing:
        kinds = {c.name: c.kind for c in results.COLUMNS}
        for col in missing:
            frame[col] = "" if kinds[col] == "str" else float("nan")
        if "reason" in missing:
            frame["reason"] = frame["status"].map(
                lambda s: "" if s == "ok" else "(no reason: the file predates the column)")
    extra = sorted(c for c in frame.columns if c not in results.COLUMN_NAMES)
    if extra:
        notes.append(f"{path.name} has columns this report does not know (written by a "
                     f"newer gpubench?), ignored: {', '.join(extra)}")
        frame = frame.drop(columns=extra)
    # a version that is not a whole number (inf, 2.5, text) is left for validate to refuse
    version = pd.to_numeric(frame["schema_version"], errors="coerce").to_numpy(float)
    with np.errstate(invalid="ignore"):
        whole = (np.abs(version) < 2**31) & (np.floor(version) == version)
    same = whole & np.isin(version, results.READ_AS_CURRENT)
    if same.any():  # rows that differ from this version's only in columns left empty
        version[same] = results.SCHEMA_VERSION
        frame.loc[same, "schema_version"] = results.SCHEMA_VERSION
    versions = {int(v) for v in version[whole]}
    if versions - {results.SCHEMA_VERSION}:
        older = int((version[whole] < results.SCHEMA_VERSION).sum())
        notes.append(f"{older:,} of {path.name}'s {len(frame):,} rows were written by an "
                     "older gpubench than this report"
                     if versions and max(versions) <= results.SCHEMA_VERSION else
                     f"{path.name} has rows written by another gpubench than this report")
        notes[-1] += (": they are read as far as their columns go, and every figure they "
                      "can give is shown")
        frame.loc[whole, "schema_version"] = results.SCHEMA_VERSION
    if missing or versions - {results.SCHEMA_VERSION}:
        frame["schema_version"] = frame["schema_version"].fillna(results.SCHEMA_VERSION)
    return results.validate(frame, str(path), path), notes


#: what a group of timings columns records, and what the report says where a file
#: written before them lacks it: (column prefix, what it is, what the reader sees)
COLUMN_WORDS: tuple[tuple[str, str, str], ...] = (
    ("matmul_precision", "the precision GEMM and linalg products were rounded to",
     "their recommendations say \"precision not recorded\""),
    ("caller_spread", "the time over which each row's caller's-clock samples were spread",
     "kept in the rows only: nothing on this page reads it"),
    ("memory_", "each call's peak GPU memory",
     "the matrix's memory column reads \"not measured\""),
    ("energy_", "each call's energy", "the matrix's energy column reads \"not measured\""),
    ("caller_", "the caller's clock (what a Python loop waits for)",
     "GPU rows without it are shown on the device clock and not ranked"),
    ("sync_", "the caller's clock (what a Python loop waits for)",
     "GPU rows without it are shown on the device clock and not ranked"),
    ("pipelined_", "the caller's clock (what a Python loop waits for)",
     "GPU rows without it are shown on the device clock and not ranked"),
    ("first_call", "the first call's extra cost", "first-call cost is not shown"),
    ("gpu_", "the GPU's clock, temperature and throttling before and after each row",
     "kept in the rows only: nothing on this page reads them"),
)


def missing_in_words(name: str, columns: Sequence[str]) -> str:
    """A file written before some columns existed, in words: what it did not record and
    what the report shows instead, the columns named last for whoever checks the file."""
    said: dict[str, str] = {}
    others = []
    for col in columns:
        hit = next(((what, then) for pre, what, then in COLUMN_WORDS
                    if col.startswith(pre)), None)
        if hit is None:
            others.append(col)
        else:
            said.setdefault(hit[0], hit[1])
    parts = [f"{what} ({then})" for what, then in said.items()]
    if others:
        parts.append(f"{len(others)} other measurement{'s' if len(others) != 1 else ''} "
                     "(shown as unknown or left out)")
    return (f"{name} was written by an older gpubench, which did not yet record "
            f"{'; '.join(parts)}; the columns it lacks: {', '.join(columns)}")


@dataclass
class Inputs:
    """Everything the report is built from, read once."""

    df: pd.DataFrame
    env: Environment
    timings_name: str
    samples: stats.Samples
    mpi: mpi.MpiData
    notes: list[str] = field(default_factory=list)
    #: analyses both documents use, computed once: per mode the picks on the caller's
    #: clock (modes without one, cold, on the device clock), the primary mode's GPU rows
    #: on the device clock, the crossovers, and each section's data (:mod:`.sections`)
    picks: dict[str, sections.Picks] = field(default_factory=dict)
    device_picks: sections.Picks = field(default_factory=list)
    crossings: list[sections.Crossing] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)
    #: "Which framework?": the measured matrix, its sentences and the claims
    #: of the workshop book and guides
    choice: tuple[matrix.Matrix, list[str], pd.DataFrame | None] | None = None
    #: the first screen: the machine's line and the overview figure
    machine: headline.Machine | None = None
    overview: headline.Overview | None = None
    #: the run's suite record (``suite.json``: gpubench.suites); empty where none
    suite: dict[str, Any] = field(default_factory=dict)
    #: the notice on the steps measured on a busy host, whose comparisons are flagged
    #: (:mod:`.conditions`); None where no step was
    busy: conditions.Notice | None = None

    @property
    def suite_line(self) -> tuple[str, str]:
        """(the header's sentence on the suite, the full suite's command)."""
        from gpubench import suites

        return suites.describe(self.suite)

    @property
    def code_tables(self) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
        code = self.sections["code"]
        return code.per_framework, code.per_implementation

    def analyse(self) -> Inputs:
        df = self.df
        timed = df[(df["status"] == "ok") & (df["caller_s"] > 0)]
        self.picks = {m: sections.picks_for(df, self.samples, m, "caller" if
                                            (timed["mode"] == m).any() else "device")
                      for m in sorted(set(df["mode"]))}
        self.device_picks = sections.picks_for(df[df["device"] == "gpu"], self.samples,
                                               sections.primary_mode(df), "device")
        self.crossings = sections.crossings(df, self.env.data)
        self.busy = conditions.notice(df)
        self.sections = outline.built(self)
        self.choice = matrix.for_inputs(df, self.samples, self.crossings, self.mpi.frame,
                                        self.sections["code"].sizes,
                                        cells.energy_uncertainty(self.env.data),
                                        cells.power_limit(self.env.data))
        self.machine = headline.machine(self.env, df)
        self.machine.suite = str(self.suite.get("suite") or "")
        self.overview = headline.overview(
            df, self.crossings,
            sections.ceilings_of(self.env.data).get("h2d_pageable_gbps"), self.choice[0])
        return self


def caller_clock_notes(df: pd.DataFrame) -> list[str]:
    """What the reader must know about the clocks of this result set: GPU rows without a
    caller's clock (an older file), and rows refused as implausible."""
    out = []
    gpu = df[(df["device"] == "gpu") & (df["status"] == "ok") & (df["mode"] == "hot")]
    blind = gpu[~(gpu["caller_s"] > 0)]
    if len(blind):
        out.append(f"{len(blind)} ok GPU row(s) ({headline.name_rows(blind)}) have no "
                   "caller's clock (a timings file written before gpubench recorded "
                   "it, or caller_clocks off): they are shown on the device clock and "
                   "take no part in the verdicts, which rank what a caller waits for. Device "
                   "time leaves out the dispatch and the wait, so it would make small sizes "
                   "look 10 to 100 times faster than a Python caller sees them; re-run the "
                   "GPU steps to rank them")
    bad = df[df["status"] == "implausible"]
    if len(bad):
        out.append(f"{len(bad)} row{'s' if len(bad) != 1 else ''} implausible "
                   f"({headline.name_rows(bad)}): faster than this machine's measured "
                   "ceilings allow, or their work escaped the timed stream. They are never "
                   "ranked; see Failures and skips")
    return out


def _sort_input(frame: pd.DataFrame) -> pd.DataFrame:
    """A canonical row order, so a shuffled CSV gives the same page."""
    cols = [*results.KEY_NAMES, "mode"]
    return frame.sort_values(cols, kind="mergesort", na_position="first").reset_index(
        drop=True)


def render_html(inputs: Inputs, figs: figures.FigureQueue, csv_name: str = "") -> str:
    """The whole page (``page.html.j2``), with figure placeholders that ``figs`` fills
    in. Sections not yet in templates of their own come in as escaped HTML. The
    per-kernel results are one detail view drawn on demand (:mod:`.sections.details`,
    linking the rows file ``csv_name`` beside the page); their figures are queued on
    ``figs`` all the same, in page order, for summary.md's PNGs."""
    df, env = inputs.df, inputs.env
    machine_line = inputs.machine or headline.machine(env, df)
    kernels = _ordered(df["kernel"], kernel_names())
    details = sections.details.build(df, csv_name)
    # the page's own parts before the sections (gpubench.report.outline)
    toc = [("which", "Which framework?"),
           *([("input-files", "About the input files")]
             if inputs.notes or env.problem else []),
           *([("details", "Per-kernel results")] if details.n_rows else []),
           *outline.toc(inputs.sections)]
    return str(render.render_html(
        "page.html.j2", css=Markup(CSS), timings_name=inputs.timings_name,
        host=env.get("host"), commit=env.get("git_commit"), toc=toc,
        machine=machine_line, suite=inputs.suite_line,
        wrong_named=matrix.in_words(headline.name_rows(df[df["status"] == "wrong_result"])),
        notes=[matrix.in_words(n) for n in inputs.notes],
        alerts=[matrix.in_words(n) for n in caller_clock_notes(df)],
        heading=headline.heading(machine_line, cpu_only(df)),
        env_problem=env.problem, unknown=UNKNOWN, gpu_notice=gpu_notice(df),
        busy=inputs.busy, n_rows=len(df), n_ok=int((df["status"] == "ok").sum()),
        n_wrong=int((df["status"] == "wrong_result").sum()),
        matrix=Markup(matrix.render_html(*inputs.choice, df, inputs.overview,
                                         sections.figure_drawer(figs, static=True))
                      if inputs.choice else ""),
        details=details, details_js=sections.details.html_script(),
        kernel_figures=[f for k in kernels for f in sections.kernels.figures(df, k)],
        queue=sections.figure_queuer(figs),
        sections=inputs.sections, figure=sections.figure_drawer(figs),
        figure_pick=sections.common.figure_picker(figs),
        outline=outline.SECTIONS, parts={"mpi": Markup(mpi.mpi_html(inputs.mpi, figs))}))


def render_markdown(inputs: Inputs, overview_png: str | None = None) -> str:
    """summary.md (``summary.md.j2``): the machine, the recommendations, the overview
    figure (its PNG at ``overview_png``, relative to summary.md), the compact matrix,
    then the summary, speedups, crossovers, costs, failures and environment, from the
    same section data as the page."""
    df, env = inputs.df, inputs.env
    machine_line = inputs.machine or headline.machine(env, df)
    return render.render_md(
        "summary.md.j2", timings_name=inputs.timings_name,
        machine=machine_line, suite=inputs.suite_line,
        wrong_named=headline.name_rows(df[df["status"] == "wrong_result"]),
        notes=[matrix.in_words(n) for n in inputs.notes],
        alerts=[matrix.in_words(n) for n in caller_clock_notes(df)],
        env_problem=env.problem, unknown=UNKNOWN,
        heading=headline.heading(machine_line, cpu_only(df)),
        gpu_notice=gpu_notice(df), busy=inputs.busy,
        matrix=matrix.render_markdown(*inputs.choice, inputs.overview, overview_png)
        if inputs.choice else None,
        sections=inputs.sections, n_wrong=int((df["status"] == "wrong_result").sum()),
        outline=outline.SECTIONS, mpi=mpi.mpi_markdown(inputs.mpi), failures=failure_groups(df),
        environment=environment_table(env), backends=backend_table(df),
        locks=lock_table(env), data=data_table(df, inputs.timings_name, inputs.samples.note))


def load_inputs(timings_csv: str | Path, env_json: str | Path,
                samples_csv: str | Path | None = None, locks: Sequence[str | Path] = (),
                mpi_csv: str | Path | None = None,
                mpi_samples_csv: str | Path | None = None,
                prepared: Callable[[pd.DataFrame], None] | None = None,
                suite_json: str | Path | None = None) -> Inputs:
    """Read every input once; only an unusable timings CSV raises (SchemaError).
    ``prepared`` is called with the prepared rows before the analysis (build_report
    starts drawing figures then); ``suite_json`` is the run's suite record."""
    from gpubench import suites

    frame, notes = read_timings_lenient(timings_csv)
    env = load_env(env_json)
    df = sections.canonical_order(prepare(_sort_input(judged(frame, env))))
    env.locks = load_locks(locks)
    if prepared is not None:
        prepared(df)
    return Inputs(df, env, Path(timings_csv).name, stats.load_samples(samples_csv, df),
                  mpi.load_mpi(mpi_csv, mpi_samples_csv), notes,
                  suite=suites.read_record(suite_json)).analyse()


def build_report(timings_csv: str | Path, env_json: str | Path, out_html: str | Path,
                 out_md: str | Path, samples_csv: str | Path | None = None,
                 locks: Sequence[str | Path] = (), mpi_csv: str | Path | None = None,
                 mpi_samples_csv: str | Path | None = None,
                 workers: int | None = None,
                 figures_dir: str | Path | None = None,
                 suite_json: str | Path | None = None) -> Inputs:
    """Write the HTML report and summary.md and return what they were built from; an
    unusable timings CSV raises SchemaError (and nothing is written).

    ``locks`` are the steps' environment locks (``raw/<backend>.lock.txt``); ``workers``
    caps the processes that draw figures (default: the usable cores, at most 8);
    ``suite_json`` is the run's suite record, which the header names. The page's
    figures are interactive; their PNGs go to ``figures_dir`` (default: ``<md
    stem>_figures`` beside summary.md), linked from summary.md."""
    md_dir = Path(out_md).parent
    folder = Path(figures_dir or md_dir / f"{Path(out_md).stem}_figures")
    with figures.Drawer(workers) as drawer:

        def draw_kernels_ahead(df: pd.DataFrame) -> None:
            # the per-kernel figures (most of them) need only the rows: drawn in the
            # background while the analysis runs
            drawer.ahead([(f.fn, f.args) for k in _ordered(df["kernel"], kernel_names())
                          for f in sections.kernels.figures(df, k)], folder)

        inputs = load_inputs(timings_csv, env_json, samples_csv, locks, mpi_csv,
                             mpi_samples_csv, draw_kernels_ahead, suite_json)
        figs = figures.FigureQueue()
        csv_name = sections.details.rows_csv_name(out_html)
        html = render_html(inputs, figs, csv_name)
        # the rest, while the page's interactive figures are built
        drawer.ahead(figs.jobs, folder, figs.keys())
        page = figs.render(html, workers, drawer)
        results.atomic_write_text(out_html, page)
        sections.details.write_rows_csv(inputs.df, results.COLUMN_NAMES,
                                        Path(out_html).with_name(csv_name))
        pngs = figs.write_pngs(folder, workers, drawer)
    first = next((i for i, (fn, _a) in enumerate(figs.jobs)
                  if fn is headline.overview_figure), None)
    overview_png = (os.path.relpath(pngs[first], md_dir).replace(os.sep, "/")
                    if first is not None else None)
    results.atomic_write_text(out_md, render_markdown(inputs, overview_png)
                              + figs.markdown(pngs, md_dir))
    return inputs


def make_parser() -> argparse.ArgumentParser:
    """The options of ``gpubench report`` (:func:`gpubench.cli_parsers.report_parser`)."""
    return report_parser()


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``gpubench report --timings T --env E --html H --md M [--samples S]
    [--locks L ...] [--mpi mpi.csv] [--mpi-samples mpi_samples.csv] [--jobs N]
    [--figures DIR] [--suite suite.json]``."""
    parser = make_parser()
    return run(parser.parse_args(argv), parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Build the report that the parsed ``args`` ask for (``gpubench report`` parses them
    first, so that its --help needs none of this package's imports)."""
    from gpubench import safety

    figures_dir = safety.figures_folder(args.md, args.figures)
    outputs = {"--html": args.html, "--md": args.md, "--figures": figures_dir / "fig.png"}
    rows_csv = Path(args.html).with_name(sections.details.rows_csv_name(args.html))
    clash = safety.outputs_among_inputs(
        {"--html": args.html, "--md": args.md, "the rows file beside --html": rows_csv},
        [args.timings, args.env, args.samples, args.mpi, args.mpi_samples, args.suite,
         *args.locks]
    ) or safety.unwritable_output(outputs)
    foreign = safety.foreign_figures(figures_dir, args.md)
    if clash is None and foreign:
        clash = (f"the figures folder {figures_dir} holds {foreign[0].name}"
                 + (f" and {len(foreign) - 1} more fig-*.png" if len(foreign) > 1 else "")
                 + ", which no earlier report wrote (the report replaces its fig-*.png "
                 "there): move them, or give another --figures folder")
    if clash is not None:
        parser.exit(2, f"gpubench report: {clash}\n")
    start = time.perf_counter()
    try:
        built = build_report(args.timings, args.env, args.html, args.md, args.samples,
                             args.locks, args.mpi, args.mpi_samples, args.jobs, args.figures,
                             args.suite)
        safety.write_figures_manifest(figures_dir)
    except (results.SchemaError, WriteError) as exc:
        parser.exit(2, f"gpubench report: {exc}\n")
    if built is not None and built.env.problem:  # on the page too, and where it was typed
        print(f"gpubench report: note: {built.env.problem}", file=sys.stderr)
    took = time.perf_counter() - start
    page = Path(args.html)
    n_figs = page.read_text(encoding="utf-8").count('class="plot-spec"')
    print(f"gpubench report: {page} {page.stat().st_size / 1e6:.2f} MB ({n_figs} "
          f"interactive figures; the per-kernel results drawn on demand; every row in "
          f"{rows_csv.name} beside it), {args.md} {Path(args.md).stat().st_size / 1e3:.0f} kB; "
          f"built in {took:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
