"""Environment: the machine the probe saw, the GPUs, the backends' versions, each step's
environment (its lock and package list), the driver's packages and the data files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from gpubench.report.base import (
    Environment,
    _lock_backend,
    backend_table,
    data_table,
    environment_table,
    gpu_table,
    lock_table,
)
from gpubench.report.render import text_table


@dataclass
class EnvironmentSection:
    """``lock_details``: per distinct environment (hash, its backends, its packages)."""

    problem: str
    machine: pd.DataFrame
    gpus: pd.DataFrame | None
    backends: pd.DataFrame | None
    locks: pd.DataFrame | None
    packages: pd.DataFrame | None
    data: pd.DataFrame
    lock_details: list[tuple[str, list[str], list[str]]] = field(default_factory=list)


def build(df: pd.DataFrame, env: Environment, timings_name: str,
          samples_note: str) -> EnvironmentSection:
    details, seen = [], set()
    for _name, lock in env.locks:
        if not lock.ok or lock.hash in seen:
            continue
        seen.add(lock.hash)
        users = [_lock_backend(n, lk) for n, lk in env.locks if lk.hash == lock.hash]
        details.append((lock.hash, users, list(lock.packages)))
    packages = env.data.get("packages")
    driver = (text_table(["package", "version"],
                         [[str(k), str(packages[k])] for k in sorted(packages)])
              if isinstance(packages, Mapping) and packages else None)
    return EnvironmentSection(env.problem, environment_table(env), gpu_table(env),
                              backend_table(df), lock_table(env), driver,
                              data_table(df, timings_name, samples_note), details)
