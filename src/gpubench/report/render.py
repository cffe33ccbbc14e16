"""Jinja2 rendering of the report: tables are DataFrames of formatted cells, pages and
sections are templates (``templates/*.html.j2`` and ``*.md.j2``, shipped with the
package).

The HTML environment autoescapes: every value that reaches a template from the inputs
(a backend's name, a reason, an environment field) is text, never markup. Markup built
in Python must say so (:class:`markupsafe.Markup`). The Markdown environment escapes
through the ``md`` filter instead, which keeps pipes from splitting a table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from gpubench.report.stats import ALPHA, MIN_EFFECT

__all__ = ["Figure", "Markup", "html_env", "md_env", "md_esc", "render_html", "render_md",
           "table_html", "table_md", "text_table"]

# Underscores only at word edges: inside words (vector_add) they never mean emphasis.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|&])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_esc(value: Any) -> str:
    """Markdown-escape a cell: pipes cannot split the table and ``<tag>`` stays text."""
    text = " ".join(str(value).split())
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


@dataclass(frozen=True)
class Figure:
    """A figure a section shows: drawn when the page is rendered, as
    ``base.img(figs, alt, fn, *args, cls=cls)`` (``fn`` a module-level drawing function)."""

    alt: str
    fn: Callable[..., str]
    args: tuple[Any, ...]
    cls: str = ""


def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("gpubench.report", "templates"),
                             autoescape=autoescape, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["md"] = md_esc
    env.globals["table"] = table_html if autoescape else table_md
    env.globals["ALPHA"], env.globals["MIN_EFFECT"] = ALPHA, MIN_EFFECT
    return env


_HTML: jinja2.Environment | None = None
_MD: jinja2.Environment | None = None


def html_env() -> jinja2.Environment:
    """The HTML environment (autoescape on), made once."""
    global _HTML
    if _HTML is None:
        _HTML = _env(True)
    return _HTML


def md_env() -> jinja2.Environment:
    """The Markdown environment (cells escaped by the ``md`` filter), made once."""
    global _MD
    if _MD is None:
        _MD = _env(False)
    return _MD


def render_html(template: str, **context: Any) -> Markup:
    return Markup(html_env().get_template(template).render(**context))


def render_md(template: str, **context: Any) -> str:
    return md_env().get_template(template).render(**context)


def text_table(headers: Sequence[str], rows: Iterable[Sequence[Any]],
          numeric: Iterable[str] = (), row_classes: Sequence[str] = ()) -> pd.DataFrame:
    """A table as a DataFrame of formatted cells (text), one column per header.

    ``numeric`` columns are right-aligned in HTML (``attrs["numeric"]``); ``row_classes``
    gives each row an HTML class (``attrs["row_classes"]``: "bad", "good" or "")."""
    headers = list(headers)
    frame = pd.DataFrame([[str(c) for c in r] for r in rows], columns=headers, dtype=object)
    numeric = set(numeric)
    frame.attrs["numeric"] = [h for h in headers if h in numeric]
    frame.attrs["row_classes"] = list(row_classes)
    return frame


def _cells(frame: pd.DataFrame) -> tuple[list[str], list[tuple[Any, ...]], list[bool]]:
    headers = [str(h) for h in frame.columns]
    numeric = set(frame.attrs.get("numeric", ()))
    rows = list(frame.itertuples(index=False, name=None))
    return headers, rows, [h in numeric for h in headers]


def table_html(frame: pd.DataFrame) -> Markup:
    """The table as escaped HTML (the ``table`` macro of ``table.html.j2``)."""
    headers, rows, num = _cells(frame)
    classes = list(frame.attrs.get("row_classes", ()))
    classes += [""] * (len(rows) - len(classes))
    macro = html_env().get_template("table.html.j2").module.table  # type: ignore[attr-defined]
    return Markup(macro(headers, rows, num, classes))


def table_md(frame: pd.DataFrame) -> str:
    """The table as Markdown (the ``table`` macro of ``table.md.j2``)."""
    headers, rows, num = _cells(frame)
    macro = md_env().get_template("table.md.j2").module.table  # type: ignore[attr-defined]
    return str(macro(headers, rows, num))


@pd.api.extensions.register_dataframe_accessor("report")
class TableAccessor:
    """``frame.report.html()`` and ``frame.report.markdown()``: a table DataFrame (see
    :func:`text_table`) rendered by the same macros, for use outside the templates."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def html(self) -> str:
        return str(table_html(self._frame))

    def markdown(self) -> str:
        return table_md(self._frame)
