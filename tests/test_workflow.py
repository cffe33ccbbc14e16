"""The Snakemake workflow end to end: dry run, a real smoke run, bad input up front."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from progress_check import check_progress

from gpubench import results

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
SMOKE = ROOT / ".test" / "config" / "config.yaml"

pytestmark = pytest.mark.workflow
HAS_GPU = Path("/dev/nvidiactl").exists()


def snakemake(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SNAKEMAKE, "--cores", "2", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONWARNINGS": ""})


def test_dry_run_of_default_config_plans_every_step(tmp_path):
    out = snakemake("-n", "--quiet", "rules", "--config", f"results_dir={tmp_path}/r",
                    f"logs_dir={tmp_path}/l")
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    for rule in ("probe", "run_backend", "collect", "report", "all"):
        assert rule in text


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("smoke")
    out = snakemake("--configfile", str(SMOKE), "--config", f"results_dir={base}/results",
                    f"logs_dir={base}/logs")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (base / "snakemake.log").write_text(out.stdout + out.stderr)
    return base


def test_smoke_run_produces_valid_timings_and_report(smoke_run):
    res = smoke_run / "results"
    frame = results.read_timings(res / "timings.csv")
    cpu = {"numpy-cpu", "python-cpu", "numba-cpu", "jax-cpu", "torch-cpu"}
    gpu = {"cupy-gpu", "numba-gpu", "jax-gpu", "torch-gpu", "cuda_python-gpu"}
    assert set(frame["backend"]) == cpu | gpu
    assert {"vector_add", "elementwise", "reduction", "matmul", "fft", "monte_carlo_pi",
            "moving_average", "linalg", "autodiff", "launch_overhead"} <= set(frame["kernel"])
    on_cpu = frame[frame["device"] == "cpu"]
    bad = on_cpu[~on_cpu["status"].isin(["ok", "skipped"])]
    assert bad.empty, bad[["backend", "implementation", "kernel", "status", "reason"]]
    on_gpu = frame[frame["device"] == "gpu"]
    if not HAS_GPU:
        # every GPU step is reported, each planned row unavailable with its reason
        assert (on_gpu["status"] == "unavailable").all()
        assert (on_gpu["reason"].str.len() > 10).all()
        assert set(on_gpu["backend"]) == gpu
    ok = frame[frame["status"] == "ok"]
    assert (ok["rel_err"] <= ok["tolerance"]).all()
    assert (ok["git_commit"] != "").all() and (ok["config_hash"] != "").all()
    samples = pd.read_csv(res / "samples.csv")
    assert len(samples) == int(ok["samples"].sum()) + int(
        frame.loc[frame["status"] != "ok", "samples"].fillna(0).sum())
    html = (res / "report" / "index.html").read_text()
    # the per-kernel results: one detail view drawn from rows embedded once, and every
    # row of the timings file as CSV beside the page
    assert "vector_add" in html and 'id="gpubench-details-data"' in html
    assert len(pd.read_csv(res / "report" / "index-rows.csv")) == len(frame)
    if not HAS_GPU:
        assert "unavailable" in html and "cupy-gpu" in html
    assert (res / "report" / "summary.md").read_text().strip()
    assert (res / "env" / "host.json").exists()
    for backend in ("numpy-cpu", "python-cpu", "numba-cpu", "jax-cpu", "torch-cpu"):
        log = (smoke_run / "logs" / "run_backend" / f"{backend}.log").read_text()
        assert "samples" in log  # progress is visible while the step runs


def test_progress_is_in_the_drivers_output_and_each_steps_log(smoke_run):
    check_progress((smoke_run / "snakemake.log").read_text(), smoke_run / "results",
                   smoke_run / "logs")


def test_snakemake_report_wraps_the_report(smoke_run):
    """`snakemake --report` works: the report rule's outputs are wrapped with report()."""
    out_file = smoke_run / "snakemake_report.html"
    out = snakemake("--configfile", str(SMOKE), "--config",
                    f"results_dir={smoke_run}/results", f"logs_dir={smoke_run}/logs",
                    "--report", str(out_file))
    assert out.returncode == 0, out.stderr[-3000:]
    text = out_file.read_text(encoding="utf-8", errors="replace")
    assert "index.html" in text and "summary.md" in text
    assert "gpubench report" in text  # the category of the wrapped outputs


def test_forcerun_report_keeps_the_users_files_and_replaces_its_own(smoke_run):
    """Re-running the report (here --forcerun report) replaces the report's own files;
    a file of the user's in report/ or in its figures folder stays."""
    report = smoke_run / "results" / "report"
    figures = report / "summary_figures"
    listed = (figures / ".gpubench-figures").read_text().split()
    assert listed and all((figures / name).is_file() for name in listed)
    mine = [report / "my-notes.txt", figures / "my-plot.png"]
    for path in mine:
        path.write_text("the user's")
    out = snakemake("--configfile", str(SMOKE), "--config",
                    f"results_dir={smoke_run}/results", f"logs_dir={smoke_run}/logs",
                    "--forcerun", "report", "--", f"{report}/index.html")
    assert out.returncode == 0, out.stderr[-3000:]
    assert all(path.read_text() == "the user's" for path in mine)
    assert (figures / ".gpubench-figures").read_text().split() == listed


