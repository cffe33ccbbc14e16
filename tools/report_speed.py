#!/usr/bin/env python3
"""How fast is the report, to build and to read? Builds the report of each committed run
given (the `gpubench report` command, twice: into an empty folder, where every PNG of
summary.md is drawn, then again, where they are kept) and opens each page in headless
Chromium (Debian's ``chromium``, driven as the browser tests drive it) at 1400×900:

- the answer page's height before the per-kernel results, in 900 px screens;
- its time to interactive: the load event, and the first screen's figures drawn (inline
  SVG, or interactive figures that wait for plotly.js);
- the detail view: when plotly.js (compiled after the load event) is ready and its first
  figure drawn; a selection made at once on opening, and its time to its figure on
  screen (the inline SVG drawn while plotly.js compiles) and interactive; then
  for each of a few selections (another kernel, dtype, framework, clock, and the first
  again), the time from the selector's change to its figure drawn, with the number of
  rows its table shows;
- the page's weight, and each build's wall time.

The host's 1-minute load average before and after each measurement is printed beside it:
on a shared machine every figure here moves with the load. Timings are medians of
``--repeat`` page openings. ``--shot PNG`` writes a 1400×900 screenshot of the detail
view after the first selection (``--shot-kernel`` picks the kernel). Run from the
repository root:

    PYTHONPATH=src python tools/report_speed.py evidence/quick-suite-agreement/full-h100 \\
        evidence/h100-default-suite --out evidence/report-speed/measured.md

Exit status: 0, or 2 where a run folder or the browser is missing.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the browser tests' DevTools client

from test_report_browser import DevTools, _browser  # noqa: E402

VIEWPORT = (1400, 900)

#: waits for the load event and the first screen's figures; the page's height above the
#: detail view; the first selection made at once (a reader who goes straight to the
#: detail view: its figure waits for plotly.js), then each other selection's time to its
#: figure drawn
MEASURE = """(async (picks) => {
  while (document.readyState !== "complete") await new Promise(r => setTimeout(r, 10));
  const picked = performance.now();
  let early = null;
  if (window.gpubenchDetails && picks.length) {
    const select = document.getElementById("detail-" + picks[0][0]);
    select.value = picks[0][1];
    select.dispatchEvent(new Event("change"));
    if (window.gpubenchDetails.shown) {  // report code that draws an SVG first
      await window.gpubenchDetails.shown;
      // on screen: the frame after it painted (a compiling plotly.js delays it)
      await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
      early = {shown_ms: performance.now() - picked,
               svg: !!document.querySelector("#detail-plot > svg.detail-sketch")};
    }
  }
  if (window.gpubenchFirstScreen) await window.gpubenchFirstScreen;
  const mark = n => { const e = performance.getEntriesByName(n); return e.length ?
                      e[0].startTime : null; };
  const nav = performance.getEntriesByType("navigation")[0];
  const details = document.getElementById("details");
  const out = {load_ms: nav.loadEventEnd, dcl_ms: nav.domContentLoadedEventEnd,
               first_screen_ms: mark("gpubench-first-screen"),
               first_screen_plots: [...document.querySelectorAll("div.plot:not(.static)")]
                 .filter(d => { const b = d.getBoundingClientRect();
                                return b.top < innerHeight && b.bottom > 0; }).length,
               first_screen_svgs: [...document.querySelectorAll("div.plot.static")]
                 .filter(d => d.getBoundingClientRect().top < innerHeight).length,
               above_details_px: details ? details.getBoundingClientRect().top + scrollY
                                         : null,
               page_px: document.documentElement.scrollHeight, picks: [],
               figures: document.querySelectorAll("div.plot").length};
  if (!window.gpubenchDetails) return out;
  await window.gpubenchDetails.drawn;
  out.plotly_ms = mark("gpubench-plotly-ready");
  out.detail_first_ms = mark("gpubench-detail-drawn");
  if (picks.length) {
    out.early = Object.assign({what: picks[0][0] + " = " + picks[0][1], at_ms: picked,
                               ms: performance.now() - picked}, early || {});
    picks = picks.slice(1);
  }
  details.scrollIntoView();
  for (const pick of picks) {
    const t0 = performance.now();
    const select = document.getElementById("detail-" + pick[0]);
    select.value = pick[1];
    select.dispatchEvent(new Event("change"));
    await window.gpubenchDetails.drawn;
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    out.picks.push({what: pick[0] + " = " + pick[1], ms: performance.now() - t0,
      traces: document.querySelectorAll("#detail-plot g.trace").length,
      rows: document.querySelectorAll("#detail-table tbody tr").length});
  }
  details.scrollIntoView();
  return out;
})"""


def load() -> float:
    return os.getloadavg()[0]


def build(run: Path, out: Path, src: Path) -> float:
    """`gpubench report` (the package in ``src``) on a committed run into ``out``; its
    wall time in seconds."""
    timings = next(p for p in (run / "timings.csv.gz", run / "timings.csv") if p.exists())
    args = [sys.executable, "-m", "gpubench", "report", "--timings", str(timings),
            "--env", str(run / "host.json"), "--html", str(out / "index.html"),
            "--md", str(out / "summary.md")]
    samples = run / "samples.csv.xz"
    if samples.exists():
        args += ["--samples", str(samples)]
    if (run / "suite.json").exists():
        args += ["--suite", str(run / "suite.json")]
    locks = sorted((run / "raw").glob("*.lock.txt"))
    if locks:
        args += ["--locks", *map(str, locks)]
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def picks_for(page: Path) -> list[list[str]]:
    """Selections that change the view: the second kernel, the second dtype of the
    first kernel's, GPU frameworks only, the device clock."""
    text = page.read_text(encoding="utf-8")
    start = text.index('id="gpubench-details-data">') + len('id="gpubench-details-data">')
    data = json.loads(text[start:text.index("</script>", start)])
    kernels = list(dict.fromkeys(c["kernel"] for c in data["cases"]))
    out = []
    if len(kernels) > 1:
        out.append(["kernel", kernels[1]])
    first = [c for c in data["cases"] if c["kernel"] == (kernels[1] if len(kernels) > 1
                                                          else kernels[0])]
    dtypes = list(dict.fromkeys(c["dtype"] for c in first))
    if len(dtypes) > 1:
        out.append(["dtype", dtypes[1]])
    if any(b[2] == "gpu" for b in data["backends"]):
        out.append(["framework", "device:gpu"])
    out.append(["clock", "device"])
    return out


