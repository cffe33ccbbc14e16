"""Which launcher starts the ranks, with which command line, and whether MPI is CUDA-aware.

Nothing here imports MPI: the step's parent decides before any rank starts, so a
missing library becomes ``unavailable`` rows with the reason instead of a crash.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Launcher:
    """A resolved launcher: its kind, executable and flavour (openmpi, mpich, slurm)."""

    kind: str  # mpiexec | srun
    executable: str
    flavour: str = "unknown"
    extra: tuple[str, ...] = field(default_factory=tuple)


def in_slurm_allocation(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("SLURM_JOB_ID"))


def choose_kind(setting: str, env: Mapping[str, str] | None = None) -> str:
    """``auto``: srun inside a SLURM allocation (it knows the job's GPUs), else mpiexec."""
    if setting in ("mpiexec", "srun"):
        return setting
    if setting != "auto":
        raise ValueError(f"unknown launcher {setting!r}; use auto, mpiexec or srun")
    return "srun" if in_slurm_allocation(env) else "mpiexec"


def flavour_of(version_text: str) -> str:
    """``mpiexec --version`` output -> openmpi | mpich | intel | unknown."""
    text = version_text.lower()
    if "open mpi" in text or "openrte" in text or "open-mpi" in text:
        return "openmpi"
    if "intel" in text:
        return "intel"
    if "hydra" in text or "mpich" in text:
        return "mpich"
    return "unknown"


def find_launcher(setting: str = "auto", env: Mapping[str, str] | None = None,
                  mpiexec: str = "") -> tuple[Launcher | None, str]:
    """The launcher to use, or (None, why not)."""
    kind = choose_kind(setting, env)
    names = ["srun"] if kind == "srun" else ([mpiexec] if mpiexec else ["mpiexec", "mpirun"])
    for name in names:
        path = shutil.which(name)
        if not path:
            continue
        if kind == "srun":
            return Launcher("srun", path, "slurm"), ""
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30)
            text = out.stdout + out.stderr
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"{path} --version failed: {exc}"
        return Launcher("mpiexec", path, flavour_of(text)), ""
    return None, (f"no {' or '.join(names)} on PATH (install an MPI library: "
                  "apt-get install openmpi-bin libopenmpi-dev, or pip install mpich)")


def build_command(launcher: Launcher, ranks: int, program: Sequence[str], *,
                  oversubscribe: bool = False, srun_mpi: str = "pmix",
                  gpus_per_rank: int = 0, extra_args: Sequence[str] = ()) -> list[str]:
    """The argv that starts ``ranks`` copies of ``program`` (a list: no shell involved).

    Open MPI refuses to start more ranks than cores (slots) unless told; that is
    allowed only when the config says so. As root (containers) Open MPI needs
    ``--allow-run-as-root``. srun asks for one GPU per rank and kills every rank as
    soon as one exits badly.
    """
    if ranks < 1:
        raise ValueError("ranks must be >= 1")
    if launcher.kind == "srun":
        cmd = [launcher.executable, f"--ntasks={ranks}", f"--mpi={srun_mpi}",
               "--kill-on-bad-exit=1"]
        if gpus_per_rank:
            cmd.append(f"--gpus-per-task={gpus_per_rank}")
        if oversubscribe:
            cmd.append("--overcommit")
    else:
        cmd = [launcher.executable, "-n", str(ranks)]
        if launcher.flavour == "openmpi":
            if oversubscribe:
                cmd.append("--oversubscribe")
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                cmd.append("--allow-run-as-root")
    return [*cmd, *extra_args, *program]


def command_text(cmd: Sequence[str]) -> str:
    """The command as one shell-quoted line (logs, the ``launcher`` column)."""
    return shlex.join(list(cmd))


# -- CUDA-aware MPI ---------------------------------------------------------------------

def parse_ompi_info(text: str) -> bool | None:
    """``ompi_info --parsable --all`` -> whether Open MPI was built with CUDA support."""
    for line in text.splitlines():
        if "mpi_built_with_cuda_support:value:" in line:
            return line.rsplit(":", 1)[1].strip().lower() == "true"
    return None


def cuda_aware_static(env: Mapping[str, str] | None = None,
                      setting: str = "auto") -> tuple[str, str]:
    """(yes|no|unknown, how) without MPI initialised: config, env override, ompi_info.

    The ranks refine ``unknown`` with ``MPIX_Query_cuda_support`` where mpi4py has it.
    """
    env = os.environ if env is None else env
    if setting in ("yes", "no"):
        return setting, "config mpi.cuda_aware"
    forced = env.get("GPUBENCH_MPI_CUDA_AWARE", "").strip().lower()
    if forced in ("yes", "no"):
        return forced, "GPUBENCH_MPI_CUDA_AWARE"
    info = shutil.which("ompi_info")
    if info:
        try:
            out = subprocess.run([info, "--parsable", "--all"], capture_output=True,
                                 text=True, timeout=60)
            built = parse_ompi_info(out.stdout)
        except (OSError, subprocess.SubprocessError):
            built = None
        if built is not None:
            return ("yes" if built else "no"), "ompi_info mpi_built_with_cuda_support"
    return "unknown", "no ompi_info and no override"


def cuda_aware_runtime(mpi: object, static: str) -> tuple[str, str]:
    """Refine the static answer with ``MPIX_Query_cuda_support`` (mpi4py >= 4, if any)."""
    query = getattr(mpi, "Query_cuda_support", None)
    if static == "unknown" and query is not None:
        try:
            return ("yes" if query() else "no"), "MPIX_Query_cuda_support"
        except Exception:  # noqa: BLE001 - the extension may be missing at run time
            pass
    return static, ""
