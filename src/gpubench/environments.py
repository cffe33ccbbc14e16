"""Per-framework environments: which spec a step uses, building it as a pip venv, and
the lock that records exactly what an environment holds.

Standard library only: this module runs in the Snakefile, in the driver, and inside
freshly built environments (to read what they hold) before anything else is installed.

A lock is a text file in ``pip freeze`` format (``pip install -r`` accepts it) under a
header of ``# key: value`` lines::

    # gpubench environment lock
    # env: jax-cpu
    # status: ok                (ok, failed or skipped)
    # mode: venv                (venv, system or conda)
    # spec: workflow/envs/pip/jax-cpu.txt + common.txt sha256:3f0c...
    # python: 3.11.7 CPython
    # platform: linux-x86_64 glibc-2.36
    # interpreter: /path/.venvs/jax-cpu/bin/python
    # env_lock: 1a2b3c4d5e6f7a8b
    # note: built in 62.2 s
    jax==0.10.2
    jaxlib==0.10.2
    ...

``env_lock``, the hash every result row carries, is the first 16 hex digits of the
sha256 of the ``python`` and ``platform`` values and the package lines, so the same
packages on the same Python and platform give the same hash on any machine, whatever
the paths, times or spec files. A failed or skipped environment has no packages; its
lock says why (``reason``) and keeps the tail of pip's output (``error`` lines).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpubench.files import atomic_write_text

REPO_ROOT = Path(__file__).resolve().parents[2]
SRC_DIR = REPO_ROOT / "src"
#: pip requirement files, one per environment (plus common.txt, which each includes)
PIP_SPEC_DIR = REPO_ROOT / "workflow" / "envs" / "pip"
#: conda-forge specs for --sdm conda, one per environment
CONDA_SPEC_DIR = REPO_ROOT / "workflow" / "envs"

MODES = ("venv", "system", "conda")
CUDA_MAJORS = (12, 13)
GPU_ENV_POLICIES = ("auto", "always", "never")
STATUSES = ("ok", "failed", "skipped")
DEFAULTS: dict[str, Any] = {
    "mode": "venv",
    "cuda": 12,
    "python": None,
    "pip_args": [],
    "venv_dir": ".venvs",
    "spec_dir": "workflow/envs/pip",
    "gpu_envs": "auto",
}

#: every GPU environment's CUDA libraries, beside a backend's own
#: :attr:`~gpubench.backends.facts.Facts.key_packages`
GPU_KEY_PACKAGES = ("nvidia-*", "cuda-*")
#: tools of the environment itself, left out of a lock as ``pip freeze`` does
NOT_LOCKED = frozenset({"pip", "setuptools", "wheel", "distribute"})
#: lines of pip's output kept in a failed lock
ERROR_TAIL_LINES = 12
#: pip warnings about this machine's extra indexes say nothing about a failure
_NOISE = re.compile(r"^WARNING: (Location '.*' is ignored|Retrying|Skipping)")
_PROGRESS = re.compile(r"[━█]|\beta \d")
_INCLUDE = re.compile(r"^(-r|-c|--requirement|--constraint)(=|\s+)(?P<path>\S+)")


# -- which environment a step uses --------------------------------------------------------


def env_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``environments`` block of a workflow config with defaults filled in (values
    given as text on the command line, ``--config environments="{cuda: 13}"``, are read
    as what they mean)."""
    out = {**DEFAULTS, **dict(config.get("environments") or {})}
    out["cuda"] = int(out["cuda"])
    if out["python"] in ("", "null", "None", "~"):
        out["python"] = None
    return out


def env_name(backend_id: str, cuda: int = 12) -> str:
    """The backend's declared :attr:`~gpubench.backends.facts.Facts.environment`
    (``numpy-cpu`` -> ``numpy``), with the CUDA major on a GPU (``jax-gpu`` with CUDA 13
    -> ``jax-cuda13``); a backend not registered here: its framework's name."""
    from gpubench.backends import find_backend_class, split_backend_id

    framework, device = split_backend_id(backend_id)
    cls = find_backend_class(backend_id)
    name = (cls.facts.environment if cls is not None else "") or framework
    return f"{name}-cuda{cuda}" if device == "gpu" else name


def is_gpu_env(env: str) -> bool:
    return re.search(r"-cuda\d+$", env) is not None


