"""gpubench.workflow without Snakemake: the checks before any job (config, folders, the
SLURM profile's site settings against fake sinfo/sacctmgr, environments, the run lock)
and each step's inputs and parameters. tests/test_workflow.py runs them through
Snakemake end to end."""

from __future__ import annotations

import copy
import fcntl
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
import yaml

from gpubench import runlock
from gpubench import workflow as gw

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.fixture
def config(shipped: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    cfg = copy.deepcopy(shipped)
    cfg.update(results_dir=str(tmp_path / "results"), logs_dir=str(tmp_path / "logs"))
    return cfg


def wc(**values: str) -> SimpleNamespace:
    """Wildcards as a rule's input function receives them (attributes)."""
    return SimpleNamespace(**values)


class Resources(dict):
    """A job's resources as Snakemake gives them: attributes and ``get``."""

    __getattr__ = dict.__getitem__


class FakeSlurm:
    """sinfo/sacctmgr stand-in for the injected command runner: records each command."""

    def __init__(self, partitions: str = "", accounts: str = "", rc: int = 0) -> None:
        self.out = {"sinfo": partitions, "sacctmgr": accounts}
        self.rc = rc
        self.calls: list[list[str]] = []

    def __call__(self, cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert kwargs.get("timeout"), "a SLURM client without a timeout can hang the start"
        self.calls.append(cmd)
        return subprocess.CompletedProcess(cmd, self.rc, self.out[cmd[0]], "")


def on_path(name: str) -> str:
    return f"/usr/bin/{name}"


# -- checks before any job -----------------------------------------------------------------


def test_bad_config_is_refused_naming_the_key(config):
    config["backends"] = ["numpy-cpu", "fortran-cpu"]
    with pytest.raises(gw.SetupError, match=r"^invalid configuration: config key backends\[1\]"):
        gw.check_config(config)


def test_good_config_comes_back_as_a_copy(config):
    out = gw.check_config(config)
    assert out == config and out is not config
    out["kernels"]["vector_add"]["sizes"].append(7)
    assert 7 not in config["kernels"]["vector_add"]["sizes"]


def test_writable_folder_is_made_and_left_clean(tmp_path):
    folder = tmp_path / "a" / "b"
    gw.check_writable(folder)
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_results_dir_under_a_file_is_refused(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(gw.SetupError) as err:
        gw.check_writable(blocker / "results")
    assert str(err.value).startswith(
        f"config key results_dir/logs_dir: cannot write to {str(blocker / 'results')!r}")


def test_site_settings_from_plain_mappings():
    found = gw.site_settings(
        {"slurm_partition": "'debug'", "slurm_account": "gpubench", "runtime": 30},
        {"run_backend": {"slurm_partition": '"gpu"', "mem_mb": 4000}, "probe": {}})
    assert found == [("default-resources", "slurm_partition", "debug"),
                     ("default-resources", "slurm_account", "gpubench"),
                     ("set-resources.run_backend", "slurm_partition", "gpu")]
    assert gw.site_settings(None, None) == []


def test_site_settings_from_snakemakes_resources():
    """What a profile's default-resources become in Snakemake (Resource values)."""
    resources = pytest.importorskip("snakemake.resources")
    def parse(*exprs: str) -> Any:
        return resources.Resources.parse(list(exprs), allow_expressions=True)

    defaults = parse("slurm_partition=SITE_PARTITION", "runtime=30 * attempt")
    rules = {"run_backend": parse("slurm_account='acct'", "mem_mb=4000")}
    assert gw.site_settings(defaults, rules) == [
        ("default-resources", "slurm_partition", "SITE_PARTITION"),
        ("set-resources.run_backend", "slurm_account", "acct")]


def test_placeholders_are_named_before_anything_is_asked():
    def no_run(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("SLURM asked while a placeholder is left")

    settings = [("default-resources", "slurm_partition", "SITE_PARTITION"),
                ("default-resources", "slurm_account", "SITE_ACCOUNT")]
    with pytest.raises(gw.SetupError) as err:
        gw.check_site_settings(settings, which=on_path, run=no_run)
    text = str(err.value)
    assert text.startswith("the profile still has site placeholders: ")
    assert "default-resources.slurm_partition: SITE_PARTITION" in text
    assert "default-resources.slurm_account: SITE_ACCOUNT" in text


@pytest.mark.parametrize("value", ["a; rm -rf ~", "$(id)", "gpu debug", "`id`", ""])
def test_shell_unsafe_name_is_refused(value):
    settings = [("set-resources.probe", "slurm_account", value)]
    with pytest.raises(gw.SetupError) as err:
        gw.check_site_settings(settings, which=lambda name: None)
    assert str(err.value).startswith(
        f"profile setting set-resources.probe.slurm_account: {value!r} is not a SLURM name")


def test_several_partitions_are_one_slurm_name():
    fake = FakeSlurm(partitions="debug*\ngpu\n")
    gw.check_site_settings([("default-resources", "slurm_partition", "debug,gpu")],
                           which=lambda name: None, run=fake)
    assert fake.calls == []  # no sinfo here: nothing asked


def test_partition_the_cluster_lacks_is_refused_with_the_ones_it_has():
    fake = FakeSlurm(partitions="debug*\nA100\n")
    with pytest.raises(gw.SetupError) as err:
        gw.check_site_settings([("default-resources", "slurm_partition", "gpu")],
                               which=on_path, run=fake)
    assert str(err.value) == ("profile setting default-resources.slurm_partition: 'gpu' is "
                              "not a partition of this cluster (it has: a100, debug)")
    assert fake.calls == [["sinfo", "-h", "-o", "%P"]]


def test_account_the_user_lacks_is_refused():
    fake = FakeSlurm(accounts="gpubench\nother\n")
    with pytest.raises(gw.SetupError, match=r"'nosuch' is not an account of this cluster "
                                            r"\(it has: gpubench, other\)"):
        gw.check_site_settings([("default-resources", "slurm_account", "nosuch")],
                               which=on_path, run=fake, user="alice")
    assert fake.calls == [["sacctmgr", "-n", "-P", "-s", "list", "user", "alice",
                           "format=account"]]


def test_known_partition_and_account_pass_whatever_their_case():
    fake = FakeSlurm(partitions="Debug*\n", accounts="gpubench\n")
    gw.check_site_settings([("default-resources", "slurm_partition", "debug"),
                            ("default-resources", "slurm_account", "GPUbench")],
                           which=on_path, run=fake, user="alice")
    assert [c[0] for c in fake.calls] == ["sinfo", "sacctmgr"]


@pytest.mark.parametrize("fake", [FakeSlurm(partitions="debug\n", rc=1), FakeSlurm()],
                         ids=["client-fails", "lists-nothing"])
def test_cluster_that_cannot_tell_lets_any_name_pass(fake):
    gw.check_site_settings([("default-resources", "slurm_partition", "gpu")],
                           which=on_path, run=fake)
    assert len(fake.calls) == 1


@pytest.mark.parametrize("exc", [OSError("no sinfo"), subprocess.TimeoutExpired("sinfo", 30)])
def test_slurm_client_that_is_missing_or_hangs_tells_nothing(exc):
    def run(*args: Any, **kwargs: Any) -> None:
        raise exc

    assert gw.slurm_names(["sinfo"], run) is None


def test_slurm_names_strip_the_default_mark():
    assert gw.slurm_names(["sinfo"], FakeSlurm(partitions="debug*\n gpu \n")) == {"debug",
                                                                                  "gpu"}


@pytest.mark.parametrize(("mode", "sdm", "message"), [
    ("conda", False, "config key environments.mode: conda needs --sdm conda"),
    ("venv", True, "--sdm conda is given but config key environments.mode is 'venv'"),
    ("system", True, "--sdm conda is given but config key environments.mode is 'system'"),
])
def test_env_mode_against_sdm(mode, sdm, message):
    with pytest.raises(gw.SetupError, match="^" + message.replace("-", r"\-")):
        gw.check_env_mode(mode, sdm)


@pytest.mark.parametrize(("mode", "sdm"), [("conda", True), ("venv", False),
                                           ("system", False)])
def test_env_mode_that_fits(mode, sdm):
    gw.check_env_mode(mode, sdm)


def test_missing_pip_spec_names_the_backend(tmp_path):
    (tmp_path / "numpy.txt").write_text("numpy\n")
    cfg = {"mode": "venv", "spec_dir": str(tmp_path), "cuda": 13}
    with pytest.raises(gw.SetupError) as err:
        gw.check_specs(["numpy-cpu", "jax-gpu"], cfg)
    assert str(err.value) == (
        f"config key backends[1]: jax-gpu has no pip spec {tmp_path}/jax-cuda13.txt "
        "(environments.spec_dir); add it or use environments.mode: system")
    gw.check_specs(["numpy-cpu"], cfg)
    gw.check_specs(["jax-gpu"], {**cfg, "mode": "system"})  # no specs needed


def test_results_dir_held_by_another_run_is_refused(tmp_path):
    lock = tmp_path / runlock.LOCK_NAME
    lock.write_text("pid 1 on elsewhere, started then in /somewhere\n")
    with open(lock) as other:  # another open file: flock treats it as another run
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(gw.SetupError) as err:
            gw.claim_results_dir(tmp_path)
    assert str(err.value).startswith(
        f"config key results_dir: {str(tmp_path)!r} is in use by another run "
        "(pid 1 on elsewhere")


def test_free_results_dir_is_claimed_for_this_process(tmp_path):
    gw.claim_results_dir(tmp_path)
    with open(tmp_path / runlock.LOCK_NAME) as fh:
        assert f"pid {os.getpid()} " in fh.read()
        with pytest.raises(BlockingIOError):
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_prepare_checks_the_config_before_the_profile(config):
    config["threads"] = [0]
    with pytest.raises(gw.SetupError, match=r"config key threads\[0\]"):
        gw.prepare(config, default_resources={"slurm_partition": "SITE_PARTITION"})


def test_prepare_refuses_an_unknown_partition(config):
    with pytest.raises(gw.SetupError, match="'gpu' is not a partition"):
        gw.prepare(config, default_resources={"slurm_partition": "gpu"}, which=on_path,
                   run=FakeSlurm(partitions="debug\n"))


def test_prepare_refuses_conda_without_sdm(config):
    config["environments"] = {"mode": "conda"}
    with pytest.raises(gw.SetupError, match="conda needs --sdm conda"):
        gw.prepare(config)
    assert gw.prepare(config, conda_sdm=True).env_mode == "conda"


def test_prepare_makes_the_folders_and_returns_the_plan(config):
    plan = gw.prepare(config, python="/py")
    assert Path(config["results_dir"]).is_dir() and Path(config["logs_dir"]).is_dir()
    assert plan.results == config["results_dir"] and plan.python == "/py"
    assert plan.config == config and plan.config is not config


# -- each step's inputs and parameters -----------------------------------------------------


def plan_of(config: dict[str, Any], **kwargs: Any) -> gw.Plan:
    return gw.Plan(gw.check_config(config), **kwargs)


def fake_venv(tmp_path: Path, copies: bool = False) -> Path:
    """A venv's bin/: python links to a base interpreter, python3 and python3.X to
    python (as ``python -m venv`` makes them); with ``copies``, python3 is a copy."""
    base = tmp_path / "base" / "python3.11"
    base.parent.mkdir(parents=True)
    base.write_text("#!/bin/sh\n")
    bin_ = tmp_path / "venv" / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "python").symlink_to(base)
    if copies:
        shutil.copy(base, bin_ / "python3")
    else:
        (bin_ / "python3").symlink_to("python")
    (bin_ / "python3.11").symlink_to("python")
    return bin_


def test_every_name_of_a_venvs_interpreter_gives_one_params_value(config, tmp_path):
    """A `snakemake` script installed through python3 starts Snakemake as
    .venv/bin/python3, `gpubench run` as .venv/bin/python: the rules' params (which
    Snakemake re-runs jobs on) must not see two interpreters."""
    bin_ = fake_venv(tmp_path)
    names = {gw.canonical_python(str(bin_ / n)) for n in ("python", "python3", "python3.11")}
    assert names == {str(bin_ / "python")}
    plan = plan_of(config, python=str(bin_ / "python3"))
    assert plan.python == plan.step_python(wc()) == plan.env_python(wc()) == str(bin_ / "python")


def test_canonical_python_never_swaps_a_venv_for_its_base(tmp_path):
    """The venv's name is kept (the base interpreter it links to has none of its
    packages); a copy that is not the same file, a name that is not python's, and a
    missing path are left as given."""
    bin_ = fake_venv(tmp_path)
    base = str(tmp_path / "base" / "python3.11")
    assert gw.canonical_python(base) == base
    assert gw.canonical_python(str(bin_ / "python")) == str(bin_ / "python")
    copied = fake_venv(tmp_path / "c", copies=True)
    assert gw.canonical_python(str(copied / "python3")) == str(copied / "python3")
    assert gw.canonical_python(str(copied / "python3.11")) == str(copied / "python")
    (bin_ / "pypy").symlink_to("python")
    assert gw.canonical_python(str(bin_ / "pypy")) == str(bin_ / "pypy")
    assert gw.canonical_python("/nowhere/bin/python3") == "/nowhere/bin/python3"


def test_mpi_steps_follow_jobs_backends_and_ranks(config):
    config["backends"] = ["numpy-cpu", "cupy-gpu", "jax-gpu"]
    config["mpi"].update(backends=["numpy-cpu", "cupy-gpu", "numba-gpu"], ranks=[1, 2],
                         jobs={"reduction": {}, "p2p": {}, "multi_gpu": {},
                               "halo": {"enabled": False}})
    steps = plan_of(config).mpi_steps()
    assert steps == [("reduction", "numpy-cpu", 1), ("reduction", "numpy-cpu", 2),
                     ("reduction", "cupy-gpu", 1), ("reduction", "cupy-gpu", 2),
                     ("p2p", "numpy-cpu", 2), ("p2p", "cupy-gpu", 2),
                     ("multi_gpu", "cupy-gpu", 1), ("multi_gpu", "cupy-gpu", 2)]


def test_mpi_outputs_only_when_steps_are_planned(config):
    plan = plan_of(config)
    res = config["results_dir"]
    assert plan.mpi_steps()
    assert plan.final_outputs() == [f"{res}/report/index.html", f"{res}/report/summary.md",
                                    f"{res}/mpi.csv"]
    assert plan.mpi_rows()[0] == f"{res}/mpi/raw/{'.'.join(map(str, plan.mpi_steps()[0][:2]))}" \
        f".n{plan.mpi_steps()[0][2]}.csv"
    assert len(plan.mpi_samples()) == len(plan.mpi_rows())
    assert plan.report_mpi_inputs(wc()) == {"mpi": f"{res}/mpi.csv",
                                            "mpi_samples": f"{res}/mpi_samples.csv"}
    config["mpi"]["enabled"] = False
    off = plan_of(config)
    assert off.mpi_steps() == [] and off.mpi_csv() == [] and off.report_mpi_inputs(wc()) == {}
    assert off.final_outputs() == [f"{res}/report/index.html", f"{res}/report/summary.md"]


def test_report_mpi_args_only_with_mpi_inputs(config):
    plan = plan_of(config)
    assert plan.report_mpi_args(wc(), Resources(timings="t.csv")) == ""
    assert plan.report_mpi_args(wc(), Resources(mpi="m.csv", mpi_samples="s.csv")) == \
        "--mpi m.csv --mpi-samples s.csv"


def test_mpi_time_limits(config):
    config["mpi"]["time_limit_s"] = 130
    plan = plan_of(config)
    assert plan.mpi_runtime_min(wc()) == 7  # 2 whole minutes + 5 of start-up
    assert plan.mpi_backstop_s(wc()) == 250
    assert json.loads(plan.mpi_step_config(wc())) == {
        "mpi": config["mpi"], "harness": {"seed": config["harness"]["seed"]}}


def test_raw_files_follow_the_backends(config):
    config["backends"] = ["numpy-cpu", "jax-gpu"]
    plan = plan_of(config)
    res = config["results_dir"]
    assert plan.raw_timings() == [f"{res}/raw/numpy-cpu.csv", f"{res}/raw/jax-gpu.csv"]
    assert plan.raw_samples() == [f"{res}/raw/numpy-cpu.samples.csv",
                                  f"{res}/raw/jax-gpu.samples.csv"]
    assert plan.step_locks() == [f"{res}/raw/numpy-cpu.lock.txt",
                                 f"{res}/raw/jax-gpu.lock.txt"]


def test_gpu_steps_take_a_gpu_and_group(config):
    plan = plan_of(config)
    assert plan.step_gpus(wc(backend="jax-gpu")) == 1
    assert plan.step_group(wc(backend="jax-gpu")) == "gpu"
    assert plan.step_gpus(wc(backend="jax-cpu")) == 0
    assert plan.step_group(wc(backend="jax-cpu")) is None
    assert plan.probe_gpus(wc()) == 1 and plan.probe_group(wc()) == "gpu"
    config["backends"] = ["numpy-cpu", "torch-cpu"]
    cpu_only = plan_of(config)
    assert cpu_only.probe_gpus(wc()) == 0 and cpu_only.probe_group(wc()) is None


def test_step_threads_default_to_every_core(config):
    config["step_threads"] = None
    assert plan_of(config, cores=lambda: 12).step_threads(wc()) == 12
    config["step_threads"] = 3
    assert plan_of(config, cores=lambda: 12).step_threads(wc()) == 3


def test_step_config_is_the_part_a_step_reads(config):
    text = plan_of(config).step_config(wc())
    assert set(json.loads(text)) == {"threads", "gpu_modes", "gpu_cold_max_bytes",
                                     "harness", "gpu_harness", "kernels",
                                     "environments"} | (
        {"energy"} if "energy" in config else set())
    # of the environments, only the mode: it decides which implementations are planned
    assert json.loads(text)["environments"] == {"mode": config["environments"]["mode"]}
    assert text == json.dumps(json.loads(text), sort_keys=True)  # stable: no spurious rerun


def test_attempts_in_a_dry_run_are_one_and_not_passed_on(config):
    environ: dict[str, str] = {}
    plan = plan_of(config, retries=lambda: None, environ=environ)
    assert plan.step_attempts() == 1 and environ == {}


def test_attempts_come_from_retries_and_pass_to_the_jobs(config):
    environ: dict[str, str] = {}
    plan = plan_of(config, retries=lambda: 2, environ=environ)
    assert plan.step_attempts() == 3
    assert environ == {gw.ATTEMPTS_VAR: "3"}
    # a job a cluster executor started: its own --retries 0 does not count
    job = plan_of(config, retries=lambda: 0, environ=environ)
    assert job.step_attempts() == 3


def test_guard_args(config):
    plan = plan_of(config, retries=lambda: 1, environ={})
    assert plan.step_guard_args(wc(backend="numpy-cpu"), Resources(attempt=1, runtime=60)) \
        == "--attempt 1 --attempts 2 --time-limit-min 60"
    # a later attempt than the scheduler knows of (its own count wins); no int runtime
    assert plan.step_guard_args(wc(), Resources(attempt=4, runtime="1h")) == \
        "--attempt 4 --attempts 4 --time-limit-min 0"
    assert plan.step_guard_args(wc(), Resources(attempt=1)).endswith("--time-limit-min 0")


def test_venv_mode_steps(config, tmp_path):
    config["environments"] = {"mode": "venv", "venv_dir": str(tmp_path / "v"), "cuda": 13}
    config["backends"] = ["jax-gpu", "jax-cpu", "numpy-cpu", "torch-gpu"]
    plan = plan_of(config, python="/driver/python")
    res, v = config["results_dir"], tmp_path / "v"
    jax = wc(backend="jax-gpu")
    assert plan.backend_env("jax-gpu") == "jax-cuda13"
    assert plan.env_locks() == [f"{res}/envs/{e}/lock.txt"
                                for e in ("jax-cpu", "jax-cuda13", "numpy", "torch-cuda13")]
    assert plan.step_env_inputs(jax) == {"env_lock": f"{res}/envs/jax-cuda13/lock.txt"}
    assert shlex.split(plan.step_env_args(jax)) == [
        "--env-mode", "venv", "--env-name", "jax-cuda13", "--env-lock",
        f"{res}/envs/jax-cuda13/lock.txt", "--env-python", f"{v}/jax-cuda13/bin/python"]
    assert plan.mpi_ranks_python(jax) == f"{v}/jax-cuda13/bin/python"
    assert plan.step_python(jax) == "/driver/python"
    assert plan.step_conda_env(jax) is None and plan.driver_conda_env(jax) is None
    assert plan.env_python(wc()) == "/driver/python"


def test_system_and_conda_mode_steps(config):
    config["environments"] = {"mode": "system"}
    system = plan_of(config, python="/driver/python")
    jax = wc(backend="jax-gpu")
    assert system.env_locks() == [] and system.step_env_inputs(jax) == {}
    assert system.step_env_args(jax) == "--env-mode system --env-name system"
    assert system.mpi_ranks_python(jax) == "/driver/python"
    config["environments"] = {"mode": "conda"}
    conda = plan_of(config, python="/driver/python")
    assert conda.step_env_args(jax) == "--env-mode conda --env-name jax-cuda12"
    assert conda.step_python(jax).endswith(" python") and conda.mpi_ranks_python(jax) == "python"
    assert conda.step_conda_env(jax) == "../envs/jax-cuda12.yaml"
    assert conda.driver_conda_env(jax) == "../envs/driver.yaml"


def test_conda_step_python_finds_the_package_it_does_not_have(config, tmp_path):
    """A conda env has gpubench's dependencies, not gpubench: the step's interpreter
    (the rules' ``{params.python} {params.script}``, also after ``timeout``) is started
    with src/ first on PYTHONPATH, which it keeps."""
    config["environments"] = {"mode": "conda"}
    conda = plan_of(config, python="/driver/python")
    bare = shutil.which("python3", path="/usr/bin:/bin")
    if bare is None:
        pytest.skip("no /usr/bin/python3 to stand for a conda env's python")
    (tmp_path / "python").symlink_to(bare)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "PYTHONPATH": "/elsewhere"}
    cmd = (f"timeout 60 {conda.step_python(wc(backend='jax-gpu'))} -c "
           "'import gpubench, os; print(gpubench.__file__, os.environ[\"PYTHONPATH\"])'")
    out = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    where, pythonpath = out.stdout.split()
    assert Path(where).parent == ROOT / "src" / "gpubench"
    assert pythonpath.endswith(":/elsewhere")


def test_env_build_policy(config):
    asked: list[int] = []

    def no_gpu() -> tuple[int, str]:
        asked.append(1)
        return 0, "NVML sees no GPU"

    plan = plan_of(config, gpus=no_gpu)
    assert plan.env_build(wc(env="numpy")) == "yes" and asked == []  # CPU env: not asked
    assert plan.env_build(wc(env="jax-cuda12")) == "no-gpu"
    assert plan.env_build(wc(env="torch-cuda12")) == "no-gpu"
    assert asked == [1]  # asked once per run
    assert plan_of(config, gpus=lambda: (2, "")).env_build(wc(env="jax-cuda12")) == "yes"
    config["environments"] = {"gpu_envs": "always"}
    assert plan_of(config, gpus=no_gpu).env_build(wc(env="jax-cuda12")) == "yes"
    config["environments"] = {"gpu_envs": "never"}
    assert plan_of(config, gpus=lambda: (2, "")).env_build(wc(env="jax-cuda12")) == "never"


def test_env_spec_inputs_and_pip_args(config, tmp_path):
    (tmp_path / "common.txt").write_text("pyyaml\n")
    (tmp_path / "numpy.txt").write_text("-r common.txt\nnumpy\n")
    config["environments"] = {"spec_dir": str(tmp_path), "pip_args": ["--index-url", "a b"]}
    plan = plan_of(config)
    assert plan.env_spec_inputs(wc(env="numpy")) == {
        "spec": str(tmp_path / "numpy.txt"), "includes": [str(tmp_path / "common.txt")]}
    assert shlex.split(plan.env_pip_args(wc())) == ["--pip-arg=--index-url", "--pip-arg=a b"]


def test_a_failed_run_ends_listing_its_failed_jobs_and_the_command_to_rerun_them():
    def job(rule: str, log: list[str], **wildcards: str) -> Any:
        return SimpleNamespace(rule=SimpleNamespace(name=rule), wildcards=wildcards,
                               log=log, is_group=lambda: False)

    gpu = SimpleNamespace(is_group=lambda: True, jobs=[job("probe", []), job(
        "run_backend", ["logs/run_backend/cupy-gpu.log"], backend="cupy-gpu")])
    jobs = [job("run_backend", ["logs/run_backend/numpy-cpu.log"], backend="numpy-cpu"), gpu]
    argv = ["snakemake", "--profile", "profiles/slurm", "--config", "results_dir=my results"]
    assert gw.failed_jobs_message(jobs, argv) == (
        "gpubench: 3 job(s) failed:\n"
        "  probe\n"
        "  run_backend backend=cupy-gpu (log: logs/run_backend/cupy-gpu.log)\n"
        "  run_backend backend=numpy-cpu (log: logs/run_backend/numpy-cpu.log)\n"
        "To run them again (finished steps are kept): snakemake --profile profiles/slurm "
        "--config 'results_dir=my results'")
    assert gw.failed_jobs_message([], argv) == ""


def test_a_plain_rerun_names_the_steps_stored_as_error_rows(tmp_path):
    """A finished step is kept, its error rows too: the run says which steps hold them
    and the --forcerun that measures them again; nothing when none does."""
    raw = tmp_path / "raw"
    raw.mkdir()
    pd.DataFrame({"status": ["ok", "error", "error"], "reason": [
        "", "SLURM job 57 ended CANCELLED by 0 (attempt 1 of 3)", "same"]}).to_csv(
        raw / "numpy-cpu.csv", index=False)
    pd.DataFrame({"status": ["ok"], "reason": [""]}).to_csv(raw / "numba-cpu.csv",
                                                            index=False)
    paths = [str(raw / f"{b}.csv") for b in ("numpy-cpu", "numba-cpu", "jax-cpu")]
    said = gw.stored_errors(paths)
    assert said.splitlines() == [
        "gpubench: 1 stored step(s) have error rows; a run keeps a finished step as it "
        "is, so these are not measured again:",
        "  numpy-cpu: 2 of 3 rows error (SLURM job 57 ended CANCELLED by 0 (attempt 1 of 3))",
        f"To measure them again: snakemake <same options> --forcerun {raw}/numpy-cpu.csv"]
    assert gw.stored_errors(paths[1:]) == ""