def open_page(page: Path, tmp: Path, picks: list[list[str]], shot: Path | None,
              shot_pick: list[str] | None) -> dict[str, Any]:
    width, height = VIEWPORT
    with DevTools(_browser(), tmp / f"profile-{time.monotonic_ns()}") as dev:
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
        todo = picks if shot_pick is None else [shot_pick]
        info = dev.send("Runtime.evaluate", {
            "expression": f"({MEASURE})({json.dumps(todo)})", "awaitPromise": True,
            "returnByValue": True}, session)["result"]["value"]
        if shot is not None:
            data = dev.send("Page.captureScreenshot", {"format": "png"}, session)["data"]
            shot.write_bytes(base64.b64decode(data))
        info["problems"] = dev.problems()
    return info


def measure(run: Path, repeat: int, shot: Path | None, shot_kernel: str | None,
            src: Path) -> str:
    lines = [f"### {run.relative_to(ROOT) if run.is_relative_to(ROOT) else run}", ""]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        before = load()
        cold = build(run, tmp, src)
        warm = build(run, tmp, src)
        page = tmp / "index.html"
        rows_csv = tmp / "index-rows.csv"
        lines += [f"- build, figures folder empty (every PNG of summary.md drawn): "
                  f"**{cold:.1f} s**; again, PNGs kept: **{warm:.1f} s** (load "
                  f"{before:.2f} before, {load():.2f} after)",
                  f"- page: {page.stat().st_size / 1e6:.2f} MB"
                  + (f"; rows CSV beside it: {rows_csv.stat().st_size / 1e6:.2f} MB"
                     if rows_csv.exists() else "")]
        picks = picks_for(page) if "gpubench-details-data" in page.read_text(
            encoding="utf-8") else []
        if picks:  # made at once on opening, then again after the others
            picks = [*picks, picks[0]]
        opened = []
        for _ in range(repeat):
            before = load()
            opened.append((open_page(page, tmp, picks, None, None), before, load()))
        infos = [o[0] for o in opened]
        problems = sorted({p for i in infos for p in i["problems"]})
        first = infos[0]
        med = lambda key: statistics.median(i[key] for i in infos)  # noqa: E731
        above = first["above_details_px"]
        lines += [
            f"- answer page above the per-kernel results: {above:.0f} px = **"
            f"{above / VIEWPORT[1]:.1f} screens** of {VIEWPORT[1]} px (whole page "
            f"{first['page_px'] / VIEWPORT[1]:.1f} screens)" if above is not None else
            f"- no per-kernel detail view; whole page {first['page_px'] / VIEWPORT[1]:.1f} "
            "screens",
            f"- time to interactive (median of {repeat} openings in a fresh headless "
            f"Chromium): DOMContentLoaded {med('dcl_ms') / 1000:.2f} s, load event "
            f"**{med('load_ms') / 1000:.2f} s**, first screen's figures drawn "
            f"**{med('first_screen_ms') / 1000:.2f} s** ({first['first_screen_svgs']} "
            f"inline SVG, {first['first_screen_plots']} waiting for plotly.js; "
            f"{first['figures']} figures on the page) (load "
            f"{min(o[1] for o in opened):.2f}–{max(o[2] for o in opened):.2f})"]
        if picks:
            early = first["early"]
            med_early = lambda key: statistics.median(  # noqa: E731
                i["early"][key] for i in infos)
            shown = (f"its figure on screen **{med_early('shown_ms'):.0f} ms** later ("
                     + ("inline SVG while plotly.js compiles" if early.get("svg") else
                        "interactive") + "), interactive "
                     if "shown_ms" in early else "its figure drawn ")
            lines += [
                f"- plotly.js compiled (after the load event) at "
                f"{med('plotly_ms') / 1000:.2f} s; the detail view's first figure drawn "
                f"at **{med('detail_first_ms') / 1000:.2f} s** after opening",
                f"- a selection made at once, on the load event ({early['what']}, at "
                f"{med_early('at_ms') / 1000:.2f} s): {shown}**"
                f"{med_early('ms'):.0f} ms** later (plotly.js compiled first)",
                "- detail view, selector changed → its figure drawn (median of the "
                "openings):"]
        for k, pick in enumerate(first["picks"]):
            ms = statistics.median(i["picks"][k]["ms"] for i in infos)
            lines.append(f"  - {pick['what']}: **{ms:.0f} ms** ({pick['traces']} traces, "
                         f"{pick['rows']} table rows)")
        lines.append(f"- console problems: {problems or 'none'}")
        if shot is not None:
            kernel = shot_kernel or picks[0][1]
            open_page(page, tmp, picks, shot, ["kernel", kernel])
            lines.append(f"- screenshot: {shot.name}, the detail view with kernel = "
                         f"{kernel}")
    return "\n".join(lines) + "\n"


