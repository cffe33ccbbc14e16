"""The options of ``gpubench report``, ``compare`` and ``catalog``, apart from the
modules that do the work so that their ``--help`` (and a wrong flag) is answered before
the data stack (pandas, NumPy, matplotlib, SciPy) is imported."""

from __future__ import annotations

import argparse

from gpubench.cli_examples import EXAMPLES
from gpubench.inputs import number_in
from gpubench.thresholds import ALPHA, MIN_EFFECT

#: where ``gpubench compare`` writes its page when no --html is given: under the ignored
#: results/ folder, never beside the sources
COMPARE_HTML = "results/compare/compare.html"

REPORT_DESCRIPTION = ("Build the HTML report and summary.md from the result CSVs and the "
                      "environment records.")
COMPARE_DESCRIPTION = """\
Run-vs-run comparison: two result sets (two machines, or two dates), every shared
measurement labelled FASTER, SLOWER, SAME (within ±5 %, shown) or UNRESOLVED from the
recorded samples."""


def report_parser() -> argparse.ArgumentParser:
    """The options of ``gpubench report`` (tests check the README's commands with it)."""
    parser = argparse.ArgumentParser(prog="gpubench report", description=REPORT_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=EXAMPLES["report"])
    parser.add_argument("--timings", required=True,
                        help="timings CSV (collected), plain, .gz or .xz")
    parser.add_argument("--env", required=True, help="environment JSON from the probe step")
    parser.add_argument("--html", required=True, help="HTML report to write")
    parser.add_argument("--md", required=True, help="summary.md to write")
    parser.add_argument("--samples", help="raw samples CSV, plain, .gz or .xz (optional: "
                        "without it, comparisons use the quartiles)")
    parser.add_argument("--locks", nargs="*", default=[],
                        help="environment locks of the steps (raw/<backend>.lock.txt)")
    parser.add_argument("--mpi", help="mpi.csv from the MPI steps (absent: 'MPI was not run')")
    parser.add_argument("--mpi-samples", help="mpi_samples.csv (optional)")
    parser.add_argument("--jobs", type=number_in(1, integer=True), default=None,
                        help="processes that draw figures (default: usable cores, max 8)")
    parser.add_argument("--figures", help="folder for the figures' PNGs, linked from the "
                        "Markdown (default: <md stem>_figures beside it)")
    parser.add_argument("--suite", help="the run's suite record (results/suite.json): the "
                        "header says which suite it is and what the full one adds")
    return parser


def compare_parser() -> argparse.ArgumentParser:
    """The options of ``gpubench compare`` (tests check the README's commands with it)."""
    p = argparse.ArgumentParser(prog="gpubench compare", description=COMPARE_DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=EXAMPLES["compare"])
    p.add_argument("--base", required=True, help="results folder or timings CSV (reference)")
    p.add_argument("--new", required=True, help="results folder or timings CSV (compared)")
    p.add_argument("--html", default=COMPARE_HTML,
                   help=f"comparison page to write (default: {COMPARE_HTML})")
    p.add_argument("--md", help="Markdown summary to write (default: none; e.g. "
                   "results/compare/compare.md)")
    p.add_argument("--base-label", help="name of the base set (default: folder and GPU)")
    p.add_argument("--new-label", help="name of the new set")
    p.add_argument("--alpha", type=number_in(0, 1, low_open=True, high_open=True),
                   default=ALPHA, help="significance of the Mann-Whitney test, "
                   f"between 0 and 1 (default {ALPHA})")
    p.add_argument("--min-effect", type=number_in(0), default=MIN_EFFECT,
                   help=f"smallest relative change labelled FASTER/SLOWER, >= 0 "
                   f"(default {MIN_EFFECT})")
    p.add_argument("--jobs", type=number_in(1, integer=True), default=None,
                   help="processes that draw figures")
    return p


def catalog_parser() -> argparse.ArgumentParser:
    """The options of ``gpubench catalog``."""
    parser = argparse.ArgumentParser(
        prog="gpubench catalog", description="Print what is compared: every kernel and "
        "its implementations per framework and device, from the registry.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES["catalog"])
    parser.add_argument("--markdown", action="store_true",
                        help="a Markdown table (the default, and the only format)")
    parser.add_argument("--paste", nargs="+", metavar="FILE", default=[],
                        help="write the table between the catalog markers of each FILE "
                             "instead of printing it")
    return parser
