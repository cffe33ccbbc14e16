"""The report builder: sections, escaping, self-containment, determinism, robustness."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from report_data import cases_drawn, details_data

from gpubench import report, results

EVIL = "<script>alert('x')</script>"
GPU_REASON = "no NVIDIA driver: NVML could not start"
CAPPED = "cuda_jit_naive is capped at size 4096"
SIZES = (1 << 10, 1 << 16, 1 << 20)


def _row(**fields: Any) -> dict[str, Any]:
    row = results.empty_row()
    row.update(
        mode="hot", timer="perf_counter", host="testhost", cpu_model="Test CPU", cpu_cores=2,
        python_version="3.11.7", git_commit="abc123", config_hash="cafe",
        timestamp="2024-01-02T03:04:05Z", schema_version=results.SCHEMA_VERSION,
    )
    row.update(fields)
    return row


def _ok(framework: str, impl: str, kernel: str, variant: str, size: int, dtype: str,
        threads: int, median: float, device: str = "cpu") -> dict[str, Any]:
    nbytes = 3.0 * size * (4 if dtype == "float32" else 8)
    flops = 2.0 * size**1.5 if kernel == "matmul" else float(size)
    return _row(
        framework=framework, device=device, backend=f"{framework}-{device}",
        implementation=impl, kernel=kernel, variant=variant, size=size, dtype=dtype,
        threads=threads, status="ok", samples=25, median_s=median, min_s=median * 0.9,
        max_s=median * 1.5, q1_s=median * 0.95, q3_s=median * 1.1, iqr_s=median * 0.15,
        mean_s=median * 1.02, rel_spread=0.15, stop_reason="converged",
        first_call_s=median * 50, setup_s=0.01, bytes=nbytes, flops=flops,
        gbps=nbytes / median / 1e9, gflops=flops / median / 1e9, rel_err=1e-8,
        tolerance=1e-5, device_name="Test CPU", framework_version=f"{framework} 1.0",
    )


def make_rows(n_sizes: int = 3) -> list[dict[str, Any]]:
    rows = []
    sizes = SIZES[:n_sizes]
    for kernel, variant in (("vector_add", "default"), ("matmul", "default"),
                            ("monte_carlo_pi", "default"), ("mystery_kernel", "v1")):
        for dtype in ("float32", "float64"):
            for size in sizes:
                base = size * 1e-9 + 1e-6
                rows.append(_ok("numpy", "ufunc", kernel, variant, size, dtype, 1, base))
                for threads in (1, 2):
                    rows.append(_ok("numba", "njit_prange", kernel, variant, size, dtype,
                                    threads, base / (threads * 1.5)))
                rows.append(_row(framework="cupy", device="gpu", backend="cupy-gpu",
                                 implementation="elementwise", kernel=kernel, variant=variant,
                                 size=size, dtype=dtype, status="unavailable",
                                 reason=GPU_REASON))
    rows.append(_row(framework="torch", device="cpu", backend="torch-cpu",
                     implementation="eager", kernel="vector_add", variant="default",
                     size=SIZES[0], dtype="float32", threads=1, status="error",
                     reason=f"worker crashed {EVIL}"))
    wrong = _ok("jax", "jit", "vector_add", "default", SIZES[0], "float64", 1, 1e-7)
    wrong.update(status="wrong_result", rel_err=0.5, tolerance=1e-15,
                 reason="relative error 0.5 > 1e-15")
    rows.append(wrong)
    rows.append(_row(framework="jax", device="cpu", backend="jax-cpu", implementation="jit",
                     kernel="vector_add", variant="default", size=SIZES[-1], dtype="float64",
                     threads=1, status="skipped", reason="needs 9 GiB, 2 GiB free"))
    rows.append(_row(framework="numba", device="gpu", backend="numba-gpu",
                     implementation="cuda_jit_naive", kernel="vector_add", variant="default",
                     size=SIZES[-1], dtype="float32", threads=1, status="skipped",
                     reason=CAPPED))
    return rows


ENV = {
    "host": f"host{EVIL}", "cpu_model": "Test CPU", "cpu_cores": 2, "memory_bytes": 8 << 30,
    "os": "Linux", "python_version": "3.11.7", "git_commit": "abc123",
    "timestamp": "2024-01-02T03:00:00Z",
    "timer_overhead_s": {"per_sample_s": 5e-8, "loop_s": 3e-7, "samples": 100},
    "gpus": [], "gpu_reason": GPU_REASON, "packages": {"numpy": "2.0", "numba": "0.60"},
}


def build(tmp_path: Path, rows: list[dict[str, Any]], env: dict[str, Any] | None = ENV,
          tag: str = "a") -> tuple[str, str]:
    csv = tmp_path / "timings.csv"
    results.atomic_write_csv(csv, results.rows_frame(rows))
    env_path = tmp_path / "env.json"
    if env is not None:
        env_path.write_text(json.dumps(env))
    out_html, out_md = tmp_path / f"report_{tag}.html", tmp_path / f"summary_{tag}.md"
    report.build_report(str(csv), str(env_path), str(out_html), str(out_md))
    return out_html.read_text(encoding="utf-8"), out_md.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    tmp = tmp_path_factory.mktemp("report")
    page, md = build(tmp, make_rows())
    return page, md, tmp


def test_sections_and_columns(built: tuple[str, str, Path]) -> None:
    page, _, _ = built
    # the per-kernel results: one detail view, its data embedded once; known kernels in
    # spec order, unknown ones after
    data = details_data(page)
    kernels = list(dict.fromkeys(c["kernel"] for c in data["cases"]))
    assert kernels == ["vector_add", "matmul", "monte_carlo_pi", "mystery_kernel"]
    assert '<h2 id="details">Per-kernel results</h2>' in page
    assert page.count('id="gpubench-details-data"') == 1
    for heading in ("Summary", "Correctness", "Failures and skips", "Environment"):
        assert f">{heading}</h2>" in page
    assert "× NumPy (caller)" in data["headers"]  # the speedup column
    assert "GFLOP/s" in page and "GB/s" in page and "Msamples/s" in page
    assert "worker crashed" in page and "needs 9 GiB, 2 GiB free" in page
    notice = re.findall(r'<div class="banner gpu-notice">(.*?)</div>', page, re.S)
    assert len(notice) == 1 and f"<strong>cupy-gpu</strong> (24 rows): {GPU_REASON}" in notice[0]
    # a step that ran but skipped a capped size is not a GPU step that could not run
    assert CAPPED not in notice[0] and "numba-gpu" not in notice[0] and CAPPED in page
    assert "relative error 0.5 &gt; 1e-15" in page  # the wrong result is flagged


def test_detail_rows_read_in_units(built: tuple[str, str, Path]) -> None:
    """The detail view's table: times in ns/µs/ms/s, throughput with its unit, relative
    errors as powers of ten; never an exponent like 1.2e+03."""
    data = details_data(built[0])
    throughput = data["headers"].index("throughput") - 7
    assert data["rows"]
    for row in data["rows"]:
        texts = [*(c[3] for c in row[9]), *(c[4] for c in row[9]), *row[10]]
        assert not any(re.search(r"\de[-+]?\d", t) for t in texts), texts
        assert all(re.fullmatch(r"—|[\d.,]+ (ns|µs|ms|s)", c[3]) for c in row[9]), row[9]
        cell = row[10][throughput]
        assert cell == "—" or re.fullmatch(r"[\d.,]+ \S+/s", cell), cell


def test_figures_are_inline_with_alt_text(built: tuple[str, str, Path]) -> None:
    page, _, _ = built
    divs = re.findall(r'<div class="plot[^"]*"[^>]*>', page)
    # the per-kernel figures are drawn on demand, from the detail view's data: 4 kernels
    # x 2 dtypes with ok rows
    assert not re.findall(r'<div class="plot scaling"', page)
    cases = details_data(page)["cases"]
    assert len(cases) == 8 and all(c["unit"] for c in cases)
    # the speedup selector's one figure and the first-call figure (this run has no GPU
    # framework, so no overview: tests/test_report_browser.py reads one)
    assert len(divs) >= 2
    # a first screen's figure: inline SVG drawn at build time, no script needed
    static = re.findall(r'<div class="plot static[^"]*" role="img" aria-label="([^"]+)">'
                        r"(<svg.*?</svg>)\s*</div>", page, flags=re.S)
    assert len(static) == page.count('class="plot static')
    for alt, svg in static:
        assert alt.strip() and "viewBox" in svg and "<script" not in svg
        assert "<metadata" not in svg
    divs = [d for d in divs if 'class="plot static' not in d]
    specs = re.findall(r'<script type="application/json" class="plot-spec" '
                       r'data-for="([^"]+)"( data-pick="[^"]+")?>(.*?)</script>', page)
    assert len(specs) == len(divs)
    for tag, (fid, pick, text) in zip(divs, specs, strict=True):
        alt = re.search(r'aria-label="([^"]*)"', tag)
        assert alt and alt.group(1).strip() and f'id="{fid}"' in tag
        # a selector's figure: its specs are the set's, drawn one at a time
        assert json.loads(text)["data"] if not pick else text == ""
    # the speedup figures: one place, a spec per kernel, each with its own alt text
    choices = re.findall(r'<script type="application/json" class="plot-choice" '
                         r'id="([^"]+)" data-alt="([^"]+)">(.*?)</script>', page)
    assert len(choices) >= 2 and sum(bool(p) for _f, p, _t in specs) == 1
    assert all(json.loads(text)["data"] and alt.strip() for _i, alt, text in choices)
    # plotly.js is inlined once, not run where it stands; nothing is fetched
    assert page.count('<script type="text/plain" id="gpubench-plotlyjs">') == 1
    assert "<link" not in page and not re.search(r"<script[^>]*\bsrc=", page)
    # plotly.js's own text names its links; the rest of the page names none
    ours = re.sub(r'<script type="text/plain" id="gpubench-plotlyjs">.*?</script>', "",
                  page, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", ours)
    assert "http://" not in ours and "https://" not in ours


def test_strings_are_escaped(built: tuple[str, str, Path]) -> None:
    page, md, _ = built
    assert EVIL not in page
    assert "&lt;script&gt;" in page
    assert "\\<script\\>" in md  # backslash-escaped: literal text in Markdown
    assert not re.search(r"(?<!\\)<script", md)


def test_wrong_results_are_never_ranked(built: tuple[str, str, Path]) -> None:
    page, _, _ = built
    # the wrong jax row is the fastest vector_add float64 at the smallest size, yet it must
    # not lead the summary, and its row gets no speedup
    summary = page[page.index('id="summary"'):page.index('id="speedup"')]
    assert "jax" not in summary
    assert "FAIL (1 wrong)" in page


def test_deterministic(built: tuple[str, str, Path]) -> None:
    page, md, tmp = built
    page2, md2 = build(tmp, make_rows(), tag="b")
    # summary_b.md links its own figures folder, summary_b_figures
    # ... and its page links its own rows file, report_b-rows.csv
    assert page == page2.replace("report_b-rows.csv", "report_a-rows.csv")
    assert md == md2.replace("summary_b_figures/", "summary_a_figures/")
    assert (tmp / "report_a-rows.csv").read_bytes() == (tmp / "report_b-rows.csv").read_bytes()
    a, b = (sorted((tmp / f"summary_{tag}_figures").glob("*.png")) for tag in "ab")
    assert a and [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_summary_md(built: tuple[str, str, Path]) -> None:
    _, md, tmp = built
    assert (tmp / "summary_a.md").exists()
    assert "| kernel | variant | dtype |" in md
    assert "| vector_add | default | float32 |" in md
    assert f"> **GPU steps that could not run**: **cupy-gpu** (24 rows): {GPU_REASON}." in md
    assert "data:image" not in md
    # the figures as PNG files beside it, linked in page order
    links = re.findall(r"!\[[^\]]+\]\((summary_a_figures/fig-\d{3}\.png)\)", md)
    assert len(links) > 8 and links == sorted(links)
    for link in links:
        assert (tmp / link).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_ok_rows(tmp_path: Path) -> None:
    rows = [r for r in make_rows() if r["status"] != "ok"]
    page, md = build(tmp_path, rows)
    assert "No successful measurements" in page and "No successful measurements" in md
    assert "<img" not in page and 'class="plot' not in page
    assert "gpubench-plotlyjs" not in page  # no figure: no plotly.js
    assert "Failures and skips" in page and GPU_REASON in page


def test_empty_csv(tmp_path: Path) -> None:
    page, md = build(tmp_path, [])
    assert "No successful measurements" in page and "</html>" in page
    assert "No successful measurements" in md


def test_single_size(tmp_path: Path) -> None:
    page, _ = build(tmp_path, make_rows(n_sizes=1))
    assert cases_drawn(page) == 8


def test_missing_env(tmp_path: Path) -> None:
    page, md = build(tmp_path, make_rows(n_sizes=1), env=None)
    assert "unknown" in page and "env.json is missing" in page
    assert "unknown" in md


def test_corrupt_csv_raises(tmp_path: Path) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text("framework,device\nnumpy,cpu\n")
    with pytest.raises(results.SchemaError, match=r"bad\.csv"):
        report.build_report(str(csv), str(tmp_path / "env.json"), str(tmp_path / "r.html"),
                            str(tmp_path / "s.md"))
    assert not (tmp_path / "r.html").exists()


def test_cli(tmp_path: Path) -> None:
    csv = tmp_path / "t.csv"
    results.atomic_write_csv(csv, results.rows_frame(make_rows(n_sizes=1)))
    samples = tmp_path / "s.csv"
    results.atomic_write_csv(samples, pd.DataFrame(columns=list(results.SAMPLE_COLUMNS)))
    argv = ["--timings", str(csv), "--env", str(tmp_path / "none.json"), "--html",
            str(tmp_path / "r.html"), "--md", str(tmp_path / "s.md"), "--samples", str(samples)]
    assert report.main(argv) == 0
    assert "s.csv (0 samples)" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_thousands_of_rows_render(tmp_path: Path) -> None:
    """Over 3,000 rows of 4 kernels at 24 thread counts: one scaling figure per kernel and
    dtype. (How long it takes is the report's to show, not a test's to bound: a loaded
    machine must not fail it.)"""
    rows = []
    for kernel in ("vector_add", "matmul", "fft", "reduction"):
        for variant in ("a",):
            for dtype in ("float32", "float64"):
                for size in [1 << k for k in range(8, 24)]:
                    for threads in range(1, 25):
                        fw = "numpy" if threads == 1 else "numba"
                        rows.append(_ok(fw, f"impl{threads % 3}", kernel, variant, size,
                                        dtype, threads, size * 1e-9 + 1e-6 / threads))
    assert len(rows) > 3000
    page, _ = build(tmp_path, rows)
    assert cases_drawn(page) == 8


def test_the_header_names_the_machine() -> None:
    """GPU model and count, CPU and cores, each framework's own version,
    the date and the commits, from the probe's record and the rows' provenance."""
    from gpubench.report import headline
    from gpubench.report.base import Environment

    gpu = {"name": "NVIDIA H100 80GB HBM3", "memory_bytes": 80 * 2**30,
           "driver_version": "580.1", "cuda_driver_version": 13000}
    env = Environment({"gpus": [dict(gpu, index=0), dict(gpu, index=1)], "host": "vm",
                       "cpu_model": "Xeon", "cpu_cores": 16, "memory_bytes": 2**37}, "e")
    df = pd.DataFrame({
        "framework": ["numpy", "cupy", "cuda_python", "numba", "torch"],
        "backend": ["numpy-cpu", "cupy-gpu", "cuda_python-gpu", "numba-gpu", "torch-gpu"],
        "device": ["cpu", "gpu", "gpu", "gpu", "gpu"], "device_name": ["Xeon"] + ["H100"] * 4,
        "framework_version": ["numpy=2.5.2", "cuda_runtime=13020;cupy=14.2.0",
                              "cuda-bindings=13.3.1;cuda-core=1.2.0;cuda_driver=13.0",
                              "numba=0.68.0;numba-cuda=0.30.4;numpy=2.5.2",
                              "cuda=13.0;torch=2.11.0+cu130"],
        "git_commit": ["51cb017", "4cf2783", "4cf2783", "4cf2783", "4cf2783"],
        "timestamp": ["2026-11-25T15:43:52Z"] * 4 + ["2026-11-26T00:10:00Z"]})
    m = headline.machine(env, df)
    assert m.title == m.gpu_name == "2 × NVIDIA H100 80GB HBM3"
    assert m.gpu == "2 × NVIDIA H100 80GB HBM3 (80.0 GiB, driver 580.1, CUDA 13.0)"
    assert m.cpu == "Xeon, 16 cores, 128.0 GiB RAM"
    assert m.versions == ("NumPy 2.5.2, CuPy 14.2.0, CUDA Python 13.3.1 (cuda-core 1.2.0), "
                          "Numba 0.68.0 (numba-cuda 0.30.4), PyTorch 2.11.0+cu130")
    assert m.measured == "2026-11-25–2026-11-26"
    assert m.commits == ("4cf2783 (CUDA Python, CuPy, Numba on GPU, PyTorch on GPU), "
                         "51cb017 (NumPy)")
    assert [k for k, _ in m.parts()] == ["GPU", "CPU", "frameworks", "measured", "commit",
                                         "host"]