def test_rerunning_one_framework_leaves_the_others(smoke_run):
    res = smoke_run / "results"
    before = {p.name: p.stat().st_mtime_ns for p in (res / "raw").glob("*.csv")}
    out = snakemake("--configfile", str(SMOKE), "--config", f"results_dir={smoke_run}/results",
                    f"logs_dir={smoke_run}/logs", "--forcerun", f"{res}/raw/python-cpu.csv",
                    "--", f"{res}/report/index.html")
    # asking for one step's file re-runs that framework alone (plus collect and report);
    # plain Python's step, the shortest, keeps the test short
    assert out.returncode == 0, out.stderr[-3000:]
    after = {p.name: p.stat().st_mtime_ns for p in (res / "raw").glob("*.csv")}
    assert after["python-cpu.csv"] != before["python-cpu.csv"]
    for other in ("numpy-cpu.csv", "jax-cpu.csv", "torch-cpu.csv"):
        assert after[other] == before[other], other


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("backends=['numpy-cpu','fortran-cpu']", "backends[1]"),
        ("threads=[0]", "threads[0]"),
        ("results_dir='a; rm -rf ~'", "results_dir"),
        ("results_dir=/", "results_dir"),
        (f"results_dir={Path.home()}", "results_dir"),
        ("logs_dir=/", "logs_dir"),
    ],
)
def test_bad_config_fails_before_any_job_with_the_key(override, key, tmp_path):
    out = snakemake("-n", "--config", override)
    assert out.returncode != 0
    assert f"config key {key}" in out.stderr + out.stdout
    assert "Traceback" not in out.stderr


def test_a_foreign_results_dir_is_refused_and_one_the_workflow_made_is_marked(tmp_path):
    """results_dir pointing at a folder of someone else's files is refused before any
    job, naming the key and the way out; a new folder gets the marker, and is used
    again."""
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_text("not gpubench's")
    out = snakemake("-n", "--config", f"results_dir={foreign}", f"logs_dir={tmp_path}/l")
    text = out.stderr + out.stdout
    assert out.returncode != 0 and "config key results_dir" in text
    assert "holiday.jpg" in text and ".gpubench-results" in text
    assert "Traceback" not in out.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["holiday.jpg"]
    fresh = tmp_path / "fresh"
    for _ in range(2):
        out = snakemake("-n", "--config", f"results_dir={fresh}", f"logs_dir={tmp_path}/l")
        assert out.returncode == 0, out.stderr[-3000:]
        assert (fresh / ".gpubench-results").is_file()


def test_bad_kernel_size_in_a_config_file(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kernels:\n  vector_add:\n    sizes: [1024, -3]\n")
    out = snakemake("-n", "--configfile", str(cfg))
    assert out.returncode != 0
    assert "config key kernels.vector_add.sizes[1]" in out.stderr + out.stdout


def test_unwritable_results_dir(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.geteuid() == 0:
        # root writes through any mode bits; /proc takes no new folders, even from root
        locked = Path("/proc/gpubench-locked")
    out = snakemake("-n", "--config", f"results_dir={locked}/results")
    assert out.returncode != 0 and "cannot write" in out.stderr + out.stdout


def test_unwritable_results_dir_as_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = snakemake("-n", "--config", f"results_dir={blocker}/results")
    assert out.returncode != 0
    assert "config key results_dir" in out.stderr + out.stdout


def test_slurm_profile_parses_and_plans(tmp_path):
    """profiles/slurm is read by Snakemake and its executor plugin (dry run, no cluster):
    with its SITE_* placeholders it refuses to start, naming them; with site values
    (the test cluster's, tests/slurm/profile) it plans every step."""
    cmd = [SNAKEMAKE, "--profile", "profiles/slurm", "-n", "--quiet", "rules",
           "--config", f"results_dir={tmp_path}/r", f"logs_dir={tmp_path}/l"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "default-resources.slurm_partition: SITE_PARTITION" in out.stdout + out.stderr
    assert "default-resources.slurm_account: SITE_ACCOUNT" in out.stdout + out.stderr
    out = subprocess.run([*cmd, "--workflow-profile", "tests/slurm/profile"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "run_backend" in out.stdout + out.stderr


def _jobs(text: str) -> list[tuple[str, str]]:
    """(rule, its resources line) of each job a dry run lists (a group job's are
    indented)."""
    jobs, rule = [], None
    for line in map(str.strip, text.splitlines()):
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            rule = line.split()[1].rstrip(":")
        elif rule and line.startswith("resources:"):
            jobs.append((rule, line))
            rule = None
    return jobs


@pytest.mark.parametrize("suite", ["quick", "full"])
def test_measuring_jobs_take_the_one_bench_slot_of_the_local_profile(suite, tmp_path):
    """Every framework's step, MPI job and the probe takes bench_slot=1, of which the
    local profile has one: with steps of one core on a host of more (step_threads: 1),
    cores alone would let them measure side by side."""
    import yaml

    profile = yaml.safe_load((ROOT / "profiles" / "local" / "config.yaml").read_text())
    assert "bench_slot=1" in profile["resources"]
    out = subprocess.run(
        [SNAKEMAKE, "--profile", "profiles/local", "--cores", "4", "-n", "--config",
         f"suite={suite}", "step_threads=1", f"results_dir={tmp_path}/r",
         f"logs_dir={tmp_path}/l"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    jobs = _jobs(out.stdout + out.stderr)
    measuring = [(rule, res) for rule, res in jobs if rule in ("run_backend", "mpi_job",
                                                               "probe")]
    assert {r for r, _ in measuring} >= {"run_backend", "probe"}
    if suite == "full":
        assert any(r == "mpi_job" for r, _ in measuring)
    missing = [(r, res) for r, res in measuring if "bench_slot=1" not in res]
    assert missing == []
    others = [(r, res) for r, res in jobs if r not in ("run_backend", "mpi_job", "probe")]
    assert others and not any("bench_slot" in res for _, res in others)
