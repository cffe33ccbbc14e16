"""Configuration checks: the JSON schema first, then names against the code.

Errors name the offending key (``kernels.vector_add.sizes[0]``) so a bad config is
rejected before any job starts, with a message a user can act on.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A configuration value is wrong; the message starts with the key."""


def _key(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


@functools.cache
def load_schema() -> dict[str, Any]:
    """The config schema (read once per process; treat it as read-only)."""
    with open(SCHEMA_PATH) as fh:
        return yaml.safe_load(fh)


def check_schema(config: Mapping[str, Any]) -> None:
    """Validate against the JSON schema; raise ConfigError naming the first bad key."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    err = errors[0]
    key = _key(err.absolute_path)
    if err.validator == "additionalProperties":
        known = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(known)) if isinstance(err.instance, dict) else []
        raise ConfigError(f"config key {key}: unknown key(s) {extra}"
                          + (f"; allowed: {known}" if known else ""))
    if err.validator == "required":
        raise ConfigError(f"config key {key}: {err.message}")
    raise ConfigError(f"config key {key}: {err.message}")


def check_names(config: Mapping[str, Any]) -> None:
    """Backends, kernels, dtypes, variants and params must exist in the code."""
    from gpubench.backends import BACKENDS, load_plugins, split_backend_id
    from gpubench.spec import get_kernel, implementations, kernel_names

    load_plugins()
    for i, name in enumerate(config["backends"]):
        if name not in BACKENDS:
            raise ConfigError(f"config key backends[{i}]: unknown backend {name!r}; "
                              f"known: {sorted(BACKENDS)}")
    for kname, kcfg in config["kernels"].items():
        if kname not in kernel_names():
            raise ConfigError(f"config key kernels.{kname}: unknown kernel; known: "
                              f"{list(kernel_names())}")
        spec = get_kernel(kname)
        for field, allowed in (("dtypes", spec.dtypes), ("variants", spec.variants)):
            for j, value in enumerate(kcfg.get(field, [])):
                if value not in allowed:
                    raise ConfigError(f"config key kernels.{kname}.{field}[{j}]: {value!r} is "
                                      f"not one of {list(allowed)}")
        for backend, names in (kcfg.get("implementations") or {}).items():
            where = f"config key kernels.{kname}.implementations.{backend}"
            if backend not in BACKENDS:
                raise ConfigError(f"{where}: unknown backend; known: {sorted(BACKENDS)}")
            known = [i.name for i in implementations(kname, *split_backend_id(backend))]
            for j, name in enumerate(names):
                if name not in known:
                    raise ConfigError(f"{where}[{j}]: {name!r} is not one of {known}")
        for pkey, value in kcfg.get("params", {}).items():
            if pkey not in spec.default_params:
                raise ConfigError(f"config key kernels.{kname}.params.{pkey}: unknown "
                                  f"parameter; known: {sorted(spec.default_params)}")
            default = spec.default_params[pkey]
            if isinstance(default, int) and (isinstance(value, bool) or not isinstance(
                    value, int) or value < 1):
                raise ConfigError(f"config key kernels.{kname}.params.{pkey}: {value!r} "
                                  "is not a positive integer")
    check_mpi(config.get("mpi") or {})
    harness = config["harness"]
    if harness.get("min_samples", 1) > harness.get("max_samples", 10**9):
        raise ConfigError("config key harness.min_samples: larger than harness.max_samples")


def check_mpi(mpi: Mapping[str, Any]) -> None:
    """MPI backends must have an MPI version; byte ranges must be ordered."""
    from gpubench.mpi import mpi_backends

    known = mpi_backends()
    for i, name in enumerate(mpi.get("backends", [])):
        if name not in known:
            raise ConfigError(f"config key mpi.backends[{i}]: {name!r} has no MPI version; "
                              f"known: {list(known)}")
    for job, jcfg in (mpi.get("jobs") or {}).items():
        jcfg = jcfg or {}
        if jcfg.get("min_bytes", 1) > jcfg.get("max_bytes", 2**62):
            raise ConfigError(f"config key mpi.jobs.{job}.min_bytes: larger than max_bytes")


def check_folders(config: Mapping[str, Any]) -> None:
    """results_dir and logs_dir are neither ``/`` nor the home folder (the workflow
    deletes and rewrites files in them); whether a results folder is an earlier run's
    is checked when a run starts (gpubench.workflow.prepare)."""
    from gpubench.safety import UnsafeFolder, check_results_folder

    for key in ("results_dir", "logs_dir"):
        try:
            check_results_folder(config[key], key, marker_needed=False)
        except UnsafeFolder as exc:
            raise ConfigError(str(exc)) from None


def validate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check a configuration; return a deep copy (the caller's dict stays untouched)."""
    check_schema(config)
    check_folders(config)
    check_names(config)
    return copy.deepcopy(dict(config))


def load_config(path: str | Path) -> dict[str, Any]:
    with open(path) as fh:
        return validate_config(yaml.safe_load(fh) or {})
