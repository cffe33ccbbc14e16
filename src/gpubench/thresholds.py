"""The comparison's significance level and smallest effect that matters, apart from
:mod:`gpubench.report.stats` so that ``gpubench compare --help`` can show them without
loading NumPy and SciPy."""

from __future__ import annotations

#: level of the two-sided Mann-Whitney U test whose inversion gives the ratio's interval
ALPHA = 0.01
#: smallest relative change labelled FASTER or SLOWER (and the bound of SAME)
MIN_EFFECT = 0.05
