"""The report in a real browser: headless Chromium (Debian's ``chromium`` package) loads
it from disk with no network, driven over the DevTools protocol on a pipe (no extra
package): no console message or script error, every interactive figure drawn, every
table sortable, and a screenshot under the test's temporary folder. The full H100 page
is measured: its size and the time it takes to open."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from report_data import cases_drawn, details_data, write_set

from gpubench.report import build_report, compare

ROOT = Path(__file__).resolve().parents[1]
#: the largest committed page: the full suite on one H100
H100 = ROOT / "evidence" / "quick-suite-agreement" / "full-h100"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: waits for the page's figures, then reads what the checks need from the DOM
INSPECT = """(async () => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 10));
  // a figure that never draws fails the counts below instead of hanging the test
  if (window.gpubenchPlots) await Promise.race([window.gpubenchPlots,
                                                new Promise(r => setTimeout(r, 90000))]);
  const mark = n => { const e = performance.getEntriesByName(n); return e.length ?
                      e[0].startTime : null; };
  const nav = performance.getEntriesByType("navigation")[0];
  // interactive figures (the first screen's are inline SVG, counted apart)
  const imgs = [...document.images],
        plots = [...document.querySelectorAll("div.plot:not(.static)")];
  return {
    images: imgs.length, broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).length,
    noAlt: imgs.filter(i => !(i.getAttribute("alt") || "").trim()).length
           + plots.filter(d => !(d.getAttribute("aria-label") || "").trim()).length,
    figures: plots.length,
    static: document.querySelectorAll("div.plot.static > svg").length,
    staticNoAlt: [...document.querySelectorAll("div.plot.static")].filter(
      d => !(d.getAttribute("aria-label") || "").trim()).length,
    picks: [...document.querySelectorAll("select.plot-pick")].map(s => s.options.length),
    drawn: plots.filter(d => d.querySelector(".plot-container svg.main-svg")).length,
    traces: document.querySelectorAll("div.plot g.trace").length,
    tables: document.querySelectorAll("table").length,
    sortable: document.querySelectorAll("table.sortable").length,
    text: document.body.innerText.length, h2: document.querySelectorAll("h2").length,
    dcl_ms: nav.domContentLoadedEventEnd, load_ms: nav.loadEventEnd,
    first_screen_ms: mark("gpubench-first-screen"), plotly_ms: mark("gpubench-plotly-ready"),
    all_figures_ms: mark("gpubench-all-figures"),
  };
})()"""

#: clicks (twice) the header of the first column of plain numbers, and of the first
#: column of times in mixed units (ns, µs, ms, s), and reads each column back
SORT = """(() => {
  const find = (test) => {
    for (const table of document.querySelectorAll("table.sortable")) {
      const rows = () => [...table.tBodies[0].rows];
      if (rows().length < 3) continue;
      const col = [...table.tHead.rows[0].cells].findIndex((_, c) =>
        rows().every(r => r.cells[c] && test(r.cells[c].textContent.trim())) &&
        new Set(rows().map(r => r.cells[c].textContent.trim().split(" ")[1])).size > 1 ===
        (test === isTime));
      if (col < 0) continue;
      const texts = () => rows().map(r => r.cells[col].textContent.trim());
      const th = table.tHead.rows[0].cells[col];
      th.click();
      const up = texts();
      th.click();
      return {header: th.textContent, up, down: texts()};
    }
    return null;
  };
  const isNumber = t => /^[\\d,.]+$/.test(t);
  const isTime = t => /^[\\d.]+ (ns|µs|ms|s)$/.test(t);
  return {number: find(isNumber), time: find(isTime)};
})()"""
UNITS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _value(text: str) -> float:
    """A cell as the sort should read it: 1,024 -> 1024; 3.2 ms -> 0.0032."""
    number, _, unit = text.partition(" ")
    return float(number.replace(",", "")) * UNITS.get(unit, 1.0)


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium: install Debian's package (apt-get install -y "
                "chromium) to run the browser test")


class DevTools:
    """Headless Chromium over ``--remote-debugging-pipe``: JSON messages ended by NUL on
    the child's file descriptors 3 (commands in) and 4 (replies and events out)."""

    def __init__(self, browser: str, profile: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        # above 9, so that putting them on 3 and 4 in the child cannot overwrite one
        child_in = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
        os.close(cmd_r)
        os.close(out_w)

        def wire() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--hide-scrollbars", "--window-size=1280,1000",
             f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(child_in)
        os.close(child_out)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._cmd_w)
        os.close(self._out_r)
        self.proc.kill()
        self.proc.wait(timeout=30)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = 120) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._id:
                assert "error" not in reply, (method, reply["error"])
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def problems(self) -> list[str]:
        """Console messages, uncaught exceptions and error log entries, as text."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled":
                out.append(f"console.{p.get('type')}: "
                           + " ".join(str(a.get("value", a.get("description")))
                                      for a in p.get("args", [])))
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails')}")
            elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") in (
                    "error", "warning"):
                out.append(f"log: {p['entry'].get('text')}")
        return out


def _load(dev: DevTools, page: Path, before: str = "") -> str:
    """Open ``page`` in a new tab of ``dev``'s browser, wait for its load event and return
    the tab's session (Page, Runtime and Log enabled). ``before``: a script run in the
    page before any of its own (its listeners come first)."""
    target = dev.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = dev.send("Target.attachToTarget", {"targetId": target,
                                                 "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        dev.send(f"{domain}.enable", session=session)
    if before:
        dev.send("Page.addScriptToEvaluateOnNewDocument", {"source": before}, session)
    dev.send("Page.navigate", {"url": page.as_uri()}, session)
    dev.wait_for("Page.loadEventFired")
    return session


def open_page(page: Path, tmp: Path, shot: Path | None = None,
              sort: bool = False) -> dict[str, Any]:
    """Load ``page`` in a fresh headless Chromium, wait for every figure and inspect it."""
    with DevTools(_browser(), tmp / "profile") as dev:
        session = _load(dev, page)
        result = dev.send("Runtime.evaluate", {"expression": INSPECT, "awaitPromise": True,
                                               "returnByValue": True}, session)
        info = result["result"]["value"]
        if shot is not None:
            data = dev.send("Page.captureScreenshot", {"format": "png"}, session)["data"]
            shot.write_bytes(base64.b64decode(data))
        if sort:
            info["sort"] = dev.send("Runtime.evaluate", {"expression": SORT,
                                                         "returnByValue": True},
                                    session)["result"].get("value")
        info["problems"] = dev.problems()
    return info


def _assert_clean(info: dict[str, Any]) -> None:
    assert info["problems"] == [], info["problems"]
    assert info["broken"] == 0 and info["noAlt"] == 0 and info["staticNoAlt"] == 0, info
    assert info["drawn"] == info["figures"], info
    assert info["sortable"] == info["tables"] > 0, info


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    _browser()
    paths = write_set(tmp_path / "in")
    page = tmp_path / "index.html"
    build_report(paths["timings"], paths["env"], page, tmp_path / "summary.md",
                 samples_csv=paths["samples"], mpi_csv=paths["mpi"])
    shot = tmp_path / "report.png"
    info = open_page(page, tmp_path, shot, sort=True)
    _assert_clean(info)
    assert shot.stat().st_size > 10_000
    assert info["figures"] == page.read_text(encoding="utf-8").count('class="plot-spec"')
    assert info["figures"] >= 3 and info["images"] == 0 and info["traces"] >= info["figures"]
    # the overview drawn at build time; the speedup figures one at a time, per kernel
    assert info["static"] >= 1 and info["picks"] == [2], info
    assert info["h2"] >= 10 and info["text"] > 2000
    for kind in ("number", "time"):  # by value, not as text
        s = info["sort"][kind]
        assert s and len(s["up"]) >= 3, (kind, s)
        up, down = [_value(x) for x in s["up"]], [_value(x) for x in s["down"]]
        assert up == sorted(up) and down == sorted(up, reverse=True), s
        assert s["up"] != sorted(s["up"]) or kind == "number", s  # text order differs


def test_comparison_renders_in_headless_chromium(tmp_path: Path) -> None:
    _browser()
    write_set(tmp_path / "base")
    write_set(tmp_path / "new")
    page = tmp_path / "compare.html"
    compare.build_compare(tmp_path / "base", tmp_path / "new", page)
    info = open_page(page, tmp_path, tmp_path / "compare.png")
    _assert_clean(info)
    # the conclusion's per-class figure first, then the per-backend strip plot
    assert info["figures"] == 2 and info["images"] == 0


def test_full_h100_page_opens_clean_with_every_figure_drawn(tmp_path: Path) -> None:
    """The real suite's page (committed evidence: its absence fails, never skips) opens
    with no console error and draws every figure. Its weight and the times it takes to
    open are figures, printed (pytest -s shows them; `gpubench report` prints the
    weight), never a pass/fail threshold: a loaded machine is slower, not wrong."""
    assert (H100 / "timings.csv.gz").exists(), f"the committed H100 evidence is missing: {H100}"
    _browser()
    page = tmp_path / "index.html"
    build_report(H100 / "timings.csv.gz", H100 / "host.json", page, tmp_path / "summary.md",
                 samples_csv=H100 / "samples.csv.xz",
                 locks=sorted((H100 / "raw").glob("*.lock.txt")))
    size = page.stat().st_size
    n_specs = page.read_text(encoding="utf-8").count('class="plot-spec"')
    info = open_page(page, tmp_path, tmp_path / "h100.png")
    open_s = max(info["load_ms"], info["first_screen_ms"]) / 1000
    print(f"\nH100 page: {size / 1e6:.2f} MB, {info['figures']} figures, "
          f"{info['tables']} tables; DOMContentLoaded {info['dcl_ms'] / 1000:.2f} s, "
          f"first screen drawn {info['first_screen_ms'] / 1000:.2f} s, load "
          f"{info['load_ms'] / 1000:.2f} s, open {open_s:.2f} s, plotly.js ready "
          f"{info['plotly_ms'] / 1000:.2f} s, every figure drawn "
          f"{info['all_figures_ms'] / 1000:.2f} s")
    _assert_clean(info)
    # the per-kernel figures are drawn on demand (one at a time), the speedup figures
    # behind one selector, the first screen's figure inline: each a PNG for summary.md,
    # where the per-kernel figures are one per kernel (its first case)
    text = page.read_text(encoding="utf-8")
    drawn_on_demand = cases_drawn(text)
    data = details_data(text)
    status = data["headers"].index("status") - 7  # the cells after the clock's columns
    kernels = {data["cases"][r[0]]["kernel"] for r in data["rows"] if r[10][status] == "ok"}
    choices, static = text.count('class="plot-choice"'), text.count('class="plot static')
    assert n_specs == info["figures"] and drawn_on_demand >= 40, info
    assert info["picks"] == [choices] and choices >= 10 and static == info["static"] >= 1
    assert len(sorted((tmp_path / "summary_figures").glob("fig-*.png"))) == (
        n_specs - len(info["picks"]) + choices + static + len(kernels))
    assert len(kernels) == 13 < drawn_on_demand


VERDICTS_H100 = ROOT / "evidence" / "h100-default-suite"
#: the first screen: a laptop-sized window
VIEWPORT = (1400, 900)

#: positions (CSS px, relative to the first viewport) and texts of what the first
#: screen must show, and every table's width once all folds are open
FIRST_SCREEN = """(async () => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 10));
  if (window.gpubenchFirstScreen) await Promise.race([window.gpubenchFirstScreen,
                                                      new Promise(r => setTimeout(r, 90000))]);
  const box = e => { if (!e) return null; const b = e.getBoundingClientRect();
                     return {left: b.left, top: b.top, right: b.right, bottom: b.bottom}; };
  const textBox = (root, needle) => {
    if (!root) return null;
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const i = n.data.indexOf(needle);
      if (i >= 0) { const r = document.createRange(); r.setStart(n, i);
                    r.setEnd(n, i + needle.length); return box(r); }
    }
    return null;
  };
  const header = document.querySelector("header.machine");
  const rec = document.querySelector("ul.recommendations li");
  const plot = document.querySelector("figure.overview div.plot");
  // drawn at build time as inline SVG (matplotlib's): the axes' background patch is
  // the rectangle the axes enclose, their direct line2d groups the data lines
  const svg = plot && plot.querySelector("svg");
  const axes = svg && svg.querySelector("g[id^=axes_]");
  const area = axes && axes.querySelector(":scope > g[id^=patch_]");
  const lines = axes ? [...axes.querySelectorAll(":scope > g[id^=line2d_] > path")] : [];
  const method = document.querySelector("details.method");
  const out = {
    header: box(header), headerText: header ? header.innerText : "",
    gpu: textBox(header && header.querySelector(".machine-line"), "NVIDIA H100"),
    rec: box(rec), recText: rec ? rec.innerText : "",
    recs: document.querySelectorAll("ul.recommendations li").length,
    plot: box(plot), area: box(area),
    traces: lines.length,
    dashed: lines.filter(p => /stroke-dasharray/.test(p.getAttribute("style") || "")).length,
    legend: svg ? [...svg.querySelectorAll("g[id^=legend_] text")].map(
      t => t.textContent) : [],
    // drawn before any script: no interactive figure on the first screen waits for
    // plotly.js
    scripted: [...document.querySelectorAll("div.plot:not(.static)")].filter(d => {
      const b = d.getBoundingClientRect(); return b.top < innerHeight && b.bottom > 0;
    }).length,
    compact: box(document.getElementById("matrix")),
    compactCols: (() => { const t = document.querySelector("#matrix + .compact table");
      return t ? t.rows[0].cells.length : 0; })(),
    methodOpen: method ? method.open : null,
    navShown: (() => { const n = document.querySelector("nav"); return !!n &&
      n.checkVisibility() && n.getBoundingClientRect().height > 0; })(),
    alerts: [...document.querySelectorAll("div.alert")].map(a => a.innerText),
    pageWidth: document.documentElement.scrollWidth,
  };
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  document.querySelectorAll("table").forEach(t => { t.style.contentVisibility = "visible"; });
  await new Promise(r => setTimeout(r, 100));
  out.wide = [...document.querySelectorAll("table")].filter(
    t => t.scrollWidth > t.clientWidth + 1).map(t => t.rows[0].innerText.slice(0, 80));
  out.tables = document.querySelectorAll("table").length;
  out.openWidth = document.documentElement.scrollWidth;
  return out;
})()"""


def first_screen(page: Path, tmp: Path, shot: Path | None = None) -> dict[str, Any]:
    """Open ``page`` at :data:`VIEWPORT`, wait for the first screen's figures, read
    :data:`FIRST_SCREEN` and (first) screenshot the first viewport to ``shot``."""
    width, height = VIEWPORT
    with DevTools(_browser(), tmp / "profile-first") as dev:
        target = dev.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = dev.send("Target.attachToTarget", {"targetId": target,
                                                     "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            dev.send(f"{domain}.enable", session=session)
        dev.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session)
        dev.send("Page.navigate", {"url": page.as_uri()}, session)
        dev.wait_for("Page.loadEventFired")
        ready = ("(async () => { while (document.readyState !== 'complete') await new "
                 "Promise(r => setTimeout(r, 10)); if (window.gpubenchFirstScreen) await "
                 "window.gpubenchFirstScreen; return true; })()")
        dev.send("Runtime.evaluate", {"expression": ready, "awaitPromise": True}, session)
        if shot is not None:
            data = dev.send("Page.captureScreenshot", {"format": "png", "clip": {
                "x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                session)["data"]
            shot.write_bytes(base64.b64decode(data))
        info = dev.send("Runtime.evaluate", {"expression": FIRST_SCREEN, "awaitPromise": True,
                                             "returnByValue": True}, session)
        out = info["result"]["value"]
        out["problems"] = dev.problems()
    return out


def _inside(box: dict[str, float] | None) -> bool:
    width, height = VIEWPORT
    return bool(box) and box["left"] >= 0 and box["top"] >= 0 and (
        box["right"] <= width and box["bottom"] <= height and box["right"] > box["left"]
        and box["bottom"] > box["top"])


def test_the_first_viewport_answers_the_question(tmp_path: Path) -> None:
    """At 1400×900, without scrolling, the H100 page shows in this order the
    machine (its GPU named), the first recommendation and the overview figure's drawing
    area, with the compact matrix starting below them; the method is one click away, the
    banners name what they warn about, and no table is wider than the page, folds open.
    $GPUBENCH_FIRST_VIEWPORT_PNG, when set, receives the screenshot of that viewport."""
    assert (VERDICTS_H100 / "timings.csv.gz").exists(), \
        f"committed evidence missing: {VERDICTS_H100}"
    _browser()
    page = tmp_path / "index.html"
    build_report(VERDICTS_H100 / "timings.csv.gz", VERDICTS_H100 / "host.json", page,
                 tmp_path / "summary.md", samples_csv=VERDICTS_H100 / "samples.csv.xz",
                 locks=sorted((VERDICTS_H100 / "raw").glob("*.lock.txt")))
    shot = Path(os.environ.get("GPUBENCH_FIRST_VIEWPORT_PNG") or tmp_path / "first.png")
    info = first_screen(page, tmp_path, shot)
    assert info["problems"] == [], info["problems"]
    # the machine, named before anything else
    assert _inside(info["header"]) and info["header"]["top"] < 60, info["header"]
    assert _inside(info["gpu"]), info
    for part in ("1 × NVIDIA H100 80GB HBM3", "Intel(R) Xeon(R) Processor, 16 cores",
                 "NumPy 2.5.2", "CuPy 14.2.0", "JAX 0.11.2", "PyTorch 2.11.0", "Numba 0.68.0",
                 "CUDA Python 13.3.1", "2026-11-28", "e099b11"):
        assert part in info["headerText"], part
    # the answer: the first recommendation, then the figure, both in the first viewport
    assert _inside(info["rec"]) and info["rec"]["top"] > info["header"]["bottom"], info
    assert info["recText"].startswith("Elementwise") and "CuPy" in info["recText"]
    # no framework is surely faster than the others: the leaders with their ranges, and
    # each one's crossover against the run's one CPU reference (frameworks by name)
    assert ("CUDA Python 726× faster than NumPy (719–730×), CuPy 725× faster (718–729×) or "
            "PyTorch on GPU 693× faster (498–732×)" in info["recText"]), info["recText"]
    assert "the CPU below ≈ 1,700–13,000 elements" in info["recText"] and (
        "120,000–520,000 with host transfers" in info["recText"])
    assert info["recs"] >= 4
    assert _inside(info["plot"]) and _inside(info["area"]), info
    assert info["area"]["top"] > info["header"]["bottom"]
    assert info["area"]["left"] >= info["rec"]["right"] or (
        info["area"]["top"] >= info["rec"]["bottom"]), (info["rec"], info["area"])
    # one line per GPU framework on the device and one with transfers, crossovers marked
    assert info["dashed"] >= 5 and info["traces"] >= 10 + 1, info
    assert info["scripted"] == 0, info
    assert sum(t.endswith("on the device") for t in info["legend"]) == 5, info["legend"]
    assert sum("+ transfers, measured" in t for t in info["legend"]) == 1, info["legend"]
    # the compact matrix follows the recommendations and the figure (the first viewport
    # holds those two; eight classes of answer can push the matrix just below it), at
    # most eight columns; the method is folded
    assert info["compact"]["top"] > info["area"]["bottom"]
    assert info["compact"]["top"] > info["rec"]["top"] and info["compact"]["top"] < 2 * 900
    assert 2 <= info["compactCols"] <= 8, info["compactCols"]
    assert info["methodOpen"] is False and not info["navShown"]
    # banners name what they warn about
    wrong = next(a for a in info["alerts"] if "wrong result" in a)
    assert "PyTorch on GPU linalg/eigh float32 eager at n = 512" in wrong, wrong
    refused = next(a for a in info["alerts"] if "rows implausible (" in a)
    assert "CuPy launch_overhead/add_one float32 array_ops" in refused, refused
    # tables that fit: none wider than the page, every fold open
    assert info["pageWidth"] <= VIEWPORT[0] and info["openWidth"] <= VIEWPORT[0], info
    # the default suite: ~33, the per-kernel results' one among them
    assert info["wide"] == [] and info["tables"] > 25, info["wide"]
    assert 0 < shot.stat().st_size < 400_000


#: the detail view before and after each selection: its figure's title, legend and
#: traces, its table's header and rows
DETAIL = """(async (picks) => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 10));
  const view = () => { const plot = document.getElementById("detail-plot");
    return {title: (plot.querySelector(".gtitle") || {}).textContent || "",
            legend: [...plot.querySelectorAll("g.legend text.legendtext")].map(
              t => t.textContent),
            traces: plot.querySelectorAll("g.trace").length,
            ys: JSON.stringify((plot.data || []).map(t => t.y)),
            header: [...document.querySelectorAll("#detail-table th")].map(
              t => t.textContent),
            rows: document.querySelectorAll("#detail-table tbody tr").length,
            kernels: [...document.getElementById("detail-kernel").options].map(
              o => o.value),
            frameworks: [...document.getElementById("detail-framework").options].map(
              o => o.value)}; };
  await window.gpubenchDetails.drawn;
  const out = [view()];
  for (const [name, value] of picks) {
    const select = document.getElementById("detail-" + name);
    select.value = value === "@second" ? select.options[1].value : value;
    select.dispatchEvent(new Event("change"));
    await window.gpubenchDetails.drawn;
    out.push(view());
  }
  return out;
})"""


def test_a_detail_selector_changes_the_figure(tmp_path: Path) -> None:
    """The per-kernel results are one figure and one table: choosing another kernel
    redraws the figure with that kernel's lines, a framework filter keeps only its
    lines and rows, the clock selector changes the time column; no console error."""
    _browser()
    paths = write_set(tmp_path / "in")
    page = tmp_path / "index.html"
    build_report(paths["timings"], paths["env"], page, tmp_path / "summary.md",
                 samples_csv=paths["samples"], mpi_csv=paths["mpi"])
    picks = [["kernel", "@second"], ["framework", "device:cpu"], ["clock", "device"]]
    with DevTools(_browser(), tmp_path / "profile-detail") as dev:
        session = _load(dev, page)
        views = dev.send("Runtime.evaluate", {
            "expression": f"({DETAIL})({json.dumps(picks)})", "awaitPromise": True,
            "returnByValue": True}, session)["result"]["value"]
        problems = dev.problems()
    assert problems == [], problems
    first, kernel, cpu, device = views
    assert first["kernels"][:2] == ["vector_add", "matmul"] and first["traces"] > 0
    assert first["title"].startswith("vector_add · ") and first["rows"] > 0
    # another kernel: another figure
    assert kernel["title"].startswith("matmul · "), kernel["title"]
    assert kernel["ys"] != first["ys"] and kernel["traces"] > 0
    # the CPU frameworks alone: fewer lines and rows, none of a GPU backend
    assert "device:gpu" in kernel["frameworks"]
    assert 0 < cpu["traces"] < kernel["traces"] and 0 < cpu["rows"] < kernel["rows"]
    assert all("-gpu" not in name for name in cpu["legend"]), cpu["legend"]
    # the device clock: the table's time column says so
    assert "median (pipelined)" in cpu["header"] and "median (device)" in device["header"]
    assert device["rows"] == cpu["rows"] and device["traces"] == cpu["traces"]


#: a reader who picks the second kernel on the load event, before the page's own load
#: listeners run (so before plotly.js is even asked for)
EARLY_PICK = """window.addEventListener("load", () => {
  const select = document.getElementById("detail-kernel");
  select.value = select.options[1].value;
  window.gpubenchEarly = {plotlyAbsent: typeof window.Plotly === "undefined"};
  select.dispatchEvent(new Event("change"));
  window.gpubenchEarly.shown = window.gpubenchDetails.shown;
});"""

#: the detail view's figure once that selection is shown, then once it is interactive
EARLY_VIEW = """(async () => {
  while (!window.gpubenchEarly) await new Promise(r => setTimeout(r, 10));
  await window.gpubenchEarly.shown;
  const plot = document.getElementById("detail-plot");
  const svg = plot.querySelector(":scope > svg.detail-sketch");
  const sketch = svg && {plotlyAbsent: typeof window.Plotly === "undefined",
    title: svg.querySelector("text").textContent,
    lines: svg.querySelectorAll("g.sketch-line polyline").length,
    points: svg.querySelectorAll("g.sketch-line circle").length,
    ticks: [...svg.querySelectorAll("text")].filter(t => /^10/.test(t.textContent)).length};
  await window.gpubenchDetails.drawn;
  return {early: window.gpubenchEarly, sketch,
          after: {title: (plot.querySelector(".gtitle") || {}).textContent || "",
                  traces: plot.querySelectorAll("g.trace").length,
                  sketchLeft: plot.querySelectorAll("svg.detail-sketch").length}};
})()"""


def test_a_detail_selection_before_plotly_is_ready_shows_its_figure(tmp_path: Path) -> None:
    """plotly.js compiles for seconds after the page opens: a kernel chosen on the load
    event shows its figure at once as inline SVG (its title, its lines, log ticks), and
    the interactive figure of the same choice replaces it once plotly.js is ready."""
    _browser()
    paths = write_set(tmp_path / "in")
    page = tmp_path / "index.html"
    build_report(paths["timings"], paths["env"], page, tmp_path / "summary.md",
                 samples_csv=paths["samples"], mpi_csv=paths["mpi"])
    with DevTools(_browser(), tmp_path / "profile-early") as dev:
        session = _load(dev, page, before=EARLY_PICK)
        out = dev.send("Runtime.evaluate", {"expression": EARLY_VIEW, "awaitPromise": True,
                                            "returnByValue": True}, session)["result"]["value"]
        problems = dev.problems()
    assert problems == [], problems
    assert out["early"]["plotlyAbsent"] is True, out
    sketch = out["sketch"]
    assert sketch is not None and sketch["plotlyAbsent"] is True, out
    assert sketch["title"].startswith("matmul · "), sketch
    assert sketch["lines"] > 0 and sketch["points"] >= sketch["lines"], sketch
    assert sketch["ticks"] >= 4, sketch  # decades on both axes of both panels
    after = out["after"]
    assert after["title"] == sketch["title"] and after["sketchLeft"] == 0, out
    assert after["traces"] == sketch["lines"], out


#: the speedup section's one figure: its title before and after choosing the second
#: kernel of its selector (redrawn by Plotly.react)
PICK = """(async () => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 10));
  await window.gpubenchPlots;
  const select = document.querySelector("select.plot-pick");
  const plot = document.getElementById(select.id + "-plot");
  const title = () => (plot.querySelector(".gtitle") || {}).textContent || "";
  const before = {title: title(), label: plot.getAttribute("aria-label")};
  select.value = select.options[1].value;
  select.dispatchEvent(new Event("change"));
  for (let i = 0; i < 500 && title() === before.title; i++)
    await new Promise(r => setTimeout(r, 20));
  return {options: [...select.options].map(o => o.textContent), before,
          after: {title: title(), label: plot.getAttribute("aria-label")},
          plots: document.querySelectorAll("div.plot.speedup").length};
})()"""


def test_the_speedup_selector_redraws_its_one_figure(tmp_path: Path) -> None:
    """The speedup section holds one figure, not one per kernel: choosing another
    kernel draws that kernel's figure in its place, with its own alt text."""
    _browser()
    paths = write_set(tmp_path / "in")
    page = tmp_path / "index.html"
    build_report(paths["timings"], paths["env"], page, tmp_path / "summary.md",
                 samples_csv=paths["samples"], mpi_csv=paths["mpi"])
    with DevTools(_browser(), tmp_path / "profile-pick") as dev:
        session = _load(dev, page)
        out = dev.send("Runtime.evaluate", {"expression": PICK, "awaitPromise": True,
                                            "returnByValue": True}, session)["result"]["value"]
        problems = dev.problems()
    assert problems == [], problems
    assert out["plots"] == 1 and len(out["options"]) == 2, out
    first, second = (o.split(" · ")[0] for o in out["options"])
    assert out["before"]["title"].startswith(first), out
    assert out["after"]["title"].startswith(second), out
    assert second in out["after"]["label"] and out["after"]["label"] != out["before"]["label"]
