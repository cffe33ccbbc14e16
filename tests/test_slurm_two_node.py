"""MPI across nodes under SLURM: a two-node cluster on one machine
(tests/slurm/setup-two-node-cluster.sh: network namespaces node1 10.77.0.1 and node2
10.77.0.2 joined by a veth pair, slurmctld + slurmdbd + one slurmd per node, 2 CPUs and 4
fake GPUs each), `snakemake --profile profiles/slurm` on it, Open MPI over TCP between
the nodes, faults (a node lost mid-step, a node drained).

Needs root, network namespaces (`ip`, `unshare`, `nsenter`) and SLURM, or apt-get to
install it; skipped otherwise, with the reason. Every process the cluster started is
ended by its PID at the end (tests/slurm/teardown-two-node-cluster.sh). The test-only
settings are the workflow profile tests/slurm/profile-2node.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpubench.mpi import JOBS

ROOT = Path(__file__).resolve().parents[1]
SLURM_DIR = ROOT / "tests" / "slurm"
SETUP = SLURM_DIR / "setup-two-node-cluster.sh"
TEARDOWN = SLURM_DIR / "teardown-two-node-cluster.sh"
NODE = SLURM_DIR / "two-node-exec"  # two-node-exec N CMD...: CMD on node N
SMOKE = ROOT / ".test" / "config" / "config.yaml"
SNAKEMAKE = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
NETWORK = "10.77.0.0/24"

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]


def _why_no_cluster() -> str | None:
    if os.environ.get("GPUBENCH_SKIP_SLURM"):
        return "GPUBENCH_SKIP_SLURM is set"
    if sys.platform != "linux":
        return "the two-node SLURM cluster needs Linux network namespaces"
    if os.geteuid() != 0:
        return ("the two-node SLURM cluster needs root (network namespaces, daemons, "
                "/etc/slurm-2node); run as root or in CI")
    for tool in ("ip", "unshare", "nsenter"):
        if not shutil.which(tool):
            return f"`{tool}` is missing (apt-get install iproute2 util-linux)"
    probe = subprocess.run(["unshare", "--net", "--uts", "--mount", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare cannot create namespaces here: {probe.stderr.strip()[:200]}"
    if not shutil.which("apt-get") and not shutil.which("slurmctld"):
        return "neither apt-get nor an installed SLURM (slurmctld) is available"
    return None


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    reason = _why_no_cluster()
    if reason:
        pytest.skip(reason)
    try:
        proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True,
                              timeout=1200)
        assert proc.returncode == 0, (
            f"cluster setup failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        yield
    finally:
        subprocess.run(["bash", str(TEARDOWN)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    """A folder both nodes see (each node has a /tmp of its own, as on a cluster)."""
    path = Path(tempfile.mkdtemp(prefix="gpubench-2node-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def on_node(n: int, *cmd: str, timeout: float = 60) -> str:
    proc = subprocess.run([str(NODE), str(n), *cmd], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{cmd}: {proc.stderr}"
    return proc.stdout


def site_env() -> dict[str, str]:
    """What a site's MPI module would set: mpi4py on Debian's Open MPI (built with the
    scheduler's PMIx, as in test_slurm_cluster.py), its TCP traffic on the cluster's
    network only (each namespace also has a loopback the other cannot reach), and the
    Numba CUDA simulator for the GPU ranks (the GPUs are fake)."""
    env = {**os.environ, "PYTHONWARNINGS": "", "NUMBA_ENABLE_CUDASIM": "1",
           "OMPI_MCA_btl_tcp_if_include": NETWORK, "OMPI_MCA_oob_tcp_if_include": NETWORK,
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    for lib in sorted(Path("/usr/lib").glob("*/libmpi.so.40")):
        env["MPI4PY_LIBMPI"] = str(lib)
        break
    return env


def write_config(work: Path, name: str, backends: list[str], ranks: list[int],
                 jobs: dict[str, dict], **mpi: object) -> Path:
    config = yaml.safe_load(SMOKE.read_text())
    config.update(results_dir=str(work / name / "results"), logs_dir=str(work / name / "logs"),
                  backends=backends)
    config["mpi"] = {
        "enabled": True, "launcher": "srun", "backends": backends, "ranks": ranks,
        "oversubscribe": False, "time_limit_s": 120,
        "harness": {"warmup": 1, "min_samples": 3, "max_samples": 20,
                    "target_rel_spread": 0.2, "max_time_s": 0.02},
        "jobs": {job: jobs.get(job, {"enabled": False}) for job in JOBS}, **mpi}
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake_cmd(work: Path, config: Path, *args: str) -> list[str]:
    results = yaml.safe_load(config.read_text())["results_dir"]
    return [str(NODE), "1", SNAKEMAKE, "--profile", "profiles/slurm", "--workflow-profile",
            str(SLURM_DIR / "profile-2node"), "--slurm-logdir", str(work / "slurm-logs"),
            "--configfile", str(config), *args, "--", f"{results}/mpi.csv"]


def snakemake(work: Path, config: Path, *args: str,
              timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(snakemake_cmd(work, config, *args), cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=site_env())
    took = time.monotonic() - start
    print(f"\ntwo-node run {config.stem} {' '.join(args)}: {took:.0f} s", file=sys.stderr)
    return proc, took


def steps(since: str) -> pd.DataFrame:
    """The MPI launches (srun steps) SLURM ran since ``since``: where, how many tasks."""
    out = on_node(1, "sacct", "-P", "-n", "-S", since, "-o", "JobID,NodeList,NTasks,State")
    rows = [line.split("|") for line in out.splitlines() if line]
    frame = pd.DataFrame(rows, columns=["id", "nodes", "ntasks", "state"])
    # numbered steps of more than one task: MPI launches (a one-task step is
    # Snakemake's own job step, e.g. collect_mpi's)
    return frame[frame["id"].str.fullmatch(r"\d+\.\d+") & (frame["ntasks"] != "1")]


def answers(row: pd.Series) -> dict[str, list[str]]:
    """A device_selection row's per-node answers: {host: [device of each rank there]}."""
    out: dict[str, list[str]] = {}
    for ident in str(row["gpu_uuids"]).split(";"):
        host, device = ident.split(":")
        out.setdefault(host, []).append(device)
    return out


@pytest.fixture(scope="module")
def main_run(cluster, work):
    """CPU (NumPy) and GPU (Numba, simulated) MPI steps with 2 and 4 ranks, spread over
    both nodes; ranks placed round-robin (srun --distribution=cyclic), the placement
    under which a strategy that uses the global rank puts two ranks on one GPU; every
    rank sees its node's GPUs (mpi.srun_gpus: false), so the strategies choose."""
    config = write_config(work, "main", ["numpy-cpu", "numba-gpu"], [2, 4],
                          {"device_selection": {}, "reduction": {"sizes": [4096]}},
                          launcher_args=["--distribution=cyclic"], srun_gpus=False)
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    proc, took = snakemake(work, config)
    results = Path(yaml.safe_load(config.read_text())["results_dir"])
    mpi = pd.read_csv(results / "mpi.csv") if proc.returncode == 0 else None
    return proc, took, since, mpi


def test_mpi_steps_run_across_both_nodes(main_run):
    proc, _, since, mpi = main_run
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    reduction = mpi[mpi["job"] == "reduction"]
    cpu = reduction[reduction["backend"] == "numpy-cpu"]
    assert sorted(cpu["ranks"]) == [2, 4] and (cpu["status"] == "ok").all(), cpu
    assert (cpu["rel_err"] <= cpu["tolerance"]).all()
    assert reduction["launcher"].str.contains("srun --ntasks").all(), reduction["launcher"]
    assert reduction["mpi_library"].str.contains("Open MPI").all()
    # every MPI launch was one SLURM step over both nodes, with all its ranks
    launched = steps(since)
    assert len(launched) >= 8, launched  # 2 jobs x 2 backends x 2 rank counts
    assert (launched["nodes"] == "node[1-2]").all(), launched
    assert set(launched["ntasks"]) == {"2", "4"}, launched


def test_device_selection_answers_per_node(main_run):
    proc, _, _, mpi = main_run
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    sel = mpi[(mpi["job"] == "device_selection") & (mpi["backend"] == "numba-gpu")]
    four = sel[sel["ranks"] == 4].set_index("mode")
    for strategy in ("local_rank", "shared_comm", "cuda_visible_devices"):
        row = four.loc[strategy]
        assert row["status"] == "ok", (strategy, row["reason"])
        # cyclic: ranks 0, 2 on node1 and 1, 3 on node2; each node's local ranks 0, 1
        assert answers(row) == {"node1": ["gpu0", "gpu1"], "node2": ["gpu0", "gpu1"]}, \
            (strategy, row["gpu_uuids"])
    modulo = four.loc["rank_modulo"]  # global rank % 2: ranks 0 and 2 both get gpu0
    assert modulo["status"] == "error", modulo["gpu_uuids"]
    assert "ranks 0, 2 share node1:gpu0" in modulo["reason"]
    assert "ranks 1, 3 share node2:gpu1" in modulo["reason"]
    assert four.loc["launcher", "status"] == "skipped"  # 2 GPUs visible, not 1
    # one rank a node: each node answers for its own rank, and the node-local strategies
    # agree (which GPU a node's allocation holds depends on the jobs running beside it)
    two = sel[sel["ranks"] == 2].set_index("mode")
    local = answers(two.loc["local_rank"])
    assert sorted(local) == ["node1", "node2"] and all(len(d) == 1 for d in local.values())
    for strategy in ("shared_comm", "cuda_visible_devices"):
        assert answers(two.loc[strategy]) == local, (strategy, two.loc[strategy, "gpu_uuids"])
    cpu = mpi[(mpi["job"] == "device_selection") & (mpi["backend"] == "numpy-cpu")]
    assert (cpu.loc[cpu["mode"] == "local_rank", "status"] == "ok").all(), cpu


def worker_pids_on(ns: str) -> list[int]:
    """PIDs of MPI ranks (gpubench.mpi.worker) in a node's network namespace."""
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    found = []
    for pid in out.split():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"gpubench.mpi.worker" in cmdline:
            found.append(int(pid))
    return found


@pytest.fixture(scope="module")
def lost_node_run(cluster, work):
    """node2 lost mid-step: once a rank runs there, every process in node2's namespace
    (slurmd, slurmstepd, the ranks) is killed, by PID."""
    # one item that measures for 8 s (a spread it never reaches, then the time cap)
    config = write_config(work, "lost", ["numpy-cpu"], [2], {
        "reduction": {"sizes": [4096]}}, harness={
            "warmup": 1, "min_samples": 3, "max_samples": 10**8,
            "target_rel_spread": 1e-12, "max_time_s": 8})
    start = time.monotonic()
    sm = subprocess.Popen(snakemake_cmd(work, config), cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=site_env())
    killed: list[str] = []
    try:
        deadline = time.monotonic() + 240
        while not worker_pids_on("gb2-node2") and time.monotonic() < deadline \
                and sm.poll() is None:
            time.sleep(0.5)
        if worker_pids_on("gb2-node2"):
            time.sleep(2)  # the step is measuring
            out = subprocess.run(["ip", "netns", "pids", "gb2-node2"], capture_output=True,
                                 text=True).stdout
            for pid in map(int, out.split()):
                try:
                    name = Path(f"/proc/{pid}/comm").read_text().strip()
                    os.kill(pid, signal.SIGKILL)
                    killed.append(name)
                except (OSError, ProcessLookupError):
                    pass
        output, _ = sm.communicate(timeout=400)
    finally:
        if sm.poll() is None:
            sm.kill()
            sm.wait()
    took = time.monotonic() - start
    print(f"\ntwo-node run lost: {took:.0f} s", file=sys.stderr)
    return config, sm.returncode, output, killed, took


def test_node_lost_mid_step_ends_as_rows_with_the_reason(lost_node_run):
    config, code, output, killed, took = lost_node_run
    assert "slurmd" in killed and "python" in killed, killed  # a rank was on node2
    assert code == 0, output[-5000:]
    results = Path(yaml.safe_load(config.read_text())["results_dir"])
    rows = pd.read_csv(results / "mpi.csv")
    assert len(rows) == 1 and rows["status"].iloc[0] == "error", rows
    assert "Node failure on node2" in rows["reason"].iloc[0], rows["reason"].iloc[0]
    # no hang: SLURM marks node2 down within its SlurmdTimeout (10 s), srun ends the
    # step, the step records its rows well before its time limit (120 s)
    assert took < 240, took


def test_rerun_completes_on_node1_with_node2_drained(lost_node_run, work):
    """After the loss node2 comes back, is drained by hand, and the same run again
    (--forcerun the step, as docs/slurm.md says for a step to measure again) completes on
    node1: SLURM places both ranks there."""
    config = lost_node_run[0]
    proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]  # node2's slurmd restarted
    on_node(1, "scontrol", "update", "nodename=node2", "state=drain", "reason=gpubench-test")
    try:
        assert "drain" in on_node(1, "sinfo", "-h", "-n", "node2", "-o", "%T")
        results = Path(yaml.safe_load(config.read_text())["results_dir"])
        since = time.strftime("%Y-%m-%dT%H:%M:%S")
        proc, _ = snakemake(work, config, "--forcerun", "mpi_job")
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
        rows = pd.read_csv(results / "mpi.csv")
        assert (rows["status"] == "ok").all(), rows[["status", "reason"]]
        launched = steps(since)
        assert len(launched) >= 1 and (launched["nodes"] == "node1").all(), launched
    finally:
        on_node(1, "scontrol", "update", "nodename=node2", "state=resume")
