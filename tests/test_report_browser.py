"""The report in a real browser: headless Chromium (Debian's ``chromium`` package) loads
it from disk with no network, logs no console message, decodes every image, and a
screenshot is saved under the test's temporary folder."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_data import write_set

from gpubench.report import build_report, compare

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHECK = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
  const noAlt = imgs.filter(i => !(i.getAttribute("alt") || "").trim()).length;
  if (broken) console.error("broken images: " + broken);
  const r = {images: imgs.length, broken, noAlt, text: document.body.innerText.length,
             h2: document.querySelectorAll("h2").length};
  document.body.insertAdjacentHTML("beforeend",
    '<pre id="gpubench-check">' + JSON.stringify(r) + "</pre>");
});
</script>"""


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium: install Debian's package (apt-get install -y "
                "chromium) to run the browser test")


def _run(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
           f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _console(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "CONSOLE" in ln]


def _check_page(browser: str, page: Path, tmp: Path, shot: Path) -> dict[str, int]:
    """Screenshot of the page as is; then a copy with a checking script, its DOM dumped."""
    done = _run(browser, tmp, "--window-size=1280,2400", f"--screenshot={shot}",
                page.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000, done.stderr[-2000:]
    assert _console(done.stderr) == [], _console(done.stderr)
    checked = tmp / f"checked_{page.name}"
    checked.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", CHECK + "</body>"), encoding="utf-8")
    dom = _run(browser, tmp, "--dump-dom", checked.as_uri())
    assert [c for c in _console(dom.stderr) if "broken" in c] == [], dom.stderr[-2000:]
    # the last match: the first is the script's own source text
    found = re.findall(r'<pre id="gpubench-check">(\{.*?\})</pre>', dom.stdout)
    assert found, dom.stdout[-2000:] + dom.stderr[-2000:]
    return json.loads(found[-1])


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = _browser()
    paths = write_set(tmp_path / "in")
    page = tmp_path / "index.html"
    build_report(paths["timings"], paths["env"], page, tmp_path / "summary.md",
                 samples_csv=paths["samples"], mpi_csv=paths["mpi"])
    result = _check_page(browser, page, tmp_path, tmp_path / "report.png")
    assert result["images"] >= 8 and result["broken"] == 0 and result["noAlt"] == 0
    assert result["h2"] >= 10 and result["text"] > 2000


def test_comparison_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = _browser()
    write_set(tmp_path / "base")
    write_set(tmp_path / "new")
    page = tmp_path / "compare.html"
    compare.build_compare(tmp_path / "base", tmp_path / "new", page)
    result = _check_page(browser, page, tmp_path, tmp_path / "compare.png")
    assert result["images"] == 1 and result["broken"] == 0 and result["noAlt"] == 0
