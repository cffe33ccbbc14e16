"""A light repository: the tracked tree stays under 32 MiB.

The committed evidence is most of the tree. Its CSVs and the steps' logs are committed
compressed (the readers take ``.csv.gz``/``.csv.xz``), superseded runs and samples that
no committed claim needs are left in git history (each evidence README names the commit
that has them), and what the report generates from the committed CSVs (the HTML pages,
the summaries' figures) is rebuilt by the tested commands in each evidence README, never
committed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the bound on the tracked tree, bytes (``du -sh --exclude=.git`` of a fresh clone): the
#: front page's run and the H200 run compared with it keep every sample (about 7 and 6 MB
#: as ``xz -9e``: the compare page's labels rest on them) and the full suite's run its GPU
#: and NumPy samples (2 MB), which their verdicts' noise tests read
LIMIT = 32 * 1024 * 1024
#: an evidence CSV larger than this is committed compressed
PLAIN_CSV_MAX = 100_000
#: the allocation unit ``du`` counts a file and a folder in on the usual filesystems
BLOCK = 4096


def tracked() -> list[str]:
    """The files git tracks in this checkout; skips (saying why) outside a git checkout,
    e.g. an unpacked sdist, where there is no tracked tree to measure."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: no tracked tree to measure")
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=ROOT,
                         capture_output=True, text=True)
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != ROOT.resolve():
        pytest.skip(f"{ROOT} is not a git checkout: no tracked tree to measure")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return [p for p in out.split("\0") if p and (ROOT / p).is_file()]


def test_the_tracked_tree_stays_light() -> None:
    files = tracked()
    sizes = {p: (ROOT / p).stat().st_size for p in files}
    total = sum(sizes.values())
    # what du counts: each file rounded up to whole blocks, and each folder a block
    folders = {str(Path(p).parent) for p in files}
    on_disk = sum(-(-s // BLOCK) * BLOCK for s in sizes.values()) + BLOCK * len(folders)
    biggest = ", ".join(f"{p} {s / 1e6:.2f} MB" for p, s in
                        sorted(sizes.items(), key=lambda kv: -kv[1])[:8])
    print(f"\ntracked: {len(files)} files, {total / 2**20:.1f} MiB; "
          f"about {on_disk / 2**20:.1f} MiB on disk")
    assert total < LIMIT, f"the tracked files total {total / 2**20:.1f} MiB; biggest: {biggest}"
    assert on_disk < LIMIT, (f"the tracked tree takes about {on_disk / 2**20:.1f} MiB on disk "
                             f"(4 KiB blocks); biggest: {biggest}")


#: the one summary whose figures are committed: the current suite's, read first
KEPT_FIGURES = "evidence/h100-default-suite/report/"


def test_no_generated_report_output_is_tracked_under_evidence() -> None:
    """HTML pages and the summaries' figures are rebuilt from the committed CSVs by the
    command in each evidence README; .gitignore keeps them out, except the figures of
    the current suite's summary.md (not their cache keys), so that a rebuild changes
    nothing tracked."""
    files = [p for p in tracked() if p.startswith("evidence/")]
    generated = [p for p in files if p.lower().endswith((".html", ".htm"))
                 or ("/summary_figures/" in p and not p.startswith(KEPT_FIGURES))]
    assert generated == [], f"generated report output is tracked: {generated[:10]}"
    probes = ["evidence/energy-per-call/h100/index.html",
              "evidence/energy-per-call/compare.html",
              "evidence/energy-per-call/h100/report/summary_figures/fig-001.png",
              # the figures' cache keys hash the code: tracked, every rebuild would
              # change them
              f"{KEPT_FIGURES}summary_figures/.gpubench-figures.keys",
              # the samples its README takes back from git history to rebuild
              "evidence/energy-per-call/h100/samples.csv.xz"]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *probes], cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
    assert sorted(ignored) == sorted(probes), (
        f".gitignore does not ignore {sorted(set(probes) - set(ignored))}")


def test_the_current_summary_shows_every_figure_it_links() -> None:
    """evidence/h100-default-suite's summary.md reads whole where it is browsed: each image it
    links is committed."""
    summary = ROOT / KEPT_FIGURES / "summary.md"
    links = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", summary.read_text())
    assert links, "summary.md links no figure"
    files = set(tracked())
    missing = [link for link in links if f"{KEPT_FIGURES}{link}" not in files]
    assert missing == [], f"summary.md links figures that are not committed: {missing[:5]}"


def test_large_evidence_csvs_are_committed_compressed() -> None:
    plain = {p: os.path.getsize(ROOT / p) for p in tracked()
             if p.startswith("evidence/") and p.endswith(".csv")}
    large = {p: s for p, s in plain.items() if s > PLAIN_CSV_MAX}
    assert large == {}, ("evidence CSVs over 100 kB are committed as .csv.gz or .csv.xz "
                         f"(gzip -9 -n / xz -9e), which every reader takes: {large}")


#: the committed evidence that tests read (test_report_stats, test_report_browser,
#: test_safety) and the tools they run (test_repeatability, test_jax_sync_clock), and
#: what the READMEs' tested rebuild commands read: checked here as well, where no
#: optional package or browser can skip it
RUNS_READ_BY_TESTS = ("h100-default-suite", "energy-per-call/h100", "energy-per-call/h200",
                      "quick-suite-agreement/full-h100", "h200-against-h100/h200")
EVIDENCE_READ_BY_TESTS = [
    *(f"evidence/h100-default-suite/{name}"
      for name in ("timings.csv.gz", "samples.csv.xz", "host.json")),
    *(f"evidence/{run}/{name}" for run in RUNS_READ_BY_TESTS[1:]
      for name in ("timings.csv.gz", "host.json", "report/summary.md")),
    "tools/repeatability.py", "tools/jax_sync_check.py",
]


def test_the_evidence_the_tests_read_is_committed() -> None:
    files = set(tracked())
    missing = [p for p in EVIDENCE_READ_BY_TESTS if p not in files or not (ROOT / p).is_file()]
    assert missing == [], f"committed evidence missing (tests would fail or skip): {missing}"
    for run in RUNS_READ_BY_TESTS:
        assert any(p.startswith(f"evidence/{run}/raw/") and p.endswith(".lock.txt")
                   for p in files), f"evidence/{run}/raw/*.lock.txt is missing"