def spec_files(spec: str | os.PathLike[str]) -> list[Path]:
    """A requirements file and every file it includes (``-r``/``-c``), each once."""
    out: list[Path] = []
    todo = [Path(spec)]
    while todo:
        path = todo.pop(0)
        if path in out:
            continue
        out.append(path)
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _INCLUDE.match(line.strip())
            if m:
                todo.append(path.parent / m.group("path"))
    return out


def requirement_lines(spec: str | os.PathLike[str]) -> list[str]:
    """The requirement strings of a spec and the files it includes (no options, comments)."""
    out = []
    for path in spec_files(spec):
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.split(" #", 1)[0].strip()
            if line and not line.startswith(("#", "-")):
                out.append(line)
    return out


def spec_digest(paths: Iterable[str | os.PathLike[str]]) -> str:
    h = hashlib.sha256()
    for path in paths:
        p = Path(path)
        h.update(p.name.encode() + b"\0")
        h.update(p.read_bytes() if p.exists() else b"(missing)")
        h.update(b"\0")
    return h.hexdigest()


def describe_spec(spec: str | os.PathLike[str]) -> str:
    files = spec_files(spec)
    extra = "".join(f" + {p.name}" for p in files[1:])
    return f"{spec}{extra} sha256:{spec_digest(files)[:16]}"


# -- what an environment holds --------------------------------------------------------------


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def inspect_current() -> dict[str, Any]:
    """Python, platform and installed distributions of the running interpreter.

    Only site-packages folders count (not PYTHONPATH, not the working directory), in
    import order: the first copy of a package is the one that is imported.
    """
    import importlib.metadata as md
    import platform
    import sysconfig

    paths = [p for p in sys.path
             if os.path.basename(p.rstrip("/\\")) in ("site-packages", "dist-packages")]
    seen: dict[str, str] = {}
    for dist in md.distributions(path=paths):
        name = dist.metadata.get("Name") if dist.metadata else None
        if not name or _canonical(name) in NOT_LOCKED or _canonical(name) in seen:
            continue
        seen[_canonical(name)] = f"{name}=={dist.version}"
    libc = "-".join(x for x in platform.libc_ver() if x)
    return {
        "python": f"{platform.python_version()} {platform.python_implementation()}",
        "platform": sysconfig.get_platform() + (f" {libc}" if libc else ""),
        "interpreter": sys.executable,
        "packages": [seen[k] for k in sorted(seen)],
    }


