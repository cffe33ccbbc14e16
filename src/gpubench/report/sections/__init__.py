"""The comparison sections, one module each: :mod:`.summary`, :mod:`.speedup`,
:mod:`.ceilings`, :mod:`.crossover`, :mod:`.launch_floor`, :mod:`.allocation`,
:mod:`.threads`, :mod:`.reduced`, :mod:`.block_size`, :mod:`.first_call`, :mod:`.code`
and :mod:`.details` (the per-kernel results, drawn on demand; shared helpers in
:mod:`.common`).

Each module's ``build`` returns the section's data (tables as DataFrames of formatted
cells, sentences, figures to draw); the templates in ``report/templates`` render it to
HTML and Markdown. They read only the prepared timings frame, the attached samples and
the probe's ceilings; code size alone reads the implementations' source in this checkout.
This package re-exports every name, so ``sections.picks_for`` and the like still work.
"""

from __future__ import annotations

from gpubench.report.sections import (
    allocation,
    block_size,
    ceilings,
    code,
    correctness,
    crossover,
    details,
    environment,
    failures,
    first_call,
    kernels,
    launch_floor,
    reduced,
    speedup,
    summary,
    threads,
)
from gpubench.report.sections.ceilings import (
    CEILING_LABELS,
    ceiling_table,
    ceilings_of,
    pct_table,
    roofline_figure,
    roofline_points,
    targets,
    targets_table,
)
from gpubench.report.sections.code import (
    _CU_CALL,
    _code_lines,
    _cu_lines,
    _is_registered,
    code_size,
    code_size_tables,
    implementation_source,
)
from gpubench.report.sections.common import (
    ANALYSIS_COLUMNS,
    BOOK_CROSSOVER,
    CLASS_NAMES,
    TRANSFERS_SUFFIX,
    _cases,
    _group,
    best_per,
    canonical_order,
    figure_drawer,
    figure_queuer,
    first_of_each,
    narrow,
    primary_mode,
    size_classes,
)
from gpubench.report.sections.crossover import (
    NO_CALLER_CLOCK,
    Crossing,
    _loglog,
    cross_curves,
    crossings,
    crossover_headline,
    crossover_table,
)
from gpubench.report.sections.first_call import (
    first_call_backend_table,
    first_call_figure,
    first_call_table,
)
from gpubench.report.sections.launch_floor import (
    _floor_text,
    launch_floor_table,
)
from gpubench.report.sections.speedup import (
    speedup_figure,
    speedup_table,
)
from gpubench.report.sections.summary import (
    _RANK_COLUMNS,
    CLOCK_LABELS,
    CLOCK_MARGIN_S,
    Pick,
    Picks,
    best_table,
    fmt_clocks,
    pick,
    picks_for,
    wins_table,
)

__all__ = [
    "ANALYSIS_COLUMNS",
    "BOOK_CROSSOVER",
    "CEILING_LABELS",
    "CLASS_NAMES",
    "CLOCK_LABELS",
    "CLOCK_MARGIN_S",
    "NO_CALLER_CLOCK",
    "TRANSFERS_SUFFIX",
    "_CU_CALL",
    "_RANK_COLUMNS",
    "Crossing",
    "Pick",
    "Picks",
    "_cases",
    "_code_lines",
    "_cu_lines",
    "_floor_text",
    "_group",
    "_is_registered",
    "_loglog",
    "allocation",
    "best_per",
    "best_table",
    "block_size",
    "canonical_order",
    "ceiling_table",
    "ceilings",
    "ceilings_of",
    "code",
    "code_size",
    "code_size_tables",
    "correctness",
    "cross_curves",
    "crossings",
    "crossover",
    "crossover_headline",
    "crossover_table",
    "details",
    "environment",
    "failures",
    "figure_drawer",
    "figure_queuer",
    "first_call",
    "first_call_backend_table",
    "first_call_figure",
    "first_call_table",
    "first_of_each",
    "fmt_clocks",
    "implementation_source",
    "kernels",
    "launch_floor",
    "launch_floor_table",
    "narrow",
    "pct_table",
    "pick",
    "picks_for",
    "primary_mode",
    "reduced",
    "roofline_figure",
    "roofline_points",
    "size_classes",
    "speedup",
    "speedup_figure",
    "speedup_table",
    "summary",
    "targets",
    "targets_table",
    "threads",
    "wins_table",
]
