"""The report's sections, listed once: the analysis builds them in this order, the table
of contents links them and the page and ``summary.md`` render them, all from
:data:`SECTIONS`. A section added here appears in all four; one left out, in none.

"Which framework?", the notes on the input files and the per-kernel results stand
before these sections on the page; they are the page's own parts, not sections.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpubench.report import sections


def _always(_data: Any) -> bool:
    return True


@dataclass(frozen=True)
class Section:
    """One section of the report."""

    #: its data's key in ``Inputs.sections`` (the templates read it as ``s``)
    key: str
    #: its id on the page, which the table of contents links
    anchor: str
    #: its name in the table of contents
    title: str
    #: the analysis: the section's data from the report's inputs
    #: (:class:`gpubench.report.Inputs`)
    build: Callable[[Any], Any]
    #: the page's template for it; '' where the page is handed it rendered (``parts``)
    html: str
    #: its piece of ``summary.md``; '' where ``summary.md`` leaves it out
    md: str = ""
    #: whether the page shows it, from its data (listed in the table of contents)
    shown: Callable[[Any], bool] = _always


SECTIONS: tuple[Section, ...] = (
    Section("summary", "summary", "Summary",
            lambda i: sections.summary.build(i.df, i.picks, i.device_picks),
            "summary.html.j2", "section_summary.md.j2"),
    Section("speedup", "speedup", "Speedup", lambda i: sections.speedup.build(i.df),
            "speedup.html.j2", "section_speedup.md.j2"),
    Section("ceilings", "ceilings", "Ceilings and roofline",
            lambda i: sections.ceilings.build(i.df, i.env.data),
            "ceilings.html.j2", "section_targets.md.j2"),
    Section("crossover", "crossover", "Crossover",
            lambda i: sections.crossover.build(i.df, i.crossings),
            "crossover.html.j2", "section_crossover.md.j2"),
    Section("launch_floor", "launch-floor", "Launch floor",
            lambda i: sections.launch_floor.build(i.df),
            "launch_floor.html.j2", "section_launch_floor.md.j2"),
    Section("allocation", "allocation-loop", "Allocating in a loop",
            lambda i: sections.allocation.build(i.df),
            "allocation.html.j2", "section_allocation.md.j2",
            shown=lambda s: s.table is not None),
    Section("threads", "threads", "Threads", lambda i: sections.threads.build(i.df),
            "threads.html.j2", "section_threads.md.j2", shown=lambda s: s.table is not None),
    Section("reduced", "reduced-precision", "Reduced precision",
            lambda i: sections.reduced.build(i.df), "reduced.html.j2",
            "section_reduced.md.j2", shown=lambda s: s.table is not None),
    Section("block_size", "block-size", "Block size",
            lambda i: sections.block_size.build(i.df),
            "block_size.html.j2", "section_block_size.md.j2",
            shown=lambda s: s.table is not None),
    Section("first_call", "first-call", "First call",
            lambda i: sections.first_call.build(i.df),
            "first_call.html.j2", "section_first_call.md.j2"),
    Section("correctness", "correctness", "Correctness",
            lambda i: sections.correctness.build(i.df), "correctness.html.j2"),
    Section("code", "code-size", "Code size", lambda i: sections.code.build(i.df),
            "code_size.html.j2", "section_code_size.md.j2"),
    # drawn with the page's figure queue: the page is handed it rendered
    Section("mpi", "mpi", "MPI", lambda i: i.mpi, "", "section_mpi.md.j2"),
    Section("failures", "failures", "Failures and skips",
            lambda i: sections.failures.build(i.df),
            "failures.html.j2", "section_failures.md.j2"),
    Section("environment", "environment", "Environment",
            lambda i: sections.environment.build(i.df, i.env, i.timings_name,
                                                 i.samples.note),
            "environment.html.j2", "section_environment.md.j2"),
)


def built(inputs: Any) -> dict[str, Any]:
    """Every section's data, built in :data:`SECTIONS`' order."""
    return {sec.key: sec.build(inputs) for sec in SECTIONS}


def toc(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(anchor, title) of each section the page shows."""
    return [(sec.anchor, sec.title) for sec in SECTIONS if sec.shown(data[sec.key])]
