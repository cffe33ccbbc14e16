"""A run on a host without a GPU: its page speaks of the CPU frameworks it measured, and
says once which GPU steps could not run, why, and what a GPU run would add."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_data import ENV, SIZES, row, write_set

from gpubench import results
from gpubench.report import build_report
from gpubench.report.render import md_esc

#: the reason a GPU step's rows carry where its environment was not built (one per step,
#: near-identical: the steps' environments differ in name only)
NO_GPU = ("no GPU on the host that builds environments (no NVIDIA driver (NVML: NVML "
          "Shared Library Not Found)); set environments.gpu_envs: always to build it anyway")
GPU_STEPS = {"cupy-gpu": "cupy-cuda12", "jax-gpu": "jax-cuda12", "numba-gpu": "numba-cuda12",
             "torch-gpu": "torch-cuda12", "cuda_python-gpu": "cuda-python12"}
#: a GPU step that stopped for another cause
OTHER = ("cuda_python-gpu", "import cuda.core failed: ModuleNotFoundError")
NO_GPU_ENV = {**ENV, "gpus": [], "gpu_reason": "no NVIDIA driver: NVML could not start",
              "ceilings": {k: v for k, v in ENV["ceilings"].items() if k.startswith("cpu_")
                           or k == "measured_with"}}


def cpu_only_rows() -> list[dict]:
    """NumPy fastest on small arrays, jax-cpu and torch-cpu behind it, numba-cpu ahead
    at the largest size; every GPU step ``unavailable`` as a GPU-less host writes it."""
    rows, seed = [], 0
    for kernel, dtype in (("vector_add", "float32"), ("reduction", "float64"),
                          ("elementwise", "float32")):
        for size in SIZES:
            t = size * 1e-9 + 1e-6
            for fw, impl, f in (("numpy", "ufunc", 1.0), ("jax", "jit", 2.0),
                                ("torch", "eager", 3.0),
                                ("numba", "njit_prange", 0.5 if size == SIZES[-1] else 4.0)):
                seed += 1
                rows.append(row(fw, "cpu", impl, kernel, size, dtype, t * f, seed=seed)[0])
            for backend, env in GPU_STEPS.items():
                fw = backend.removesuffix("-gpu")
                reason = (OTHER[1] if backend == OTHER[0] else
                          f"environment {env} was not built: {NO_GPU}")
                r = row(fw, "gpu", "default", kernel, size, dtype, 0,
                        status="unavailable", reason=reason)[0]
                rows.append({**r, "device_name": "", "framework_version": ""})
    return rows


def _build(folder: Path, rows: list[dict], env: dict) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    csv, host = folder / "timings.csv", folder / "host.json"
    results.atomic_write_csv(csv, results.rows_frame(rows))
    host.write_text(json.dumps(env))
    html, md = folder / "index.html", folder / "summary.md"
    build_report(csv, host, html, md, workers=1)
    return html.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")


def _text(html: str) -> str:
    """The page's words: no style, scripts or figure data, tags dropped."""
    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture(scope="module")
def cpu_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    return _build(tmp_path_factory.mktemp("cpu-only"), cpu_only_rows(), NO_GPU_ENV)


def test_the_title_asks_about_the_cpu(cpu_page: tuple[str, str]) -> None:
    html, md = cpu_page
    h1 = re.search(r"<h1>(.*?)</h1>", html, re.S)
    assert h1 is not None
    for title in (h1.group(1), md.splitlines()[0]):
        assert "GPU framework" not in title and "from which size" not in title, title
        assert "CPU" in title, title


def test_no_cpu_framework_is_called_a_gpu_framework(cpu_page: tuple[str, str]) -> None:
    html, md = cpu_page
    for text in (_text(html), md):
        assert "GPU framework" not in text
        # the small-arrays line names its best non-NumPy framework, a CPU one here
        assert "the fastest other framework, JAX on CPU" in text


def test_the_matrix_holds_the_cpu_frameworks_alone(cpu_page: tuple[str, str]) -> None:
    _, md = cpu_page
    # the answer and the matrix, up to the source documents' claims (some are the GPU's)
    answer = md[md.index("## Which framework?"):md.index("### Claims from")]
    rows = [line.split(" | ")[0].lstrip("| ") for line in answer.splitlines()
            if line.startswith("| ")]
    # the frameworks by name, as the answer names them (reader_name)
    assert {"NumPy", "JAX on CPU", "Numba on CPU", "PyTorch on CPU"} <= set(rows)
    assert not [r for r in rows if r.endswith("on GPU") or r in ("CuPy", "CUDA Python")]
    assert not any(s in answer for s in GPU_STEPS)  # the notice names them, not the matrix
    assert "crossover" not in answer.lower()


def test_one_notice_names_the_skipped_gpu_steps(cpu_page: tuple[str, str]) -> None:
    html, md = cpu_page
    notices = re.findall(r'<div class="banner gpu-notice">(.*?)</div>', html, re.S)
    assert len(notices) == 1 and "GPU steps skipped" not in html
    # before the answer; the failures table lists the rows one by one
    assert html.index("gpu-notice") < html.index('id="which"')
    grouped = sorted(s for s in GPU_STEPS if s != OTHER[0])
    md_notices = [line for line in md.splitlines() if "GPU steps could not run" in line]
    assert len(md_notices) == 1 and "GPU steps skipped" not in md
    for text, esc in ((_text(notices[0]), str), (md_notices[0], md_esc)):
        # each cause once, with the steps it stopped
        assert text.count(esc(NO_GPU)) == 1 and text.count(esc(OTHER[1])) == 1, text
        assert esc(", ".join(grouped)) in text and esc(OTHER[0]) in text
        assert "environment numba-cuda12" not in text
        # what a GPU run adds, and how to get one
        assert "crossover" in text and "gpubench run --profile slurm" in text


def test_a_run_with_gpu_rows_keeps_its_title(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "in")
    out = tmp_path / "out"
    build_report(paths["timings"], paths["env"], out / "index.html", out / "summary.md",
                 samples_csv=paths["samples"], workers=1)
    html = (out / "index.html").read_text(encoding="utf-8")
    md = (out / "summary.md").read_text(encoding="utf-8")
    title = "Which Python GPU framework, from which size: gpubench on 1 × Test GPU"
    assert f"<h1>{title}</h1>" in html and md.startswith(f"# {title}\n")
    assert "gpu-notice" not in html and "CPU only" not in md
