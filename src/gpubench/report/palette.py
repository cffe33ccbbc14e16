"""Colours and markers shared by the PNG figures (:mod:`gpubench.report.figures`) and
their interactive twins (:mod:`gpubench.report.plots`): both import this module, and
neither needs the other's."""

from __future__ import annotations

from typing import Any

import matplotlib

#: matplotlib markers in the order series get them (plots.SYMBOLS are their Plotly names)
MARKERS = "os^Dv<>ph*"


def colors(n: int) -> Any:
    """The colour map for ``n`` series: tab10, or tab20 past ten."""
    return matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
