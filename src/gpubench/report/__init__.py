"""Build the HTML report and summary.md from the result CSVs and the environment records.

The report reads the timings CSV, the probe's environment JSON and, optionally, the
samples file, the steps' environment locks and the MPI results; it never re-runs
anything, so it can be rebuilt anywhere. The same inputs give byte-identical outputs,
whatever their row order: data is sorted before it is drawn or tabled, figures carry
no software tag or time, and the only timestamps shown are those in the data. Every
string from the inputs is escaped. Only ``ok`` rows are plotted or ranked.

Modules: :mod:`.base` (formatting, tables, inputs, per-kernel sections), :mod:`.sections`
(summary, speedup, ceilings and roofline, crossover, first call, code size),
:mod:`.mpi`, :mod:`.stats` (samples and the noise-aware test), :mod:`.figures`
(deterministic figures drawn in parallel) and :mod:`.compare` (run-vs-run).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gpubench import plausibility, results
from gpubench.report import figures, matrix, mpi, sections, stats
from gpubench.report.base import (
    CSS,
    KERNELS,
    Environment,
    _ordered,
    _slug,
    backend_table,
    banners_html,
    correctness_html,
    data_table,
    environment_html,
    environment_table,
    esc,
    failure_groups,
    failures_html,
    gpu_skip_reasons,
    how_to_read_html,
    kernel_section_html,
    load_env,
    load_locks,
    lock_table,
    prepare,
)
from gpubench.report.render import md_esc

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

    A missing, unreadable or structurally wrong file (no key or status columns, duplicate
    keys, ok rows without a time) raises :class:`results.SchemaError` with a message that
    names the file. Columns an older schema did not have are filled as unknown; columns
    this code does not know are dropped; both are reported on the page."""
    path = Path(path)
    if not path.exists():
        raise results.SchemaError(f"{path}: file is missing")
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"reason": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError,
            OSError) as exc:
        raise results.SchemaError(f"{path}: not a readable CSV: {exc}") from exc
    notes: list[str] = []
    required = [*results.KEY_NAMES, "status"]
    lacking = [c for c in required if c not in frame.columns]
    if lacking:
        raise results.SchemaError(f"{path}: missing columns {lacking}; not a gpubench "
                                  f"timings file (schema v{results.SCHEMA_VERSION})")
    missing = [c for c in results.COLUMN_NAMES if c not in frame.columns]
    if missing:
        notes.append(f"{path.name} is of an older schema: it has no columns "
                     f"{', '.join(missing)}; their values are shown as unknown or left out")
        kinds = {c.name: c.kind for c in results.COLUMNS}
        for col in missing:
            frame[col] = "" if kinds[col] == "str" else float("nan")
        if "reason" in missing:
            frame["reason"] = frame["status"].map(
                lambda s: "" if s == "ok" else "(no reason: the file predates the column)")
    extra = sorted(c for c in frame.columns if c not in results.COLUMN_NAMES)
    if extra:
        notes.append(f"{path.name} has columns this report does not know, ignored: "
                     f"{', '.join(extra)}")
        frame = frame.drop(columns=extra)
    versions = set(pd.to_numeric(frame["schema_version"], errors="coerce").dropna()
                   .astype(int))
    if versions - {results.SCHEMA_VERSION}:
        notes.append(f"{path.name} has rows of schema version {sorted(versions)}; this "
                     f"report reads v{results.SCHEMA_VERSION} and shows them as far as the "
                     "columns allow")
        frame["schema_version"] = results.SCHEMA_VERSION
    if missing or versions - {results.SCHEMA_VERSION}:
        frame["schema_version"] = frame["schema_version"].fillna(results.SCHEMA_VERSION)
    return results.validate(frame, str(path)), notes


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
    #: on the device clock, the crossovers and the code sizes
    picks: dict[str, sections.Picks] = field(default_factory=dict)
    device_picks: sections.Picks = field(default_factory=list)
    crossings: list[sections.Crossing] = field(default_factory=list)
    code_tables: tuple[pd.DataFrame | None, pd.DataFrame | None] = (None, None)
    #: "Which framework?": the measured matrix, its sentences and the seeds' claims
    choice: tuple[matrix.Matrix, list[str], pd.DataFrame | None] | None = None

    def analyse(self) -> Inputs:
        df = self.df
        timed = df[(df["status"] == "ok") & (df["caller_s"] > 0)]
        self.picks = {m: sections.picks_for(df, self.samples, m, "caller" if
                                            (timed["mode"] == m).any() else "device")
                      for m in sorted(set(df["mode"]))}
        self.device_picks = sections.picks_for(df[df["device"] == "gpu"], self.samples,
                                               sections.primary_mode(df), "device")
        self.crossings = sections.crossings(df, self.env.data)
        self.code_tables = sections.code_size_tables(df)
        self.choice = matrix.for_inputs(df, self.samples, self.crossings, self.mpi.frame)
        return self


