"""The comparison report's sections, its statistics, the MPI section, the run-vs-run
comparison, determinism and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_data import ENV, EVIL, cases_drawn, scale_times, write_set

from gpubench import cli
from gpubench.report import build_report, compare, sections, stats


def _build(paths: dict[str, Path], out: Path, mpi: bool = True,
           workers: int | None = 1) -> tuple[str, str]:
    html, md = out / "index.html", out / "summary.md"
    build_report(paths["timings"], paths["env"], html, md, samples_csv=paths["samples"],
                 mpi_csv=paths["mpi"] if mpi else None, workers=workers)
    return html.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("sections")
    paths = write_set(tmp / "in")
    html, md = _build(paths, tmp / "out")
    return html, md, paths


# -- statistics ---------------------------------------------------------------------------


def test_mann_whitney_matches_the_textbook_value() -> None:
    # n1 = n2 = 3, complete separation: U = 0, z = (4.5 - 0.5) / sqrt(5.25), p = 0.0809
    # (the value of scipy.stats.mannwhitneyu(..., method="asymptotic"), which the test uses)
    u, p = stats.mann_whitney(np.array([1.0, 2, 3]), np.array([4.0, 5, 6]))
    assert u == 0.0
    assert p == pytest.approx(0.0809, abs=1e-4)
    u, p = stats.mann_whitney(np.ones(5), np.ones(5))  # all tied: no evidence
    assert p == 1.0


def test_compare_needs_both_significance_and_effect() -> None:
    rng = np.random.default_rng(1)
    base = 1.0 + 0.01 * rng.standard_normal(50)
    slower = 1.2 + 0.01 * rng.standard_normal(50)
    tiny = 1.01 + 0.001 * rng.standard_normal(50)  # significant but under 5 %
    assert stats.compare(1.0, 1.2, base, slower).label == stats.SLOWER
    assert stats.compare(1.2, 1.0, slower, base).label == stats.FASTER
    v = stats.compare(1.0, 1.01, base, tiny)
    assert v.label == stats.SAME and v.method == "hodges-lehmann"
    # without samples: the quartiles decide; overlapping but wide ranges prove nothing
    assert stats.compare(1.0, 2.0, base_iqr=(0.9, 1.1), new_iqr=(1.9, 2.1)).label == stats.SLOWER
    assert stats.compare(1.0, 1.2, base_iqr=(0.9, 1.3), new_iqr=(1.1, 1.4)).label == \
        stats.UNRESOLVED


def test_samples_attach_to_hot_and_cold_rows(page: tuple[str, str, dict[str, Path]]) -> None:
    _, _, paths = page
    from gpubench.report import load_inputs

    inputs = load_inputs(paths["timings"], paths["env"], paths["samples"])
    df = inputs.df
    # the synthetic GPU matmuls at n = 2**22 run at 365 TFLOP/s: implausible, still matched
    assert set(df.loc[df["status"] == "implausible", "kernel"]) == {"matmul"}
    ok = df[df["status"].isin(["ok", "implausible"])]
    device = {i: s for (i, c), s in inputs.samples.by_row.items() if c == "device"}
    assert len(device) == len(ok)  # hot and cold runs share a key, yet match
    for index, s in device.items():
        assert np.median(s) == pytest.approx(df.loc[index, "median_s"], rel=1e-12)
    # every ok row has samples on the caller's clocks too, except cold GPU rows (none)
    for clock, col in (("sync", "sync_median_s"), ("pipelined", "pipelined_median_s")):
        timed = ok[ok[col] > 0]
        assert len(timed) == len(ok[(ok["device"] == "cpu") | (ok["mode"] == "hot")])
        for index in timed.index:
            s = inputs.samples.get(int(index), clock)
            assert s is not None, (index, clock)
            assert np.median(s) == pytest.approx(df.loc[index, col], rel=1e-12)


# -- sections -----------------------------------------------------------------------------


def test_every_section_is_there(page: tuple[str, str, dict[str, Path]]) -> None:
    html, _, _ = page
    for anchor in ("summary", "speedup", "ceilings", "crossover", "first-call",
                   "correctness", "code-size", "mpi", "failures", "environment"):
        assert f'id="{anchor}"' in html
    for cls in ("speedup", "roofline", "first-call", "mpi"):
        assert f'<div class="plot {cls}"' in html
    assert 'id="details"' in html and cases_drawn(html) > 0  # the per-kernel figures


def test_summary_says_how_sure(page: tuple[str, str, dict[str, Path]]) -> None:
    html, md, _ = page
    summary = html[html.index('id="summary"'):html.index('id="speedup"')]
    # at 2**22 elements cupy is 3x faster than torch with 2 % noise: sure
    assert "cupy-gpu array_ops" in summary and "sure:" in summary
    assert "Mann–Whitney" in summary
    assert "| backend | small wins | medium wins | large wins |" in md


def test_crossover_is_located(page: tuple[str, str, dict[str, Path]]) -> None:
    html, md, _ = page
    part = html[html.index('id="crossover"'):html.index('id="first-call"')]
    # cpu: size*1e-9 + 1e-6; gpu: size*1e-11 + 5e-6: equal near 4,000 elements
    assert re.search(r"≈ [0-9,]+ \(between 1,024 and 16,384\)", part)
    # the workshop book's rule of thumb is named, with its source
    assert re.search(r"The workshop book says the GPU loses below about\s+10,000 elements", part)
    assert "slower at the largest size compared" in part  # torch-gpu never wins
    assert "## CPU/GPU crossover" in md


def test_ceilings_and_roofline(page: tuple[str, str, dict[str, Path]]) -> None:
    html, _, _ = page
    part = html[html.index('id="ceilings"'):html.index('id="crossover"')]
    assert "GPU device-to-device copy" in part and "% of ceiling" in part
    alt = re.search(r'<div class="plot roofline" [^>]*aria-label="([^"]*)"', part)
    assert alt and "bandwidth roof 2,000 GB/s" in alt.group(1)


def test_code_size_is_measured_from_the_registry() -> None:
    from gpubench.spec import implementations

    impl = next(i for i in implementations("vector_add", "numpy") if i.name == "ufunc")
    text, cus = sections.implementation_source(impl)
    assert "def " in text and cus == []
    assert 1 <= sections._code_lines(text) < 40
    raw = next(i for i in implementations("elementwise", "cupy") if i.name == "raw_kernel")
    _, cus = sections.implementation_source(raw)
    assert cus == ["elementwise"]  # the CUDA C file it compiles is counted too


def test_first_call_and_code_size_tables(page: tuple[str, str, dict[str, Path]]) -> None:
    html, md, _ = page
    assert "first call − warm sync call" in html
    part = html[html.index('id="code-size"'):html.index('id="mpi"')]
    assert "<td>numpy</td>" in part and "<td>cupy</td>" in part
    assert "## Code size" in md


def test_mpi_section(page: tuple[str, str, dict[str, Path]]) -> None:
    html, md, _ = page
    part = html[html.index('id="mpi"'):html.index('id="failures"')]
    assert "Scaling and efficiency" in part and "Latency and bandwidth" in part
    assert "Staged vs direct" in part and "Open MPI" in part
    assert "MPI_Init failed" in part and EVIL not in html
    assert "halo cupy-gpu strong" in part
    # 4 ranks at 0.3 s against 1.0 s at one rank: efficiency 0.83
    assert "0.83" in part
    assert "MPI measurement" in md


def test_mpi_absent_or_broken(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "in")
    html, md = _build(paths, tmp_path / "a", mpi=False)
    assert "MPI was not run" in html and "MPI was not run" in md
    paths["mpi"].write_text("job,backend\nhalo,cupy-gpu\n")
    html, _ = _build(paths, tmp_path / "b")
    assert "lacks the columns" in html


# -- determinism --------------------------------------------------------------------------


def test_byte_identical_from_shuffled_input_and_any_worker_count(tmp_path: Path) -> None:
    a = write_set(tmp_path / "a")
    b = write_set(tmp_path / "b", shuffle_seed=7)
    assert a["timings"].read_bytes() != b["timings"].read_bytes()
    html_a, md_a = _build(a, tmp_path / "out_a", workers=1)
    html_b, md_b = _build(b, tmp_path / "out_b", workers=2)
    assert html_a.encode() == html_b.encode()
    assert md_a.encode() == md_b.encode()
    pngs_a = sorted((tmp_path / "out_a" / "summary_figures").glob("*.png"))
    pngs_b = sorted((tmp_path / "out_b" / "summary_figures").glob("*.png"))
    assert len(pngs_a) > 8 and [p.name for p in pngs_a] == [p.name for p in pngs_b]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(pngs_a, pngs_b, strict=True))


def test_a_rebuild_after_a_code_change_rewrites_only_the_figure_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuilding a committed report in place reproduces every file it writes but the
    figures' cache keys, which hash the code and are git-ignored
    (tests/test_repository.py): so a rebuild with changed code changes nothing tracked."""
    from gpubench.report import figures

    paths = write_set(tmp_path / "in")
    out = tmp_path / "out"
    _build(paths, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr(figures, "code_version", lambda: "another version of the code")
    _build(paths, out)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    keys = Path("summary_figures") / figures.KEYS_FILE
    assert set(before) == set(after) and keys in after
    changed = sorted(str(k) for k in after if after[k] != before[k])
    assert changed == [str(keys)]


# -- bad input ----------------------------------------------------------------------------


def test_no_gpu_rows(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "in", gpu=False)
    html, md = _build(paths, tmp_path / "out")
    assert "CPU only: this run has no GPU step" in html
    assert "CPU only: this run has no GPU step" in md
    assert "No crossover" in html
    assert cases_drawn(html) > 0  # the CPU rows are still drawn


def test_older_schema_is_shown_with_a_note(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "in")
    frame = pd.read_csv(paths["timings"])
    frame.drop(columns=["env_lock", "ceiling", "pct_of_ceiling", "first_call_s"]).to_csv(
        paths["timings"], index=False)
    html, md = _build(paths, tmp_path / "out")
    assert "older gpubench" in html and "pct_of_ceiling" in html and "older gpubench" in md
    assert "the first call's extra cost" in md  # what it lacks, in words
    assert cases_drawn(html) > 0


@pytest.mark.parametrize("content", ["", "not,a\ngpubench,file\n", "\x00\x01garbage"])
def test_corrupt_timings_give_a_clear_message(tmp_path: Path, content: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "timings.csv"
    bad.write_text(content)
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--timings", str(bad), "--env", str(tmp_path / "none.json"),
                  "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "s.md")])
    assert exc.value.code == 2
    assert "timings.csv" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_missing_timings_and_bad_samples(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["report", "--timings", str(tmp_path / "nope.csv"), "--env", "x.json",
                  "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "s.md")])
    assert "nope.csv: file is missing" in capsys.readouterr().err
    paths = write_set(tmp_path / "in")
    paths["samples"].write_text("garbage\n1\n")
    html, _ = _build(paths, tmp_path / "out")
    assert "missing columns" in html  # noted; the report falls back to the quartiles


# -- run-vs-run comparison ----------------------------------------------------------------


def test_compare_labels_from_samples(tmp_path: Path) -> None:
    write_set(tmp_path / "base")
    new = write_set(tmp_path / "new", env={**ENV, "gpus": [{"name": "Other GPU"}]})
    # new: cupy 30 % slower everywhere (fresh samples), numpy unchanged
    t = pd.read_csv(new["timings"])
    s = pd.read_csv(new["samples"])
    cupy = s["backend"] == "cupy-gpu"
    s.loc[cupy, "time_s"] *= 1.3
    scale_times(t, t["backend"] == "cupy-gpu", 1.3)  # every clock, as the samples
    t.to_csv(new["timings"], index=False)
    s.to_csv(new["samples"], index=False)
    out = tmp_path / "cmp.html"
    cmp = compare.build_compare(tmp_path / "base", new["timings"], out, tmp_path / "cmp.md",
                                workers=1)
    cupy = cmp[cmp["backend"] == "cupy-gpu"]
    # rows the gates refuse (matmul above the GEMM ceiling, in both sets) are not compared
    both_ok = (cupy["status_base"] == "ok") & (cupy["status_new"] == "ok")
    assert set(cupy.loc[both_ok, "label"]) == {stats.SLOWER} and both_ok.sum() >= 20
    assert set(cupy.loc[~both_ok, "label"]) <= {"NOT COMPARABLE"}
    assert set(cmp.loc[cmp["backend"] == "numpy-cpu", "label"]) == {stats.SAME}
    assert (cmp["method"].isin(["hodges-lehmann", ""])).all()
    assert "NOT COMPARABLE" in set(cmp["label"])  # the numba error row
    html = out.read_text(encoding="utf-8")
    assert "Other GPU" in html and "Mann–Whitney" in html and '<div class="plot compare"' in html
    assert EVIL not in html
    assert "| SLOWER |" in (tmp_path / "cmp.md").read_text(encoding="utf-8")
    # byte-identical when repeated
    again = tmp_path / "cmp2.html"
    compare.build_compare(tmp_path / "base", new["timings"], again, workers=2)
    assert again.read_bytes() == out.read_bytes()


def test_compare_cli_and_gpu_threads_ignored(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    write_set(tmp_path / "base")
    new = write_set(tmp_path / "new")
    t = pd.read_csv(new["timings"])
    t.loc[t["device"] == "gpu", "threads"] = 32  # another host's core count
    t.to_csv(new["timings"], index=False)
    s = pd.read_csv(new["samples"])
    s.loc[s["device"] == "gpu", "threads"] = 32
    s.to_csv(new["samples"], index=False)
    rc = cli.main(["compare", "--base", str(tmp_path / "base"), "--new", str(tmp_path / "new"),
                   "--html", str(tmp_path / "c.html"), "--jobs", "1"])
    assert rc == 0
    printed = capsys.readouterr().out
    m = re.search(r"(\d+) shared measurements: SLOWER (\d+), FASTER (\d+), SAME (\d+)", printed)
    assert m and int(m.group(1)) > 40
    assert int(m.group(2)) + int(m.group(3)) <= 2  # same data: (almost) all SAME


def test_env_json_is_data_not_markup(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "in", env={**ENV, "host": EVIL,
                                            "ceilings": {"d2d_copy_gbps": EVIL}})
    html, _ = _build(paths, tmp_path / "out")
    assert EVIL not in html and "&lt;img src=x" in html
    assert json.loads(paths["env"].read_text())["host"] == EVIL


def _pick_row(backend: str, median: float, timer: str) -> pd.Series:
    return pd.Series({"backend": backend, "implementation": "x", "median_s": median,
                      "q1_s": median * 0.99, "q3_s": median * 1.01, "timer": timer,
                      "device": "gpu", "caller_s": median + 5e-6, "sync_s": median + 9e-6})


@pytest.mark.parametrize(("fast", "slow", "timers", "verdict"), [
    (1.1e-6, 3.4e-6, ("cupti_kernels", "cuda_event"), "no verdict"),   # clock floors
    (1.1e-6, 3.4e-6, ("cuda_event", "cuda_event"), "sure"),            # same clock
    (100e-6, 300e-6, ("cupti_kernels", "cuda_event"), "sure"),         # far apart
    (0.7e-6, 1.1e-6, ("perf_counter", "cupti_kernels"), "no verdict"),  # CPU vs JAX
])
def test_rows_timed_by_different_clocks_get_no_verdict_when_close(fast, slow, timers,
                                                                  verdict) -> None:
    """A CUDA-event pair reads ~3.4 µs around a kernel CUPTI times at 1.1 µs: a ranking
    across clocks a few µs apart would rank the clocks, not the frameworks."""
    rng = np.random.default_rng(0)
    w, r = _pick_row("jax-gpu", fast, timers[0]), _pick_row("cupy-gpu", slow, timers[1])
    v = stats.compare(fast, slow, fast * (1 + 0.01 * rng.standard_normal(30)),
                      slow * (1 + 0.01 * rng.standard_normal(30)))
    p = sections.Pick(1024, w, r, v, clock="device")
    assert p.sure == (verdict == "sure")
    assert (verdict in p.text()) if verdict == "no verdict" else ("sure:" in p.text())
    # the caller's clock is one clock for every row: the rule does not apply there
    assert sections.Pick(1024, w, r, v, clock="caller").clocks_differ is False


def _target_rows() -> pd.DataFrame:
    rows = []
    for backend, impl, kernel, variant, dtype, size, pct in [
        ("numba-gpu", "cuda_jit", "elementwise", "sigmoid", "float32", 1 << 26, 77.0),
        ("numba-gpu", "vectorize_cuda", "elementwise", "sigmoid", "float32", 1 << 26, 60.0),
        ("numba-gpu", "cuda_jit", "elementwise", "hypot", "float32", 1 << 26, 92.0),
        ("numba-gpu", "cuda_jit", "elementwise", "sigmoid", "float32", 1 << 20, 10.0),
        ("cupy-gpu", "raw_kernel", "elementwise", "sigmoid", "float32", 1 << 26, 95.0),
        ("cupy-gpu", "cublas", "matmul", "default", "float64", 8192, 97.0),
        ("cupy-gpu", "raw_naive", "matmul", "default", "float64", 8192, 3.0),
        ("numpy-cpu", "ufunc", "elementwise", "sigmoid", "float32", 1 << 26, 20.0),
    ]:
        rows.append({"backend": backend, "implementation": impl, "kernel": kernel,
                     "variant": variant, "dtype": dtype, "size_key": size,
                     "pct_of_ceiling": pct, "status": "ok", "mode": "hot",
                     "device": "cpu" if backend == "numpy-cpu" else "gpu"})
    return pd.DataFrame(rows)


def test_targets_table_shows_each_gpu_backends_weakest_case() -> None:
    """The weakest (variant, dtype) of a backend's best implementations at the largest
    size is what meets or misses the target; hand-written matmuls and CPUs do not count."""
    md = sections.targets_table(_target_rows(), "hot").report.markdown()
    assert "| elementwise | numba-gpu | sigmoid / float32 | 77.0 % |" in md
    assert "MISSED" in md.split("numba-gpu")[1].splitlines()[0]
    assert "| elementwise | cupy-gpu | sigmoid / float32 | 95.0 % |" in md
    assert "| matmul | cupy-gpu | default / float64 | 97.0 % |" in md  # not raw_naive's 3 %
    assert "numpy-cpu" not in md
    assert sections.targets_table(_target_rows().assign(status="error"), "hot") is None


def test_halo_target_is_the_weak_efficiency_at_the_most_ranks() -> None:
    from gpubench.report import mpi as mpi_report

    ok = pd.DataFrame([
        {"job": "halo", "mode": "weak", "backend": b, "path": "staged", "size": 64,
         "ranks": r, "efficiency": e}
        for b, r, e in [("numba-gpu", 1, 1.0), ("numba-gpu", 2, 0.95), ("numba-gpu", 4, 0.75),
                        ("cupy-gpu", 1, 1.0), ("cupy-gpu", 4, 0.99)]])
    md = mpi_report.halo_target_table(ok).report.markdown()
    assert "| numba-gpu | staged | 64 | 4 | 0.75 | MISSED |" in md
    assert "| cupy-gpu | staged | 64 | 4 | 0.99 | met |" in md
    assert "| 2 |" not in md


def _split_rows(tmp_path: Path, gpu_uuids: str) -> Path:
    """A blocking and an overlapped halo row pair with their split, plus the fixture's
    rows other than its halo (which ran on one GPU per rank)."""
    from report_data import mpi_rows

    frame = mpi_rows()
    frame = frame[frame["job"] != "halo"]
    extra = []
    for job, med, comp, comm in (("halo", 4e-3, 1e-3, 2.5e-3), ("halo_overlap", 3e-3, 1.4e-3,
                                                                 1e-3)):
        row = frame.iloc[0].to_dict()
        row.update(job=job, ranks=2, size=4096, mode="weak", path="staged", median_s=med,
                   mean_s=med * 1.1, compute_s=comp, comm_s=comm, compute_max_s=comp * 1.2,
                   comm_max_s=comm * 1.5, gpu_uuids=gpu_uuids,
                   hidden_s=1.5e-3 if job == "halo_overlap" else "")
        extra.append(row)
    path = tmp_path / "mpi.csv"
    pd.concat([frame, pd.DataFrame(extra)], ignore_index=True).to_csv(path, index=False)
    return path


def test_mpi_split_and_overlap_tables(tmp_path: Path) -> None:
    """The split shows compute, communication and the rest of the mean step; the halo
    pair shows both times, the overlap's speedup and the time hidden; ranks sharing one
    GPU make the report say the multi-GPU figures are still to come."""
    from gpubench.report import mpi as mpi_report

    s = mpi_report.section(mpi_report.load_mpi(_split_rows(tmp_path, "GPU-0;GPU-0")))
    split = s.split.report.markdown()
    # halo: 4.4 ms mean step, 1 ms compute, 2.5 ms communication, 0.9 ms rest, 57 %
    assert "| halo | cupy-gpu | staged | weak | 4,096 | 2 | 1 GPU, shared | 4.4 ms | " \
           "1 ms | 2.5 ms | 900 µs | 57 % | 3.75 ms |" in split
    overlap = s.overlap.report.markdown()
    assert "| cupy-gpu | staged | weak | 4,096 | 2 | 1 GPU, shared | 4 ms | 3 ms | 1.33× " \
           "| 2.5 ms | 1 ms | 1.5 ms | 60 % |" in overlap
    assert "multi-GPU figures (one GPU per rank) come when a multi-GPU machine" in s.multi_gpu
    md = mpi_report.mpi_markdown(mpi_report.load_mpi(tmp_path / "mpi.csv"))
    assert "Halo exchange: blocking vs overlapped" in md and s.multi_gpu in md
    spread = mpi_report.section(mpi_report.load_mpi(_split_rows(tmp_path, "GPU-0;GPU-1")))
    assert spread.multi_gpu == ""
    assert "| 2 GPUs |" in spread.overlap.report.markdown()


def _p2p_rows(tmp_path: Path, uuids: str, direct_small_s: float = 2e-6) -> Path:
    """p2p ping-pongs of CuPy ranks at 1 B and 256 MiB, direct and staged (quartiles
    apart unless ``direct_small_s`` says otherwise), and the peer copy's reference."""
    from gpubench.mpi import schema

    rows = []

    def add(job: str, path: str, mode: str, size: int, t: float) -> None:
        one_way = t if job == "peer_copy" else t / 2  # a ping-pong's sample: a round trip
        r = schema.empty_row()
        r.update(job=job, backend="cupy-gpu", framework="cupy", device="gpu", ranks=2,
                 size=size, dtype="uint8", path=path, mode=mode, status="ok", samples=9,
                 median_s=t, q1_s=0.98 * t, q3_s=1.02 * t, gbps=size / one_way / 1e9,
                 latency_us=one_way * 1e6, host="h", link_gbps=450.0,
                 gpu_uuids="" if job == "peer_copy" else uuids)
        rows.append(r)

    big = 1 << 28
    add("peer_copy", "n/a", "0->1", big, big / 400e9)
    add("peer_copy", "n/a", "1->0", big, big / 400e9)
    add("p2p", "direct", "", big, 2 * big / 300e9)
    add("p2p", "staged", "", big, 2 * big / 3e9)
    add("p2p", "direct", "", 1, direct_small_s)
    add("p2p", "staged", "", 1, 2e-5)
    frame = schema.add_link(schema.rows_frame(rows))
    frame.to_csv(tmp_path / "mpi.csv", index=False)
    return tmp_path / "mpi.csv"


def test_mpi_link_table_and_the_staging_verdict(tmp_path: Path) -> None:
    """Each path against the link measured on the same host (peer copy: 400 GB/s), and
    the claim that CUDA-aware MPI beats staging judged on ranks with a GPU each: direct
    faster at both ends holds; slower latency does not; ranks sharing a GPU: not judged."""
    from gpubench.report import mpi as mpi_report

    s = mpi_report.section(mpi_report.load_mpi(_p2p_rows(tmp_path, "GPU-0;GPU-1")))
    link = s.link.report.markdown()
    assert "| p2p | cupy-gpu | direct | — | 2 | 2 GPUs | 268,435,456 | 300 | 75 % | 67 % | " \
           "1 | 1 |" in link
    assert "| peer_copy | cupy-gpu | n/a | 0 → 1 | 2 | one process | 268,435,456 | 400 | — | " \
           "89 % |" in link
    assert s.staging.startswith(mpi_report.STAGING_CLAIM + ": holds for point-to-point, on two")
    assert "direct 100× faster" in s.staging and "75 % of the measured link" in s.staging
    md = mpi_report.mpi_markdown(mpi_report.load_mpi(tmp_path / "mpi.csv"))
    assert s.staging in md and "measured: peer copy on the same host" in md
    slow = mpi_report.section(mpi_report.load_mpi(
        _p2p_rows(tmp_path, "GPU-0;GPU-1", direct_small_s=4e-5))).staging
    assert ": holds for some" not in slow and ": does not hold" in slow
    assert "direct 2× slower" in slow
    shared = mpi_report.section(mpi_report.load_mpi(_p2p_rows(tmp_path, "GPU-0;GPU-0")))
    assert shared.staging == "" and shared.link is not None


def test_mpi_staging_verdict_judges_mpi_allreduce_beside_point_to_point(tmp_path: Path
                                                                         ) -> None:
    """A library may pass device buffers and still reduce them on the host: MPI's
    allreduce of device buffers is compared with staging them, NCCL beside it; a share
    under 10 % keeps two digits (0.72 %, not 0 %)."""
    import pandas as pd

    from gpubench.mpi import schema
    from gpubench.report import mpi as mpi_report

    frame = pd.read_csv(_p2p_rows(tmp_path, "GPU-0;GPU-1"))
    rows = []
    for path, mode, t in (("direct", "mpi_allreduce", 0.8), ("staged", "mpi_allreduce", 0.3),
                          ("direct", "nccl", 0.001)):
        r = schema.empty_row()
        r.update(job="allreduce", backend="cupy-gpu", framework="cupy", device="gpu",
                 ranks=2, size=1 << 28, dtype="float32", path=path, mode=mode,
                 status="ok", samples=9, median_s=t, q1_s=0.98 * t, q3_s=1.02 * t,
                 gbps=(1 << 28) / t / 1e9, bus_gbps=(1 << 28) / t / 1e9,
                 gpu_uuids="GPU-0;GPU-1", host="h")
        rows.append(r)
    both = pd.concat([frame, schema.rows_frame(rows)], ignore_index=True)
    both.to_csv(tmp_path / "mpi.csv", index=False)
    s = mpi_report.section(mpi_report.load_mpi(tmp_path / "mpi.csv"))
    assert ": holds for point-to-point" in s.staging
    assert ("MPI_Allreduce of device buffers, bus bandwidth: cupy-gpu on 2 GPUs at "
            "268,435,456 B: direct 0.336 GB/s against staged 0.895 GB/s (direct 2.67× "
            "slower); NCCL 268 GB/s") in s.staging
    assert mpi_report._pct(0.7217) == "0.72 %" and mpi_report._pct(97.6) == "98 %"
