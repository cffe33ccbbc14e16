"""The interactive figures: every queued drawing function has a Plotly twin with the same
arguments, and the twins' specs of the fixture data are valid Plotly figures (checked
with plotly's own validator, which the report itself skips for speed)."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pytest
from report_data import write_set

from gpubench.report import (
    base,
    compare,
    figures,
    headline,
    load_inputs,
    mpi,
    plots,
    render_html,
    sections,
)


@pytest.fixture(scope="module")
def queued(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, tuple[Any, ...]]]:
    """Every figure the fixture's report and comparison page queue, with its arguments."""
    tmp = tmp_path_factory.mktemp("plots")
    paths = write_set(tmp / "in")
    figs = figures.FigureQueue()
    render_html(load_inputs(paths["timings"], paths["env"], paths["samples"],
                            mpi_csv=paths["mpi"]), figs)
    base_set, new_set = compare.resolve(tmp / "in"), compare.resolve(paths["timings"], "new")
    cmp = compare.compare_sets(base_set, new_set, 0.05, 0.05)
    compare.render_html(base_set, new_set, cmp, 0.05, 0.05, figs)
    return figs.jobs


def test_every_drawing_function_has_a_twin_with_its_arguments() -> None:
    drawers = [base.scaling_figure, sections.speedup_figure, sections.roofline_figure,
               sections.first_call_figure, mpi.scaling_figure, mpi.message_figure,
               compare.ratio_figure, compare.class_figure, headline.overview_figure]
    twins = {plots.builder_for(fn) for fn in drawers}
    assert None not in twins and len(twins) == len(drawers)  # two scaling_figures, apart
    assert twins == set(plots.BUILDERS.values())
    for fn in drawers:
        twin = plots.builder_for(fn)
        assert list(inspect.signature(twin).parameters) == list(
            inspect.signature(fn).parameters), fn.__qualname__


def test_fixture_specs_are_valid_plotly(queued: list[tuple[Any, tuple[Any, ...]]]) -> None:
    names = {fn.__module__.rsplit(".", 1)[-1] + "." + fn.__name__ for fn, _ in queued}
    assert names == {"base.scaling_figure", "speedup.speedup_figure",
                     "ceilings.roofline_figure", "first_call.first_call_figure",
                     "mpi.scaling_figure", "mpi.message_figure", "compare.ratio_figure",
                     "compare.class_figure", "headline.overview_figure"}
    for fn, args in queued:
        spec = plots.builder_for(fn)(*args)
        text = plots.dumps(spec)
        again = json.loads(text)
        assert plots.dumps(plots.builder_for(fn)(*args)) == text  # deterministic
        go.Figure(data=again["data"], layout=again["layout"])  # raises if not valid
        traces = again["data"]
        assert traces and all(t.get("name") for t in traces), fn.__name__
        # every data trace tells its values on hover (roofs and guides may say less)
        assert sum("hovertemplate" in t for t in traces) >= len(traces) - 2
        assert again["layout"]["title"]["text"] or fn.__name__ == "first_call_figure"


def test_scaling_twin_matches_the_png(queued: list[tuple[Any, tuple[Any, ...]]]) -> None:
    """Log axes, one legend entry per series (hiding it in both panels), q1-q3 bars,
    values rounded to six significant digits."""
    args = next(a for f, a in queued if f is base.scaling_figure)
    rows, title = args[0], args[1]
    spec = plots.scaling_figure(*args)
    layout = spec["layout"]
    assert layout["title"]["text"] == title
    assert all(layout[a]["type"] == "log" for a in ("xaxis", "yaxis", "xaxis2", "yaxis2"))
    legend = [t["name"] for t in spec["data"] if t["showlegend"]]
    assert sorted(legend) == sorted(set(rows["series"]))
    for t in spec["data"]:
        assert t["legendgroup"] == t["name"]
        for v in t["y"]:
            assert v is None or float(f"{v:.6g}") == v
    timed = [t for t in spec["data"] if t["yaxis"] == "y"]
    assert timed and all(len(t["error_y"]["array"]) == len(t["x"]) for t in timed)
    hot = rows[(rows["mode"] == "hot") & rows["caller_s"].notna()]
    first = hot.sort_values("size_key").iloc[0]
    trace = next(t for t in timed if t["name"] == first["series"]
                 and t["line"]["dash"] == "solid")
    assert math.isclose(trace["y"][0], float(f"{first['caller_s']:.6g}"))


