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


#: a config file is a few kB (config/config.yaml: about 10 kB)
MAX_CONFIG_BYTES = 2**20
#: values a config may hold with its YAML aliases expanded (the default config: about
#: 600): aliases make a 1 kB "billion laughs" document expand to billions, which the
#: schema check would walk one by one
MAX_CONFIG_VALUES = 100_000
#: levels of nesting a config may have (the schema's deepest key has 5)
MAX_CONFIG_DEPTH = 32


class ConfigError(ValueError):
    """A configuration value is wrong; the message starts with the key (or, for the file
    as a whole, the file)."""


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
    check_sizes(config)
    check_mpi(config.get("mpi") or {})
    harness = config["harness"]
    if harness.get("min_samples", 1) > harness.get("max_samples", 10**9):
        raise ConfigError("config key harness.min_samples: larger than harness.max_samples")


#: the size lists of a kernel's config
SIZE_KEYS = ("sizes", "gpu_sizes", "baseline_sizes")


def check_sizes(config: Mapping[str, Any]) -> None:
    """Every size a run would measure can be: a whole number from 1 whose cases (each
    dtype and variant the kernel runs) need no more bytes than a 64-bit machine holds
    (:func:`gpubench.spec.size_problem`, which the results' readers apply too). A larger
    one would pass the dry run and then end the step in an OverflowError, with no row."""
    from gpubench.spec import get_kernel, size_problem

    for kname, kcfg in config["kernels"].items():
        spec = get_kernel(kname)
        dtypes = kcfg.get("dtypes") or spec.dtypes
        variants = kcfg.get("variants") or spec.variants
        for field in SIZE_KEYS:
            for j, size in enumerate(kcfg.get(field) or []):
                why = next((w for d in dtypes for v in variants
                            if (w := size_problem(kname, size, d, v, kcfg.get("params")))),
                           "")
                if why:
                    raise ConfigError(f"config key kernels.{kname}.{field}[{j}]: {size}: "
                                      f"{why}")
    for job, jcfg in ((config.get("mpi") or {}).get("jobs") or {}).items():
        for j, size in enumerate((jcfg or {}).get("sizes") or []):
            why = size_problem(None, size, str((jcfg or {}).get("dtype", "")))
            if why:
                raise ConfigError(f"config key mpi.jobs.{job}.sizes[{j}]: {size}: {why}")


def check_mpi(mpi: Mapping[str, Any]) -> None:
    """MPI jobs must be registered ones (the scan of :mod:`gpubench.mpi.jobs`), MPI
    backends must have an MPI version; byte ranges must be ordered."""
    from gpubench.mpi import catalog_of_jobs, mpi_backends

    known = mpi_backends()
    for i, name in enumerate(mpi.get("backends", [])):
        if name not in known:
            raise ConfigError(f"config key mpi.backends[{i}]: {name!r} has no MPI version; "
                              f"known: {list(known)}")
    jobs = catalog_of_jobs()
    for job, jcfg in (mpi.get("jobs") or {}).items():
        if job not in jobs:
            raise ConfigError(f"config key mpi.jobs.{job}: unknown MPI job; known: "
                              f"{list(jobs)}")
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


def check_size(config: Any, limit: int = MAX_CONFIG_VALUES,
               max_depth: int = MAX_CONFIG_DEPTH) -> None:
    """Raise ConfigError for a config that holds more than ``limit`` values once its
    shared parts (YAML aliases: one object reached many times) are expanded, nests
    deeper than ``max_depth``, or contains itself (a recursive alias). Walked without
    recursion, each shared part once, so a document that expands to billions costs no
    more than its own size."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # the containers being walked: an ancestor met again is a loop

    def children(node: Any) -> list[Any]:
        return list(node.values() if isinstance(node, dict) else node)

    stack: list[tuple[Any, int, bool]] = [(config, 0, False)]
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, dict | list):
            continue
        nid = id(node)
        if done:
            open_.discard(nid)
            sizes[nid] = 1 + sum(sizes.get(id(c), 1) for c in children(node))
            if sizes[nid] > limit:
                raise ConfigError(f"config: more than {limit:,} values once its YAML "
                                  "aliases are expanded (an alias bomb?)")
            continue
        if nid in sizes:
            continue
        if nid in open_:
            raise ConfigError("config: a value contains itself (a recursive YAML alias)")
        if depth >= max_depth:
            raise ConfigError(f"config: nested more than {max_depth} levels deep")
        open_.add(nid)
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children(node))


def validate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check a configuration; return a deep copy (the caller's dict stays untouched)."""
    if not isinstance(config, Mapping):
        kind = {"list": "a list", "str": "a string", "int": "a number", "float": "a number",
                "bool": "true or false", "NoneType": "empty"}.get(type(config).__name__,
                                                                  type(config).__name__)
        raise ConfigError(f"config: the document is {kind}, not a mapping of config keys")
    check_size(config)
    check_schema(config)
    check_folders(config)
    check_names(config)
    return copy.deepcopy(dict(config))


def load_yaml(text: str) -> Any:
    """A YAML document read with PyYAML's safe loader; ConfigError naming the line for a
    syntax error, or for nesting deeper than the parser can follow."""
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"config: not valid YAML: {exc.problem or exc.context}{where}"
                          ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config: not valid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"config: nested more than {MAX_CONFIG_DEPTH} levels deep"
                          ) from None


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check a config file: a regular UTF-8 file of at most
    :data:`MAX_CONFIG_BYTES` holding one YAML mapping (an empty file is an empty one)."""
    from gpubench.inputs import InputError, read_text

    try:
        text = read_text(path, MAX_CONFIG_BYTES, "config file")
    except InputError as exc:
        raise ConfigError(str(exc).removeprefix(f"{path}: ")) from None
    return validate_config(load_yaml(text) or {})