def inspect_interpreter(python: str) -> dict[str, Any]:
    """:func:`inspect_current` run by another interpreter."""
    code = ("import json; from gpubench.environments import inspect_current; "
            "print(json.dumps(inspect_current()))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                         env=env_with_src(), timeout=300)
    return json.loads(out.stdout)


def _package_key(line: str) -> str:
    return _canonical(re.split(r"\s*(==|@)\s*", line, maxsplit=1)[0])


def lock_hash(python: str, platform: str, packages: Sequence[str]) -> str:
    """First 16 hex digits of the sha256 of Python, platform and the package lines (in
    name order, so the order they were written in does not matter)."""
    lines = sorted(packages, key=lambda line: (_package_key(line), line))
    text = "\n".join([f"python: {python}", f"platform: {platform}", *lines]) + "\n"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Lock:
    """A parsed lock file."""

    header: dict[str, str] = field(default_factory=dict)
    packages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def env(self) -> str:
        return self.header.get("env", "")

    @property
    def status(self) -> str:
        return self.header.get("status", "failed")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def hash(self) -> str:
        """env_lock of an ok environment; "" for a failed or skipped one."""
        if not self.ok:
            return ""
        return lock_hash(self.header.get("python", ""), self.header.get("platform", ""),
                         self.packages)

    def versions(self) -> dict[str, str]:
        """Canonical package name -> ``name==version`` line."""
        return {_package_key(p): p for p in self.packages}

    def problem(self) -> str:
        """One line: why this environment cannot run, with the tail of pip's errors."""
        reason = self.header.get("reason", "") or f"status {self.status}"
        tail = " | ".join(self.errors[-ERROR_TAIL_LINES:])
        what = "was not built" if self.status == "skipped" else "failed to build"
        return f"environment {self.env or '?'} {what}: {reason}" + (f": {tail}" if tail else "")

    def text(self) -> str:
        lines = ["# gpubench environment lock"]
        header = dict(self.header)
        if self.ok:
            header["env_lock"] = self.hash
        lines += [f"# {k}: {_one_line(v)}" for k, v in header.items()]
        lines += [f"# note: {_one_line(n)}" for n in self.notes]
        lines += [f"# error: {_one_line(e)}" for e in self.errors]
        return "\n".join(lines + self.packages) + "\n"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def parse_lock(text: str) -> Lock:
    lock = Lock()
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line.lstrip("#").strip().partition(":")
            key, value = key.strip(), value.strip()
            if not sep or " " in key:
                continue
            if key == "error":
                lock.errors.append(value)
            elif key == "note":
                lock.notes.append(value)
            elif key != "env_lock":
                lock.header[key] = value
        else:
            lock.packages.append(line)
    return lock


def read_lock(path: str | os.PathLike[str]) -> Lock:
    """A lock file; a missing or unreadable one reads as a failed environment."""
    from gpubench.inputs import InputError, read_text

    try:
        return parse_lock(read_text(path, what="lock file"))
    except InputError as exc:
        return Lock({"status": "failed", "reason": f"lock file {path} unreadable: {exc}"})


def current_lock(env: str, mode: str, extra: Mapping[str, str] | None = None) -> Lock:
    """The lock of the running interpreter."""
    info = inspect_current()
    return Lock({"env": env, "status": "ok", "mode": mode, **(extra or {}),
                 "python": info["python"], "platform": info["platform"],
                 "interpreter": info["interpreter"]}, list(info["packages"]))


def key_packages(framework: str, device: str, lock: Lock) -> list[str]:
    """The lock's lines for the packages that matter to a framework's numbers."""
    from fnmatch import fnmatch

    from gpubench.backends import backend_id, find_backend_class

    cls = find_backend_class(backend_id(framework, device))
    patterns = (cls.facts.key_packages if cls is not None else ()) or (framework,)
    if device == "gpu":
        patterns = patterns + GPU_KEY_PACKAGES
    versions = lock.versions()
    return [line for name, line in sorted(versions.items())
            if any(fnmatch(name, _canonical(p)) for p in patterns)]


# -- GPUs and building ------------------------------------------------------------------------


def visible_gpus() -> tuple[int, str]:
    """(NVIDIA GPUs NVML sees on this host, why none when there are none)."""
    try:
        import pynvml
    except ImportError as exc:
        return 0, f"nvidia-ml-py is not installed ({exc})"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound and friends
        return 0, f"no NVIDIA driver (NVML: {exc})"
    try:
        count = int(pynvml.nvmlDeviceGetCount())
    except Exception as exc:  # noqa: BLE001
        return 0, f"NVML could not count GPUs ({exc})"
    finally:
        pynvml.nvmlShutdown()
    return count, "" if count else "NVML sees no GPU"


def env_with_src() -> dict[str, str]:
    """This environment with src/ on PYTHONPATH: a framework's venv (and a conda env)
    has the framework, not the gpubench package, which `make run` installs into the
    driver's .venv only; the steps re-executed there find it in src/."""
    paths = [str(SRC_DIR)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env.pop("PYTHONHOME", None)
    return env


def error_tail(output: str, lines: int = ERROR_TAIL_LINES) -> list[str]:
    """The last lines of pip's output that say what went wrong: from its first error
    line on when it has one, without progress bars or warnings about this machine's
    indexes, each cut to 300 characters."""
    kept = [ln.rstrip() for ln in output.splitlines()
            if ln.strip() and not _NOISE.match(ln.strip()) and not _PROGRESS.search(ln)]
    first = next((i for i, ln in enumerate(kept)
                  if ln.lstrip().lower().startswith("error")), None)
    if first is not None:
        kept = kept[first:]
    return [ln if len(ln) <= 300 else ln[:297] + "..." for ln in kept[-lines:]]


def _run(cmd: Sequence[str], log: Any, env: Mapping[str, str] | None = None,
         timeout: float | None = None) -> tuple[int, str]:
    print("$ " + shlex.join(cmd), file=log, flush=True)
    try:
        proc = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=dict(env) if env else None, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode()
        print(out, file=log, flush=True)
        return 124, out + f"\ntimed out after {timeout:.0f} s"
    except OSError as exc:
        return 127, f"{cmd[0]}: {exc}"
    print(proc.stdout, end="", file=log, flush=True)
    return proc.returncode, proc.stdout


#: inside a venv this project built: what it was built from, and its env_lock
BUILT_FROM = "gpubench-built-from.json"
#: the harness itself must import in an environment (checked at its build and reuse)
HARNESS_IMPORT = "import gpubench.runner, gpubench.worker"


#: the base interpreter a venv made by ``python -m venv`` runs on, and its version
_BASE = ("import os, sys; print(os.path.realpath(getattr(sys, '_base_executable', '') "
         "or sys.executable)); print(sys.version)")


def _built_from(spec: str, python: str, pip_args: Sequence[str]) -> dict[str, Any]:
    """What a venv's build depends on: the spec files' contents, the base interpreter the
    venv runs on and its version (any path to the same one: ``.venv/bin/python`` and
    ``python3`` make the same venv), pip's extra arguments."""
    try:
        out = subprocess.run([python, "-c", _BASE], capture_output=True, text=True,
                             timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        out = []
    base, version = out[:2] if len(out) >= 2 else (python, "")
    return {"spec": describe_spec(spec), "python": base, "python_version": version,
            "pip_args": list(pip_args)}


def reuse_venv(env: str, venv: Path, want: Mapping[str, Any], log: Any) -> Lock | None:
    """The lock of ``venv`` when it can stand for a new build: built by this project from
    ``want`` (:func:`_built_from`: the same spec, interpreter and pip arguments), it
    still imports gpubench's own dependencies and holds exactly the packages it was built
    with (same env_lock). None (with the reason in ``log``) otherwise: then it is built
    afresh."""
    try:
        built = json.loads((venv / BUILT_FROM).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(built, dict):
        return None
    changed = [k for k in want if built.get(k) != want[k]]
    if changed:
        print(f"environment {env}: not reused, its {', '.join(changed)} changed", file=log)
        return None
    code, _ = _run([str(venv / "bin" / "python"), "-c", HARNESS_IMPORT], log,
                   env_with_src(), 300)
    try:
        info = inspect_interpreter(str(venv / "bin" / "python")) if code == 0 else None
    except (subprocess.SubprocessError, OSError, ValueError):
        info = None
    if info is None:
        print(f"environment {env}: not reused, it no longer imports or runs", file=log)
        return None
    lock = _installed(Lock({"env": env, "status": "failed", "mode": "venv",
                            "spec": want["spec"]}), info)
    if lock.hash != built.get("env_lock"):
        print(f"environment {env}: not reused, its packages changed since it was built "
              f"(env_lock {built.get('env_lock')} -> {lock.hash})", file=log)
        return None
    lock.notes.append(f"reused: built {built.get('built_at', '?')} from the same spec, "
                      "interpreter and pip arguments; its packages read again, unchanged")
    return lock


def build_venv(env: str, spec: str, venv: str, lock_path: str, marker_path: str,
               python: str | None = None, pip_args: Sequence[str] = (),
               build: str = "yes", log: Any = None,
               timeout: float | None = 3600, reuse: bool = False) -> Lock:
    """Build ``venv`` from the pip spec and write its lock and marker; never raises for a
    failed build: the lock then says ``failed`` with the tail of pip's output.

    ``build`` is ``yes``, ``no-gpu`` (a GPU environment on a host where NVML sees no GPU,
    environments.gpu_envs: auto) or ``never`` (environments.gpu_envs: never). ``reuse``:
    keep a venv built from the same inputs that still holds what it was built with
    (:func:`reuse_venv`; the workflow asks for it, so a new results folder or a forced
    re-run checks the environment in seconds instead of reinstalling every framework).
    """
    log = log or sys.stdout
    t0 = time.monotonic()
    python = python or sys.executable
    venv_path = Path(venv)
    header = {"env": env, "status": "failed", "mode": "venv", "spec": describe_spec(spec)}
    lock = Lock(header)
    # what the venv is built from, read once for the reuse check and the record
    source = _built_from(spec, python, pip_args) if build == "yes" else {}
    reused = reuse_venv(env, venv_path, source, log) if reuse and source else None
    if reused is not None:
        reused.notes.append(f"checked in {time.monotonic() - t0:.1f} s")
        return _write(reused, env, venv_path, lock_path, marker_path, log)
    shutil.rmtree(venv_path, ignore_errors=True)
    if build != "yes":
        lock.header["status"] = "skipped"
        if build == "never":
            lock.header["reason"] = "GPU environments are not built (environments.gpu_envs: never)"
        else:
            _, why = visible_gpus()
            lock.header["reason"] = (
                f"no GPU on the host that builds environments ({why or 'NVML sees no GPU'}); "
                "set environments.gpu_envs: always to build it anyway")
    else:
        lock = _build(lock, spec, venv_path, python, pip_args, log, timeout)
    if not lock.ok:
        shutil.rmtree(venv_path, ignore_errors=True)
    if build == "yes":
        lock.notes.append(f"{'built' if lock.ok else 'failed'} in "
                          f"{time.monotonic() - t0:.1f} s")
    if lock.ok:
        atomic_write_text(venv_path / BUILT_FROM, json.dumps({
            **source, "env_lock": lock.hash,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=2) + "\n")
    return _write(lock, env, venv_path, lock_path, marker_path, log)


def _write(lock: Lock, env: str, venv_path: Path, lock_path: str, marker_path: str,
           log: Any) -> Lock:
    """The lock into the results folder, the marker into the venv."""
    header = lock.header
    atomic_write_text(lock_path, lock.text())
    atomic_write_text(marker_path, json.dumps({
        "env": env, "status": lock.status, "env_lock": lock.hash,
        "interpreter": str(venv_path / "bin" / "python"), "spec": header["spec"],
    }, indent=2) + "\n")
    print(f"environment {env}: {lock.status}"
          + (f" env_lock {lock.hash}" if lock.ok else f" ({lock.problem()})"), file=log)
    return lock


def _build(lock: Lock, spec: str, venv: Path, python: str, pip_args: Sequence[str],
           log: Any, timeout: float | None) -> Lock:
    steps: list[tuple[str, list[str], dict[str, str] | None]] = [
        ("creating the venv failed", [python, "-m", "venv", str(venv)], None),
        ("pip install failed", [str(venv / "bin" / "python"), "-m", "pip", "install",
                                "--disable-pip-version-check", "--no-input", *pip_args,
                                "-r", str(spec)], None),
        # the benchmark harness itself must import in the environment
        ("the environment cannot import gpubench's own dependencies",
         [str(venv / "bin" / "python"), "-c", HARNESS_IMPORT], env_with_src()),
    ]
    for what, cmd, env in steps:
        code, output = _run(cmd, log, env, timeout)
        if code != 0:
            lock.header["reason"] = f"{what} (exit {code})"
            lock.errors = error_tail(output)
            return lock
    try:
        info = inspect_interpreter(str(venv / "bin" / "python"))
    except (subprocess.SubprocessError, OSError, ValueError) as exc:
        lock.header["reason"] = f"reading the installed packages failed: {exc}"
        return lock
    return _installed(lock, info)


def _installed(lock: Lock, info: Mapping[str, Any]) -> Lock:
    """``lock`` made ok with what the environment's interpreter reported
    (:func:`inspect_interpreter`)."""
    lock.header.update(status="ok", python=info["python"], platform=info["platform"],
                       interpreter=info["interpreter"])
    lock.header.pop("reason", None)
    lock.packages = list(info["packages"])
    return lock


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpubench build-env``: build one pip venv and write its lock."""
    import argparse

    p = argparse.ArgumentParser(prog="gpubench build-env", description=main.__doc__)
    p.add_argument("--env", required=True, help="environment name (numpy, jax-cuda12, ...)")
    p.add_argument("--spec", required=True, help="pip requirements file")
    p.add_argument("--venv", required=True, help="folder of the venv (replaced)")
    p.add_argument("--lock", required=True, help="lock file to write")
    p.add_argument("--marker", required=True, help="JSON written inside the venv folder")
    p.add_argument("--python", default=None, help="interpreter that creates the venv")
    p.add_argument("--pip-arg", action="append", default=[], help="extra pip install arg")
    p.add_argument("--build", choices=("yes", "no-gpu", "never"), default="yes")
    p.add_argument("--reuse", action="store_true",
                   help="keep the venv if built from the same spec, interpreter and pip "
                   "arguments and still holding what it was built with")
    args = p.parse_args(argv)
    build_venv(args.env, args.spec, args.venv, args.lock, args.marker, args.python or None,
               args.pip_arg, args.build, reuse=args.reuse)
    return 0
