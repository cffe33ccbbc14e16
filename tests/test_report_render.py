"""The report's Jinja2 rendering: tables are DataFrames, HTML is autoescaped, Markdown
cells are escaped, and the templates ship with the package."""

from __future__ import annotations

from importlib import resources

from report_data import EVIL

from gpubench.report import render


def test_a_table_frame_renders_escaped_to_html_and_markdown() -> None:
    frame = render.text_table(["backend", "time | s"], [[EVIL, "1.5"], ["a_b", "2"]],
                              numeric={"time | s"}, row_classes=["bad"])
    assert list(frame.columns) == ["backend", "time | s"] and len(frame) == 2
    html = str(render.table_html(frame))
    assert EVIL not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<tr class="bad"><td>&lt;img' in html and '<td class="num">1.5</td>' in html
    assert "<tr><td>a_b</td>" in html  # no class for rows without one
    md = render.table_md(frame)
    assert md.splitlines()[:2] == ["| backend | time \\| s |", "| --- | ---: |"]
    assert "\\<img src=x onerror=alert(1)\\>" in md and "| a_b | 2 |" in md


def test_autoescape_is_on_for_html_and_off_for_markdown() -> None:
    assert render.html_env().autoescape is True
    assert render.md_env().autoescape is False
    page = render.html_env().from_string("<p>{{ x }}</p>").render(x=EVIL)
    assert EVIL not in page


def test_every_template_ships_inside_the_package() -> None:
    names = {p.name for p in resources.files("gpubench.report").joinpath("templates")
             .iterdir()}
    for name in ("page.html.j2", "summary.md.j2", "table.html.j2", "table.md.j2",
                 "summary.html.j2", "details.html.j2", "mpi.html.j2", "matrix.md.j2"):
        assert name in names
        render.html_env().get_template(name)  # parses