def caller_clock_notes(df: pd.DataFrame) -> list[str]:
    """What the reader must know about the clocks of this result set: GPU rows without a
    caller's clock (an older file), and rows refused as implausible."""
    out = []
    gpu = df[(df["device"] == "gpu") & (df["status"] == "ok") & (df["mode"] == "hot")]
    blind = gpu[~(gpu["caller_s"] > 0)]
    if len(blind):
        out.append(f"{len(blind)} ok GPU row(s) have no caller's clock (a timings file of "
                   "schema 1, or caller_clocks off): they are shown on the device clock and "
                   "take no part in the verdicts, which rank what a caller waits for. Device "
                   "time leaves out the dispatch and the wait, so it would make small sizes "
                   "look 10 to 100 times faster than a Python caller sees them; re-run the "
                   "GPU steps to rank them")
    bad = df[df["status"] == "implausible"]
    if len(bad):
        out.append(f"{len(bad)} row(s) are implausible: faster than this machine's measured "
                   "ceilings allow, or their work escaped the timed stream. They are never "
                   "ranked; see Failures and skips")
    return out


def input_banners(inputs: Inputs) -> str:
    out = [f'<div class="banner">{esc(n)}.</div>\n' for n in inputs.notes]
    out += [f'<div class="alert">{esc(n)}.</div>\n' for n in caller_clock_notes(inputs.df)]
    df = inputs.df
    if not df.empty and not (df["device"] == "gpu").any():
        out.append('<div class="banner"><strong>No GPU rows</strong>: this result set has '
                   "CPU measurements only, so the crossover and GPU roofline sections are "
                   "empty. Run the GPU steps on a machine with an NVIDIA GPU to fill "
                   "them.</div>\n")
    return "".join(out)


def _sort_input(frame: pd.DataFrame) -> pd.DataFrame:
    """A canonical row order, so a shuffled CSV gives the same page."""
    cols = [*results.KEY_NAMES, "mode"]
    return frame.sort_values(cols, kind="mergesort", na_position="first").reset_index(
        drop=True)


def render_html(inputs: Inputs, figs: figures.FigureQueue) -> str:
    """The whole page, with figure placeholders that ``figs`` fills in."""
    df, env = inputs.df, inputs.env
    kernels = _ordered(df["kernel"], KERNELS)
    anchors = {k: _slug(k, i) for i, k in enumerate(kernels)}
    toc = ['<a href="#which">Which framework?</a>', '<a href="#summary">Summary</a>']
    toc += [f'<a href="#{esc(anchors[k])}">{esc(k)}</a>' for k in kernels]
    toc += ['<a href="#speedup">Speedup</a>', '<a href="#ceilings">Ceilings and roofline</a>',
            '<a href="#crossover">Crossover</a>', '<a href="#launch-floor">Launch floor</a>',
            '<a href="#first-call">First call</a>',
            '<a href="#correctness">Correctness</a>', '<a href="#code-size">Code size</a>',
            '<a href="#mpi">MPI</a>', '<a href="#failures">Failures and skips</a>',
            '<a href="#environment">Environment</a>']
    body = [
        "<h1>gpubench report</h1>\n",
        f'<p class="note">From {esc(inputs.timings_name)} on host {esc(env.get("host"))}, '
        f'commit {esc(env.get("git_commit"))}.</p>\n',
        "<nav>" + " · ".join(toc) + "</nav>\n",
        how_to_read_html(),
        input_banners(inputs),
        banners_html(df, env),
        matrix.render_html(*inputs.choice, df) if inputs.choice else "",
        sections.summary_html(df, inputs.picks, inputs.device_picks),
        *(kernel_section_html(df, k, anchors[k], figs) for k in kernels),
        sections.speedup_html(df, figs),
        sections.ceilings_html(df, env.data, figs),
        sections.crossover_html(df, inputs.crossings),
        sections.launch_floor_html(df),
        sections.first_call_html(df, figs),
        correctness_html(df),
        sections.code_size_html(inputs.code_tables),
        mpi.mpi_html(inputs.mpi, figs),
        failures_html(df),
        environment_html(df, env, inputs.timings_name, inputs.samples.note),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>gpubench report</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "".join(body) + "</body>\n</html>\n")


