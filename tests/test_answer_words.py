"""The pages people read first speak a reader's words: the report's answer (its first
section, in summary.md and in the HTML's visible text) names frameworks, not backend
ids, schema versions or module paths; the comparison's first line is a verdict."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_data import write_set

from gpubench.backends import BACKENDS, reader_name
from gpubench.report import build_report, compare

#: what a reader of the answer should never meet: a backend id, a schema version, a
#: module path or file name of the code
JARGON = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, BACKENDS)) + r")(?![\w-])"
                    r"|schema|\bgpubench\.\w|\b\w+\.py\b")
VERDICT = re.compile(r"\b(faster|slower|the same|too close to call)\b")


class _Visible(HTMLParser):
    """The text a browser shows before the page's second section (its second <h2>),
    folded (<details>) blocks left out but for their summaries."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0
        self._h2 = 0
        self._summary = False
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            self._h2 += 1
            self.done = self.done or self._h2 > 1
        if tag in ("script", "style", "template", "details"):
            self._skip += 1
        self._summary = self._summary or tag == "summary"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template", "details"):
            self._skip -= 1
        if tag == "summary":
            self._summary = False

    def handle_data(self, data: str) -> None:
        if not self.done and (not self._skip or self._summary):
            self.parts.append(data)


def visible_answer(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    return " ".join(parser.parts)


def first_section(md: str) -> str:
    """summary.md up to its second level-2 heading: the title, the header and the
    answer ("Which framework?")."""
    heads = [m.start() for m in re.finditer(r"^## ", md, re.M)]
    return md[:heads[1]] if len(heads) > 1 else md


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    tmp = tmp_path_factory.mktemp("answer")
    paths = write_set(tmp / "in")
    html, md = tmp / "index.html", tmp / "summary.md"
    build_report(paths["timings"], paths["env"], html, md, samples_csv=paths["samples"],
                 mpi_csv=paths["mpi"], workers=1)
    return html.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")


def test_reader_names_come_from_the_backend_classes() -> None:
    assert reader_name("cupy-gpu") == "CuPy"
    assert reader_name("torch-gpu") == "PyTorch on GPU"
    assert reader_name("numba-cpu") == "Numba on CPU"
    assert reader_name("not-a-backend") == "not-a-backend"


def test_the_answer_in_summary_md_has_no_jargon(report: tuple[str, str]) -> None:
    _, md = report
    answer = first_section(md)
    assert "## Which framework?" in answer and "CuPy" in answer
    assert JARGON.findall(answer) == []
    assert "not separable" not in answer


def test_the_answer_in_the_html_has_no_jargon(report: tuple[str, str]) -> None:
    html, _ = report
    text = visible_answer(html)
    assert "Which framework?" in text and "CuPy" in text
    assert JARGON.findall(text) == []


def test_the_jargon_check_fails_on_a_backend_id() -> None:
    assert JARGON.findall("choose cupy-gpu (see gpubench.report, schema v7)") == [
        "cupy-gpu", "gpubench.r", "schema"] or JARGON.search("choose cupy-gpu")


def test_the_comparison_opens_on_a_verdict(tmp_path: Path) -> None:
    write_set(tmp_path / "base")
    write_set(tmp_path / "new")
    out = tmp_path / "cmp.html"
    compare.build_compare(tmp_path / "base", tmp_path / "new", out, tmp_path / "cmp.md",
                          workers=1)
    md = (tmp_path / "cmp.md").read_text(encoding="utf-8")
    first = next(x for x in md.splitlines() if x.strip() and not x.startswith("#"))
    assert " vs " in first and VERDICT.search(first) and "memory-bound work" in first
    assert "÷" not in first
    text = visible_answer(out.read_text(encoding="utf-8"))
    body = text.split("gpubench run-vs-run comparison", 1)[1].strip()
    assert body.startswith(first.strip("*"))