def commit() -> str:
    """This checkout's commit, with a mark where the tree differs from it."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
                           capture_output=True, text=True).stdout.strip()
    return f"commit {head}" + (" with uncommitted changes under src/" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="committed run folders")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the Markdown here too")
    parser.add_argument("--shot", type=Path, help="screenshot of the last run's detail view")
    parser.add_argument("--shot-kernel")
    parser.add_argument("--src", type=Path, default=ROOT / "src",
                        help="the gpubench package's source folder to build with (another "
                        "commit's, unpacked with git archive, for a baseline)")
    parser.add_argument("--label", help="names the report code in the output (default: "
                        "this checkout's commit)")
    args = parser.parse_args(argv)
    if not shutil.which("chromium") and not shutil.which("google-chrome"):
        print("report_speed: no headless Chromium", file=sys.stderr)
        return 2
    for run in args.runs:
        if not (run / "host.json").exists():
            print(f"report_speed: {run} is not a run folder (no host.json)", file=sys.stderr)
            return 2
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    browser = subprocess.run([_browser(), "--version"], capture_output=True,
                             text=True).stdout.strip()
    head = [f"Machine: {platform.node()}, {cpu}, {len(os.sched_getaffinity(0))} usable "
            f"cores, Python {platform.python_version()}; {browser}; 1-minute load average "
            f"at the start {load():.2f} (other work shares this "
            f"machine). Report code: {args.label or commit()}.", ""]
    body = [measure(run.resolve(), args.repeat,
                    args.shot.resolve() if args.shot and i == len(args.runs) - 1 else None,
                    args.shot_kernel, args.src.resolve())
            for i, run in enumerate(args.runs)]
    text = "\n".join(head + body)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
