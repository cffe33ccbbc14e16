"""The run-vs-run page opens on its conclusion: per class, GPU time
new / base over the like-for-like cases, the measured ceilings' ratio beside it,
speedups labelled as relative to each host's own NumPy, the per-case table sorted by
ratio and showing only what changed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_data import scale_times, write_set

from gpubench.report import compare, stats
from gpubench.report.base import Environment
from gpubench.workloads import class_title


@pytest.mark.parametrize(("kernel", "impl", "cls"), [
    ("vector_add", "raw", "elementwise work"), ("moving_average", "raw", "elementwise work"),
    ("reduction", "x", "reductions"), ("matmul", "cublas", "GEMM"), ("fft", "x", "FFT"),
    ("monte_carlo_pi", "x", "random numbers"), ("transfer", "x", compare.TRANSFERS),
    ("matmul", "cublas+transfers", compare.TRANSFERS), ("launch_overhead", "x", ""),
    ("interop", "x", "")])
def test_class_of_uses_the_verdicts_classes(kernel, impl, cls):
    assert compare.class_of(kernel, impl) == cls


def _cmp(rows):
    """A comparison table as compare_sets makes it, from (backend, device, kernel,
    base median, new median, label[, mode, status_new])."""
    out = []
    for i, r in enumerate(rows):
        backend, device, kernel, mb, mn, label = r[:6]
        mode = r[6] if len(r) > 6 else "hot"
        status_new = r[7] if len(r) > 7 else "ok"
        out.append({"framework": backend.split("-")[0], "device": device, "backend": backend,
                    "implementation": "impl", "kernel": kernel, "variant": "default",
                    "size_key": 1000 + i, "dtype": "float32", "match_threads": -1,
                    "mode": mode, "threads_base": 1, "threads_new": 1, "status_base": "ok",
                    "status_new": status_new, "median_base": mb, "median_new": mn,
                    "ratio": mn / mb, "p_value": 0.001, "method": "hodges-lehmann",
                    "label": label if status_new == "ok" else "NOT COMPARABLE"})
    return pd.DataFrame(out)


F, S, SAME, U = stats.FASTER, stats.SLOWER, stats.SAME, stats.UNRESOLVED


def test_class_ratio_is_the_geometric_mean_of_like_for_like_gpu_times():
    cmp = _cmp([
        ("cupy-gpu", "gpu", "vector_add", 1.0, 0.5, F),
        ("cupy-gpu", "gpu", "elementwise", 1.0, 2.0, S),
        ("torch-gpu", "gpu", "vector_add", 2.0, 2.0, SAME),
        ("torch-gpu", "gpu", "vector_add", 2.0, 1.0, F, "cold"),   # another mode: out
        ("torch-gpu", "gpu", "vector_add", 2.0, 9.0, S, "hot", "error"),  # not ok: out
        ("numpy-cpu", "cpu", "vector_add", 1.0, 0.1, F),             # the CPU: out
        ("cupy-gpu", "gpu", "matmul", 4.0, 3.0, F),
        ("cupy-gpu", "gpu", "launch_overhead", 1.0, 0.1, F),        # no class: out
    ])
    cases = compare.gpu_cases(cmp)
    assert sorted(cases["cls"]) == ["GEMM"] + ["elementwise work"] * 3
    ceilings = {"copy": 1.4, "gemm": 1.0, "sgemm": 1.0, "dgemm": 1.0, "link": 1.0}
    classes = {c.cls: c for c in compare.class_ratios(cases, ceilings)}
    ew = classes["elementwise work"]
    assert ew.n == 3 and ew.geomean == pytest.approx(1.0)  # (0.5 * 2 * 1) ** (1/3)
    assert (ew.lo, ew.hi) == (0.5, 2.0) and (ew.faster, ew.slower, ew.unchanged) == (1, 1, 1)
    assert ew.q1 == pytest.approx(0.75) and ew.q3 == pytest.approx(1.5)
    assert ew.bound == "copy" and ew.expected == pytest.approx(1 / 1.4)
    assert classes["GEMM"].geomean == pytest.approx(0.75) and classes["GEMM"].n == 1
    assert list(classes) == ["elementwise work", "GEMM"]  # the verdicts' order


def test_the_gpu_verdict_uses_gpu_times_not_speedup_ratios():
    # the new host's NumPy is twice as fast, its GPU 1.25x as fast: the speedup over its
    # own NumPy falls (x 0.625), yet the GPU got faster, and the conclusion says so
    cmp = _cmp([("numpy-cpu", "cpu", "vector_add", 1.0, 0.5, F),
                ("cupy-gpu", "gpu", "vector_add", 0.01, 0.008, F)])
    base = compare.ResultSet("h100", Path("b"), pd.DataFrame(), None, Environment(
        {"ceilings": {"d2d_copy_gbps": 3000.0, "sgemm_gflops": 5e4, "dgemm_gflops": 5e4,
                      "h2d_pinned_gbps": 50.0}}, "x"), [])
    new = compare.ResultSet("h200", Path("n"), pd.DataFrame(), None, Environment(
        {"ceilings": {"d2d_copy_gbps": 4200.0, "sgemm_gflops": 5e4, "dgemm_gflops": 5e4,
                      "pinned_gbps": {"h2d": {"1024": 10.0, "268435456": 55.0}}}}, "x"), [])
    ceilings = compare.ceiling_ratios(base, new)
    assert ceilings["copy"] == pytest.approx(1.4) and ceilings["gemm"] == pytest.approx(1.0)
    assert ceilings["link"] == pytest.approx(1.1)  # the largest probed size vs the old 1 GiB
    classes = compare.class_ratios(compare.gpu_cases(cmp), ceilings)
    assert [(c.cls, round(c.geomean, 3)) for c in classes] == [("elementwise work", 0.8)]
    text = compare.conclusion_text(base, new, cmp, classes, ceilings)
    assert "× each host's own NumPy" in text and "NumPy ran 2.00× as fast" in text
    assert "2 are surely faster, 0 surely slower and 0 the same" in text
    assert compare.host_numpy_ratio(cmp) == (pytest.approx(0.5), 1)
    # in words a reader need not invert: time 0.80x is 1.25x faster
    verdict = compare.verdict_line(base, new, compare.gpu_cases(cmp),
                                   compare.energy_cases(cmp))
    assert verdict.startswith("h200 vs h100: memory-bound work 1.25× faster (1.25–1.25×)")
    # neither run read energy (the quick suite): the line says so, not silence
    assert verdict.endswith("; work per joule not compared: neither run read energy.")
    base.df = pd.DataFrame({"energy_j": [float("nan"), 0.2]})
    assert compare.verdict_line(base, new, compare.gpu_cases(cmp), compare.energy_cases(
        cmp)).endswith("; work per joule not compared: only h100 read energy.")
    new.df = base.df
    assert compare.verdict_line(base, new, compare.gpu_cases(cmp), compare.energy_cases(
        cmp)).endswith("; work per joule not compared: no GPU case read energy in both runs.")
    (line,) = compare.class_lines(classes, compare.energy_cases(cmp), ceilings)
    assert line.startswith("elementwise: 1.25× faster (1.25–1.25×) over 1 case ")
    assert "device copy ceiling the probe measured is 1.40× the base's" in line


def test_no_gpu_case_says_so():
    cmp = _cmp([("numpy-cpu", "cpu", "vector_add", 1.0, 0.5, F)])
    rs = compare.ResultSet("a", Path("a"), pd.DataFrame(), None, Environment({}, "x"), [])
    assert compare.class_ratios(compare.gpu_cases(cmp), {}) == []
    assert "no GPU conclusion" in compare.conclusion_text(rs, rs, cmp, [], {})


def test_speedup_aspects_are_labelled_as_over_their_own_hosts_numpy():
    from gpubench.report.render import text_table

    t = text_table(["framework-device", "aspect", "base", "new", "difference"],
                   [["cupy-gpu", "speedup: elementwise", "566×", "526×", "FASTER"],
                    ["cupy-gpu", "call overhead", "7 µs", "6 µs", "—"]])
    out = compare.own_numpy_labels(t)
    assert list(out["aspect"]) == ["speedup: elementwise (× its own host's NumPy)",
                                   "call overhead"]
    assert compare.own_numpy_labels(None) is None


def _scale(paths: dict[str, Path], backend: str, factor: float) -> None:
    t = pd.read_csv(paths["timings"], dtype={"energy_meter": object, "energy_reason": object})
    s = pd.read_csv(paths["samples"])
    scale_times(t, t["backend"] == backend, factor)
    s.loc[s["backend"] == backend, "time_s"] *= factor
    t.to_csv(paths["timings"], index=False)
    s.to_csv(paths["samples"], index=False)


def _faster_copies(tmp_path: Path, scales: dict[str, float]) -> tuple[Any, Path]:
    """A base run and a new one whose copy ceiling is 1.4x the base's 2,000 GB/s, each
    backend of ``scales`` taking that share of its base time; (comparison, its HTML)."""
    write_set(tmp_path / "base")
    new = write_set(tmp_path / "new")
    env = json.loads(new["env"].read_text())
    env["ceilings"]["d2d_copy_gbps"] = 2800.0
    new["env"].write_text(json.dumps(env))
    for backend, share in scales.items():
        _scale(new, backend, share)
    out = tmp_path / "cmp.html"
    return compare.build_compare(tmp_path / "base", tmp_path / "new", out,
                                 tmp_path / "cmp.md", workers=1), out


def test_the_page_opens_on_a_verdict_and_lists_changes_by_class(tmp_path: Path):
    cmp, out = _faster_copies(tmp_path, {"cupy-gpu": 0.5, "numpy-cpu": 0.8})
    html = out.read_text(encoding="utf-8")
    md = (tmp_path / "cmp.md").read_text(encoding="utf-8")
    # the verdict first, then the runs, the per-class lines and their figure
    assert html.index('id="verdict"') < html.index('id="conclusion"') < html.index(
        'class="plot compare"') < html.index('id="method"')
    assert html.index('id="method"') < html.index('id="changed"') < html.index('id="which"')
    body = [x for x in md.splitlines() if x.strip() and not x.startswith("#")]
    # one of several GPU backends halved: the middle half of the cases straddles 1x
    assert body[0].startswith("**new (Test GPU) vs base (Test GPU): memory-bound work too "
                              "close to call (1.00–2.00× as fast)")
    assert body[1].startswith("- base: base (Test GPU): ") and "measured " in body[1]
    assert "commit" in body[1] and "suite" in body[1]
    assert md.index("## Per class") < md.index("## How the labels") < md.index(
        "## What changed") < md.index("## Which framework?")
    assert "device copy ceiling the probe measured is 1.40× the base's" in md
    assert "(× its own host's NumPy)" in md
    # only FASTER/SLOWER rows in the per-case table, by class then surest first; the
    # rest counted
    changed = md[md.index("## What changed"):md.index("## Which framework?")]
    lines = [x for x in changed.splitlines() if x.startswith("| ") and "---" not in x][1:]
    labels = [x.rstrip(" |").rsplit("| ", 1)[-1] for x in lines]
    assert labels and set(labels) <= {stats.FASTER, stats.SLOWER}
    order = [class_title(c) for c in compare.table_classes()]  # as the table shows them
    cls = [order.index(x.split("|")[1].strip()) for x in lines]
    assert cls == sorted(cls)
    n_changed = int(cmp["label"].isin([stats.FASTER, stats.SLOWER]).sum())
    assert len(lines) == n_changed and not cmp["beyond_ceilings"].any()
    unchanged = int(cmp["label"].isin([stats.SAME, stats.UNRESOLVED]).sum())
    assert f"{unchanged} shared measurements are unchanged" in md
    assert "Set apart" not in md
    # the class the halved CuPy rows fall in reads faster than 1x
    cases = compare.gpu_cases(cmp)
    cupy = cases[cases["backend"] == "cupy-gpu"]
    assert np.allclose(cupy["time_ratio"], 0.5)
    assert not math.isnan(cases["time_ratio"].mean())


def test_rows_beyond_the_ceilings_are_set_apart_and_left_out_of_the_verdict(
        tmp_path: Path):
    # the copy ceiling rose 1.4x: halved CuPy times the hardware can explain (2x < 1.4 x
    # 1.5), a 20x faster PyTorch it cannot
    cmp, _ = _faster_copies(tmp_path, {"cupy-gpu": 0.5, "torch-gpu": 0.05})
    md = (tmp_path / "cmp.md").read_text(encoding="utf-8")
    beyond = cmp[cmp["beyond_ceilings"]]
    assert len(beyond) and set(beyond["backend"]) == {"torch-gpu"}
    assert "torch-gpu" not in set(compare.gpu_cases(cmp)["backend"])
    apart = md[md.index("## Set apart"):md.index("## Which framework?")]
    assert "artefact of one side's timing" in apart and "2.10× faster" in apart
    changed = md[md.index("## What changed"):md.index("## Set apart")]
    assert "torch-gpu" not in changed and "cupy-gpu" in changed
    assert "20× faster" not in md[:md.index("## Set apart")]


def test_change_words_say_faster_slower_same_or_too_close_to_call():
    assert compare.change_words(0.8, 0.75, 0.9) == "1.25× faster (1.11–1.33×)"
    assert compare.change_words(1.25, 1.1, 1.3) == "1.25× slower (1.10–1.30×)"
    assert compare.change_words(1.0, 0.97, 1.04) == "the same (within ±5%)"
    assert compare.change_words(0.9, 0.7, 1.2).startswith("too close to call")
    assert compare.change_words(0.8, 0.75, 0.9, more="more", less="less").startswith(
        "1.25× more")
    assert compare.change_cell(0.032) == "31× faster"


def test_large_sizes_alone_are_averaged_apart():
    cmp = _cmp([("cupy-gpu", "gpu", "vector_add", 1.0, 0.9, F),
                ("cupy-gpu", "gpu", "vector_add", 1.0, 0.5, F),
                ("cupy-gpu", "gpu", "vector_add", 1.0, 0.8, F)])
    cmp.loc[1, "size_key"] = 2**26  # > 4,194,304 elements: the large band
    cmp.loc[2, "size_key"] = 2**24
    (ew,) = compare.class_ratios(compare.gpu_cases(cmp), {"copy": 1.4})
    assert ew.n_large == 2 and ew.large == pytest.approx(math.sqrt(0.5 * 0.8))
    assert ew.geomean == pytest.approx((0.9 * 0.5 * 0.8) ** (1 / 3))
    table = compare.class_table([ew])
    assert table.iloc[0]["large sizes only (cases)"] == "0.63× (2)"
