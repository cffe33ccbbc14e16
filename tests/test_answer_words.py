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


# -- the committed H100 evidence, rebuilt ------------------------------------------------------

EVIDENCE = Path(__file__).resolve().parents[1] / "evidence"
#: the front page's run (current files) and the full suite's (an older timings file)
H100 = EVIDENCE / "h100-default-suite"
FULL_H100 = EVIDENCE / "quick-suite-agreement" / "full-h100"


def _rendered(run: Path, out: Path) -> tuple[str, str]:
    """``run`` rendered into ``out`` by its README's rebuild command (``gpubench report
    --timings timings.csv.gz --samples samples.csv.xz --env host.json --locks
    raw/*.lock.txt --html index.html --md report/summary.md``): (HTML, summary.md)."""
    from gpubench.report import main

    assert (run / "timings.csv.gz").exists(), f"the committed evidence is missing: {run}"
    locks = sorted(str(p) for p in (run / "raw").glob("*.lock.txt"))
    assert main(["--timings", str(run / "timings.csv.gz"),
                 "--samples", str(run / "samples.csv.xz"), "--env", str(run / "host.json"),
                 "--locks", *locks, "--html", str(out / "index.html"),
                 "--md", str(out / "report" / "summary.md")]) == 0
    return ((out / "index.html").read_text(encoding="utf-8"),
            (out / "report" / "summary.md").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def h100(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    return _rendered(H100, tmp_path_factory.mktemp("h100"))


@pytest.fixture(scope="module")
def full_h100(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    return _rendered(FULL_H100, tmp_path_factory.mktemp("full-h100"))


def test_the_h100_answer_names_frameworks_not_backend_ids(h100: tuple[str, str]) -> None:
    html, md = h100
    answer = first_section(md)
    assert "## Which framework?" in answer and "CuPy" in answer
    assert JARGON.findall(answer) == []
    text = visible_answer(html)
    assert "Which framework?" in text and "CuPy" in text
    assert JARGON.findall(text) == []
    # the speedups as a researcher says them, the same in both
    assert "CUDA Python 726× faster than NumPy (719–730×)" in answer
    assert "CUDA Python 726× faster than NumPy (719–730×)" in text
    assert "NumPy's speed" not in answer and "NumPy's speed" not in text


def test_the_h100_notices_on_its_older_file_come_after_the_answer_in_words(
        full_h100: tuple[str, str]) -> None:
    """The full suite's timings file predates some columns: that is said below the
    answer, in words (what it lacks, what the report shows instead), with no version
    numbers; the front page's current file gets no such notice."""
    html, md = full_h100
    about = md.split("## About the input files", 1)[1].split("\n## ", 1)[0]
    assert "older gpubench" in about and "precision not recorded" in about
    assert "memory_peak_bytes" in about  # the columns, named last, for whoever checks
    assert "schema" not in about and not re.search(r"\bv\d|\[\d", about)
    assert md.index("## Which framework?") < md.index("## About the input files")
    assert html.index('id="which"') < html.index('id="input-files"') < html.index(
        'id="summary"')


def test_the_h100_figure_legend_names_frameworks(h100: tuple[str, str]) -> None:
    html, md = h100
    assert "## About the input files" not in md  # a current file: nothing to say
    spec = html[html.index('id="which"'):html.index('id="summary"')]
    # the overview is inline SVG, its legend's text as text
    names = re.findall(r'<text[^>]*>([^<]+), on the device</text>', spec)
    assert "CuPy" in names and "PyTorch on GPU" in names, names
    assert not [n for n in names if JARGON.search(n)], names


# -- the speedups, the host ---------------------------------------------------------------------


def test_speedups_are_said_as_faster_or_slower_than_numpy() -> None:
    from gpubench.report.headline import versus

    assert versus(990.4, 928.2, 1002.1) == "990× faster than NumPy (928–1,002×)"
    assert versus(975, 905, 991, "") == "975× faster (905–991×)"
    # a slow-down is the factor it costs, its range turned over with it
    assert versus(0.5, 0.4, 0.625) == "2× slower than NumPy (1.6–2.5×)"


def test_the_probe_records_a_virtual_machine_from_a_real_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from gpubench import probe

    monkeypatch.setattr(shutil, "which", lambda _name: None)  # no systemd-detect-virt
    guest, metal = tmp_path / "guest", tmp_path / "metal"
    guest.write_text("processor\t: 0\nflags\t\t: fpu vme sse2 hypervisor avx\n")
    metal.write_text("processor\t: 0\nflags\t\t: fpu vme sse2 avx\n")
    assert probe.virtual_machine(str(guest)) == {
        "virtual": True, "kind": "", "source": "/proc/cpuinfo hypervisor flag"}
    assert probe.virtual_machine(str(metal))["virtual"] is False
    assert probe.virtual_machine(str(tmp_path / "none"))["virtual"] is None


@pytest.mark.parametrize(("record", "says"), [
    (None, False),  # an older host.json: nothing said, whatever the host's name
    ({"virtual": False, "kind": "", "source": "/proc/cpuinfo hypervisor flag"}, False),
    ({"virtual": None, "kind": "", "source": "none"}, False),
    ({"virtual": True, "kind": "kvm", "source": "systemd-detect-virt --vm"}, True),
])
def test_the_header_says_virtual_machine_only_where_the_probe_recorded_it(
        tmp_path: Path, record: dict[str, object] | None, says: bool) -> None:
    import json

    paths = write_set(tmp_path / "in")
    env = json.loads(paths["env"].read_text())
    env["host"] = "vm"
    if record is not None:
        env["virtual_machine"] = record
    paths["env"].write_text(json.dumps(env))
    html, md = tmp_path / "index.html", tmp_path / "summary.md"
    build_report(paths["timings"], paths["env"], html, md, samples_csv=paths["samples"],
                 workers=1)
    header = md.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "**host** vm" in header
    assert ("virtual machine" in header) is says
    if says:
        assert "**host** vm, a virtual machine (kvm)" in header
        assert "a virtual machine (kvm)" in visible_answer(html.read_text(encoding="utf-8"))
