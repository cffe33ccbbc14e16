"""Which GPU each rank uses (the workshop book, §9.4), and the check that no two ranks share one.

Strategies (config ``mpi.device_selection``; the device_selection job evaluates all):

* ``cuda_visible_devices`` (9.4.1, 9.10.1): before the framework is imported, set
  ``CUDA_VISIBLE_DEVICES`` to the GPU of this rank's node-local rank; the framework
  then sees one device, index 0.
* ``local_rank`` (9.4.3): node-local rank from the launcher's variable
  (Open MPI ``OMPI_COMM_WORLD_LOCAL_RANK``, MPICH ``MPI_LOCALRANKID``/``PMI_LOCAL_RANK``,
  SLURM ``SLURM_LOCALID``), device = local rank mod visible GPUs.
* ``shared_comm``: the node-local rank from ``Split_type(COMM_TYPE_SHARED)``, which
  every MPI library provides (no launcher variable needed).
* ``rank_modulo`` (9.4.2): global rank mod GPUs: right on one node, wrong on several.
* ``launcher``: the launcher already gave each rank its GPU (``srun --gpus-per-task``
  sets a one-entry ``CUDA_VISIBLE_DEVICES``): use device 0.

Pure functions of the environment, so every strategy is tested without a GPU.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

STRATEGIES: tuple[str, ...] = ("cuda_visible_devices", "local_rank", "shared_comm",
                               "rank_modulo", "launcher")

#: launcher variables holding the node-local rank, in the order they are trusted
LOCAL_RANK_VARS: tuple[str, ...] = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                    "PMI_LOCAL_RANK", "SLURM_LOCALID")


class DeviceSelectionError(RuntimeError):
    """A strategy cannot give this rank a GPU; the message says why."""


@dataclass(frozen=True)
class Selection:
    """Where a rank runs: ``index`` in the framework's device list after ``visible``
    (the CUDA_VISIBLE_DEVICES to set before import, or None to leave it) is applied;
    ``physical`` names the GPU as NVML knows it (an index or a UUID)."""

    strategy: str
    index: int
    visible: str | None
    physical: str
    local_rank: int
    source: str


def local_rank_from_env(env: Mapping[str, str]) -> tuple[int, str] | None:
    """(node-local rank, the variable it came from), or None if no launcher set one."""
    for var in LOCAL_RANK_VARS:
        value = env.get(var, "").strip()
        if value.isdigit():
            return int(value), var
    return None


def visible_devices(env: Mapping[str, str]) -> list[str] | None:
    """``CUDA_VISIBLE_DEVICES`` as a list (None when unset: every GPU is visible)."""
    if "CUDA_VISIBLE_DEVICES" not in env:
        return None
    return [v.strip() for v in env["CUDA_VISIBLE_DEVICES"].split(",") if v.strip()]


def select(strategy: str, rank: int, n_gpus: int, env: Mapping[str, str],
           shared_local_rank: int | None = None) -> Selection:
    """The GPU of ``rank`` under ``strategy``; ``n_gpus`` counts the GPUs visible now.

    ``shared_local_rank`` is the rank in the node's shared-memory communicator (the
    worker computes it with MPI; None where MPI is not running).
    """
    visible = visible_devices(env)
    if strategy == "launcher":
        if not visible or len(visible) != 1:
            raise DeviceSelectionError(
                "strategy launcher: the launcher did not give this rank one GPU "
                f"(CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES', '<unset>')}); "
                "use srun --gpus-per-task=1 or another strategy")
        return Selection(strategy, 0, None, visible[0], shared_local_rank or 0,
                         "CUDA_VISIBLE_DEVICES")
    if n_gpus < 1:
        raise DeviceSelectionError(f"strategy {strategy}: no GPU visible")
    if strategy == "rank_modulo":
        local, source = rank, "global rank"
    elif strategy == "shared_comm":
        if shared_local_rank is None:
            raise DeviceSelectionError("strategy shared_comm needs MPI (Split_type)")
        local, source = shared_local_rank, "Split_type(COMM_TYPE_SHARED)"
    elif strategy in ("local_rank", "cuda_visible_devices"):
        found = local_rank_from_env(env)
        if found is None:
            if shared_local_rank is None:
                raise DeviceSelectionError(
                    f"strategy {strategy}: none of {', '.join(LOCAL_RANK_VARS)} is set "
                    "(not started by mpiexec or srun?)")
            found = (shared_local_rank, "Split_type(COMM_TYPE_SHARED)")
        local, source = found
    else:
        raise DeviceSelectionError(f"unknown strategy {strategy!r}; known: {STRATEGIES}")
    # the modulo runs over the GPUs this rank sees: on another node than the step's
    # parent, or without NVML (fake or simulated GPUs), n_gpus may count others
    index = local % (min(n_gpus, len(visible)) if visible else n_gpus)
    physical = visible[index] if visible else str(index)
    if strategy == "cuda_visible_devices":
        return Selection(strategy, 0, physical, physical, local, source)
    return Selection(strategy, index, None, physical, local, source)


def auto_strategy(launcher_kind: str, env: Mapping[str, str]) -> str:
    """srun with one GPU per task: trust it; otherwise restrict visibility per rank."""
    visible = visible_devices(env)
    if launcher_kind == "srun" and visible is not None and len(visible) == 1:
        return "launcher"
    return "cuda_visible_devices"


def shared_gpus(uuids: Sequence[str]) -> dict[str, list[int]]:
    """GPUs used by more than one rank: {uuid: [ranks]} (empty uuids are ignored)."""
    seen: dict[str, list[int]] = {}
    for rank, uuid in enumerate(uuids):
        if uuid:
            seen.setdefault(uuid, []).append(rank)
    return {u: r for u, r in seen.items() if len(r) > 1}


def sharing_error(uuids: Sequence[str], oversubscribe: bool) -> str:
    """The loud message when ranks share a GPU and the config did not allow it, or ''."""
    shared = shared_gpus(uuids)
    if not shared or oversubscribe:
        return ""
    parts = [f"ranks {', '.join(map(str, r))} share {u}" for u, r in sorted(shared.items())]
    return ("two ranks share a GPU: " + "; ".join(parts)
            + " (set mpi.oversubscribe: true to allow it)")


def nvml_gpu_count(env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """GPUs this process may use (CUDA_VISIBLE_DEVICES applied) and, if none, why."""
    env = os.environ if env is None else env
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            total = int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # noqa: BLE001 - no driver: no GPU
        return 0, f"no usable CUDA GPU (NVML: {type(exc).__name__}: {exc})"[:300]
    visible = visible_devices(env)
    count = total if visible is None else min(total, len(visible))
    return count, "" if count else "no usable CUDA GPU (CUDA_VISIBLE_DEVICES hides them all)"