def render_markdown(inputs: Inputs) -> str:
    """summary.md: the summary, speedups, crossovers, costs, failures and environment."""
    df, env = inputs.df, inputs.env
    mode = sections.primary_mode(df)
    out = ["# gpubench summary\n",
           f"From {md_esc(inputs.timings_name)}. Times are medians; only ok rows are ranked. "
           "Verdicts, speedups and crossovers are on the **caller's clock**: what a Python "
           "loop waits for per call (GPU: pipelined calls and a device-wide wait, with sync "
           "and the device time beside; CPU: wall time). % of ceiling is on the device "
           "clock. The best backend per size class is *sure* when a Mann–Whitney U test on "
           f"the samples gives p < {stats.ALPHA} and the medians differ by more than "
           f"{stats.MIN_EFFECT:.0%}.\n"]
    for note in inputs.notes + caller_clock_notes(df):
        out.append(f"> {md_esc(note)}.\n")
    if env.problem:
        out.append(f"> {md_esc(env.problem)}.\n")
    if not df.empty and not (df["device"] == "gpu").any():
        out.append("> **No GPU rows**: CPU measurements only.\n")
    for reason, n in gpu_skip_reasons(df):
        out.append(f"> **GPU steps skipped: {md_esc(reason)}** ({n} rows).\n")
    if inputs.choice:
        out.append(matrix.render_markdown(*inputs.choice))
    out.append(f"## Summary (mode {md_esc(mode)}, {sections.CLOCK_LABELS['caller']})\n")
    table = sections.best_table(inputs.picks.get(mode, []))
    if table is None:
        out.append("**No successful measurements.**\n")
    else:
        wins = sections.wins_table(inputs.picks.get(mode, []))
        if wins is not None:
            out.append(wins.report.markdown())
        out.append(table.report.markdown())
    n_wrong = int((df["status"] == "wrong_result").sum())
    if n_wrong:
        out.append(f"**{n_wrong} wrong result(s)**: see the Failures list.\n")
    targets = sections.targets_table(df, mode)
    if targets is not None:
        out.append("## Targets (largest size, device clock)\n")
        out.append(targets.report.markdown())
    speed = sections.speedup_table(df, mode)
    if speed is not None:
        out.append("## Speedup over NumPy (largest size, caller's clock)\n")
        out.append(speed.report.markdown())
    found = inputs.crossings
    out.append("## CPU/GPU crossover (caller's clock)\n")
    if found:
        out.extend(f"- {md_esc(line)}" for line in sections.crossover_headline(found))
        cross = sections.crossover_table(found)
        if cross is not None:
            out.append("\n" + cross.report.markdown())
    else:
        out.append("No crossover: no GPU and CPU rows to compare.\n")
    floor = sections.launch_floor_table(df)
    out.append("## The launch floor\n")
    out.append(floor.report.markdown() if floor is not None else "Not measured: no ok "
               "launch_overhead rows with a caller's clock.\n")
    first = sections.first_call_backend_table(df)
    if first is not None:
        out.append("## First-call cost\n")
        out.append(first.report.markdown())
    fw_code, _ = inputs.code_tables
    if fw_code is not None:
        out.append("## Code size (lines per implementation)\n")
        out.append(fw_code.report.markdown())
    out.append("## MPI\n")
    out.append(mpi.mpi_markdown(inputs.mpi))
    out.append("## Failures and skips\n")
    groups = failure_groups(df)
    out.append(groups.report.markdown() if groups is not None else "Every row has status ok.\n")
    out.append("## Environment\n")
    out.append(environment_table(env).report.markdown())
    backends = backend_table(df)
    if backends is not None:
        out.append("\n" + backends.report.markdown())
    locks = lock_table(env)
    if locks is not None:
        out.append("\n### Framework environments\n\n" + locks.report.markdown())
    out.append("\n" + data_table(df, inputs.timings_name, inputs.samples.note).report.markdown())
    return "\n".join(out)