def test_names_from_results_are_text_not_markup() -> None:
    rows = pd.DataFrame({"group": ["<b>x</b>", "<b>x</b>"], "size_key": [10, 100],
                         "speedup": [0.5, 2.0]})
    spec = plots.speedup_figure(rows, "t", "elements", False)
    text = plots.dumps(spec)
    assert spec["data"][0]["name"] == "&lt;b&gt;x&lt;/b&gt;"
    assert "<" not in text and "</script" not in text
    assert "%{x" in spec["data"][0]["hovertemplate"]


def test_png_fallback_for_a_figure_without_twin(tmp_path: Path) -> None:
    figs = figures.FigureQueue()
    page = figs.render("<html><head></head><body>"
                       + figs.add(_lonely_figure, alt="a lonely figure")
                       + "</body></html>", workers=1)
    assert '<img alt="a lonely figure" src="data:image/png;base64,' in page
    assert "gpubench-plotlyjs" not in page and "table.sortable" in page


def _lonely_figure() -> str:
    fig = figures.new_figure(1.0, 1.0)
    fig.subplots().plot([1, 2], [1, 2])
    return figures.png(fig)


def test_the_speedup_figure_names_the_workshop_books_10000_elements() -> None:
    rows = pd.DataFrame({"group": ["cupy-gpu", "cupy-gpu"], "size_key": [1_000, 100_000],
                         "speedup": [0.5, 2.0]})
    names = {t["name"]: t for t in plots.speedup_figure(rows, "t", "elements", True)["data"]}
    assert names["10,000 elements (workshop book)"]["x"] == [10_000, 10_000]
    plain = plots.speedup_figure(rows, "t", "elements", False)["data"]
    assert [t["name"] for t in plain] == ["cupy-gpu"]


_DRAWN: list[str] = []


def _counted_figure(data: pd.DataFrame, title: str) -> str:
    _DRAWN.append(title)
    fig = figures.new_figure(1.0, 1.0)
    fig.subplots().plot(data["x"], data["y"])
    return figures.png(fig)


def test_write_pngs_keeps_a_png_only_where_its_data_and_code_are_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild from the same data keeps the PNGs already drawn (they would come out the
    same); changed data, a changed file or changed code draw again."""
    one = pd.DataFrame({"x": [1, 2], "y": [1.0, 2.0]})

    def write(data: pd.DataFrame, extra: Any = "b") -> list[bytes]:
        figs = figures.FigureQueue()
        figs.add(_counted_figure, one, "a")
        figs.add(_counted_figure, data, extra)
        return [p.read_bytes() for p in figs.write_pngs(tmp_path, workers=1)]

    _DRAWN.clear()
    first = write(one)
    assert _DRAWN == ["a", "b"] and (tmp_path / figures.KEYS_FILE).is_file()
    _DRAWN.clear()
    assert write(one.copy()) == first and _DRAWN == []  # same data: nothing drawn
    assert write(one.assign(y=[1.0, 3.0])) != first and _DRAWN == ["b"]  # changed data
    _DRAWN.clear()
    write(one.assign(y=[1, 3]))  # the same values as integers: another figure
    assert _DRAWN == ["b"]
    _DRAWN.clear()
    (tmp_path / "fig-001.png").write_bytes(b"not the figure")  # a file changed by hand
    assert write(one.assign(y=[1, 3]))[0] == first[0] and _DRAWN == ["a"]
    _DRAWN.clear()
    monkeypatch.setattr(figures, "code_version", lambda: "other code")
    write(one.assign(y=[1, 3]))  # other code: every figure again
    assert _DRAWN == ["a", "b"]
    _DRAWN.clear()
    write(one, object())  # an argument not hashable by content: always drawn
    write(one, object())
    assert len(_DRAWN) == 2 and all(not isinstance(t, str) for t in _DRAWN)


def test_figure_keys_tell_text_from_numbers() -> None:
    job = (_counted_figure, (pd.DataFrame({"x": [1], "y": ["1"]}), "t"))
    other = (_counted_figure, (pd.DataFrame({"x": [1], "y": [1]}).astype(object), "t"))
    assert figures.figure_key(job) != figures.figure_key(other) is not None


def test_the_drawer_draws_ahead_and_gives_the_same_pngs() -> None:
    """Figures started ahead (by their key) are taken, not drawn again; the PNGs are the
    ones drawn in this process."""
    jobs = [(_counted_figure, (pd.DataFrame({"x": [1, 2], "y": [1.0, float(i)]}), str(i)))
            for i in range(1, 5)]
    with figures.Drawer(2) as drawer:
        drawer.ahead(jobs[:3])
        started = dict(drawer.started)
        assert len(started) == 3
        images = drawer.draw(jobs)
        assert all(drawer.started[figures.figure_key(j)] is started[figures.figure_key(j)]
                   for j in jobs[:3])
    assert drawer.pool is None
    assert images == figures.draw_all(jobs, 1)