def load_inputs(timings_csv: str | Path, env_json: str | Path,
                samples_csv: str | Path | None = None, locks: Sequence[str | Path] = (),
                mpi_csv: str | Path | None = None,
                mpi_samples_csv: str | Path | None = None) -> Inputs:
    """Read every input once; only an unusable timings CSV raises (SchemaError)."""
    frame, notes = read_timings_lenient(timings_csv)
    env = load_env(env_json)
    ceilings = env.data.get("ceilings")
    if isinstance(ceilings, dict) and ceilings:
        # judged again with this code's gates: a file collected by older code (or none)
        # gets the same refusals as a new one; without ceilings the file's statuses stand
        plausibility.judge(frame, ceilings)
    df = sections.canonical_order(prepare(_sort_input(frame)))
    env.locks = load_locks(locks)
    return Inputs(df, env, Path(timings_csv).name, stats.load_samples(samples_csv, df),
                  mpi.load_mpi(mpi_csv, mpi_samples_csv), notes).analyse()


def build_report(timings_csv: str | Path, env_json: str | Path, out_html: str | Path,
                 out_md: str | Path, samples_csv: str | Path | None = None,
                 locks: Sequence[str | Path] = (), mpi_csv: str | Path | None = None,
                 mpi_samples_csv: str | Path | None = None,
                 workers: int | None = None) -> None:
    """Write the HTML report and summary.md; an unusable timings CSV raises SchemaError
    (and nothing is written).

    ``locks`` are the steps' environment locks (``raw/<backend>.lock.txt``); ``workers``
    caps the processes that draw figures (default: the usable cores, at most 8)."""
    inputs = load_inputs(timings_csv, env_json, samples_csv, locks, mpi_csv, mpi_samples_csv)
    figs = figures.FigureQueue()
    page = figs.render(render_html(inputs, figs), workers)
    results.atomic_write_text(out_html, page)
    results.atomic_write_text(out_md, render_markdown(inputs))


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m gpubench report --timings T --env E --html H --md M [--samples S]
    [--locks L ...] [--mpi mpi.csv] [--mpi-samples mpi_samples.csv] [--jobs N]``."""
    parser = argparse.ArgumentParser(prog="python -m gpubench report",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--timings", required=True, help="timings CSV (collected)")
    parser.add_argument("--env", required=True, help="environment JSON from the probe step")
    parser.add_argument("--html", required=True, help="HTML report to write")
    parser.add_argument("--md", required=True, help="summary.md to write")
    parser.add_argument("--samples", help="raw samples CSV, plain or .gz (optional: without "
                        "it, comparisons use the quartiles)")
    parser.add_argument("--locks", nargs="*", default=[],
                        help="environment locks of the steps (raw/<backend>.lock.txt)")
    parser.add_argument("--mpi", help="mpi.csv from the MPI steps (absent: 'MPI was not run')")
    parser.add_argument("--mpi-samples", help="mpi_samples.csv (optional)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes that draw figures (default: usable cores, max 8)")
    args = parser.parse_args(argv)
    try:
        build_report(args.timings, args.env, args.html, args.md, args.samples, args.locks,
                     args.mpi, args.mpi_samples, args.jobs)
    except results.SchemaError as exc:
        parser.exit(2, f"gpubench report: {exc}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
