"""The two suites: ``full`` (``config/config.yaml`` as it is) and ``quick`` (the default).

``quick`` is ``config/suites/quick.yaml`` layered over the full configuration, under the
user's own config files and ``--config``: the Snakefile loads it with Snakemake's
``configfile:`` when the config key ``suite`` is ``quick``, so the full suite stays the
file it always was and a site's settings still win over either suite. The overlay only
cuts breadth (sizes, dtypes, variants, implementations, cold rows, MPI jobs); every row
it keeps is measured with the full suite's harness settings.

What the full suite would add to a quick run is computed here from the two plans
(:func:`difference`), for the report's header and ``summary.md``.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: the suites, the default first
SUITES = ("quick", "full")
DEFAULT = "quick"
#: config/ of this clone (the suites' files)
CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
#: the command that runs the full suite (the report names it)
FULL_COMMAND = "gpubench run --suite full"


def overlay_path(suite: str, config_dir: Path = CONFIG_DIR) -> Path | None:
    """The file a suite layers over config/config.yaml (None: the full suite has none)."""
    return None if suite == "full" else config_dir / "suites" / f"{suite}.yaml"


def merge_over(base: Mapping[str, Any], over: Mapping[str, Any] | None) -> dict[str, Any]:
    """``over`` layered on ``base`` as Snakemake layers config files (mappings key by
    key, anything else replaced); a new dict, neither input changed."""
    out = copy.deepcopy(dict(base))
    for key, value in (over or {}).items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_over(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_yaml(path: Path) -> dict[str, Any]:
    """A config file's mapping (empty for an empty file)."""
    with open(path) as fh:
        return yaml.safe_load(fh) or {}


def suite_config(suite: str, over: Mapping[str, Any] | None = None,
                 config_dir: Path = CONFIG_DIR) -> dict[str, Any]:
    """A suite's configuration as the workflow builds it: config/config.yaml, the
    suite's overlay, then ``over`` (the user's config files and --config, merged)."""
    config = load_yaml(config_dir / "config.yaml")
    overlay = overlay_path(suite, config_dir)
    if overlay is not None:
        config = merge_over(config, load_yaml(overlay))
    config = merge_over(config, over)
    config["suite"] = suite
    return config


@dataclass
class Difference:
    """What one suite's plan has that another's lacks, for the report."""

    suite: str
    rows: int
    full_rows: int
    #: what the full suite adds, in words ("cold-cache rows (576 rows)", ...)
    adds: list[str] = field(default_factory=list)
    command: str = FULL_COMMAND
    #: implementations neither suite runs here, in words (:func:`left_out_words`)
    left_out: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The record ``suite.json`` holds (:func:`read_record` reads it back)."""
        return asdict(self)


def _plans(config: Mapping[str, Any], cores: int) -> dict[str, list[Any]]:
    from gpubench.runner import plan

    return {b: plan(b, config, cores) for b in config["backends"]}


def _mpi_steps(config: Mapping[str, Any]) -> int:
    from gpubench.mpi import planned_steps

    return len(planned_steps(config))


def _why_not(it: Any, backend: str, quick: Mapping[str, Any],
             threads: set[int]) -> str:
    """Why the quick suite leaves out a row of the full plan, in the words of the config
    key that cuts it."""
    kcfg = (quick.get("kernels") or {}).get(it.kernel)
    if backend not in quick["backends"]:
        return f"the {backend} step"
    if kcfg is None or not kcfg.get("enabled", True):
        return f"the {it.kernel} kernel"
    if it.mode not in (kcfg.get("gpu_modes") or quick.get("gpu_modes") or ["hot"]):
        return f"{it.mode}-cache rows"
    if it.threads not in threads:
        return "more thread counts"
    if kcfg.get("dtypes") and it.dtype not in kcfg["dtypes"]:
        return "more dtypes"
    if kcfg.get("variants") and it.variant not in kcfg["variants"]:
        return "more variants"
    chosen = (kcfg.get("implementations") or {}).get(backend)
    if chosen and it.implementation not in chosen:
        return "more implementations"
    return "more sizes"


def difference(quick: Mapping[str, Any], full: Mapping[str, Any], cores: int,
               suite: str = DEFAULT) -> Difference:
    """What running ``full`` adds to ``quick`` (both whole configs) at ``cores``: the
    rows of each plan, and the added rows named by the config key that cuts them (a
    step or kernel quick leaves out, cold rows, thread counts, dtypes, variants,
    implementations, sizes), each with its count, the largest first; MPI steps last."""
    q_plans, f_plans = _plans(quick, cores), _plans(full, cores)
    reasons: Counter[str] = Counter()
    for backend, items in f_plans.items():
        have = q_plans.get(backend, [])
        seen = {_key(it) for it in have}
        threads = {it.threads for it in have}
        reasons.update(_why_not(it, backend, quick, threads) for it in items
                       if _key(it) not in seen)
    adds = [f"{what} ({n:,} rows)" for what, n in reasons.most_common()]
    mpi = _mpi_steps(full) - _mpi_steps(quick)
    if mpi > 0:
        adds.append(f"the MPI jobs ({mpi:,} steps)")
    return Difference(suite, sum(len(p) for p in q_plans.values()),
                      sum(len(p) for p in f_plans.values()), adds,
                      left_out=left_out_words(quick))


def left_out_words(config: Mapping[str, Any]) -> list[str]:
    """The implementations the plans leave out because each framework's venv lacks a
    framework they import (:func:`gpubench.runner.missing_needs`), one phrase per
    kernel and missing framework: "interop from_torch in numpy-cpu, jax-cpu (needs
    torch)"."""
    from gpubench.runner import left_out

    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    for backend in config["backends"]:
        for kernel, impl, missing in left_out(backend, config):
            where = groups.setdefault((kernel, missing), {}).setdefault(impl, [])
            if backend not in where:  # one name per implementation and variant
                where.append(backend)
    words = []
    for (kernel, missing), by in groups.items():
        where = ", ".join(f"{impl} in {', '.join(bs)}" for impl, bs in by.items())
        words.append(f"{kernel} {where} (needs {missing})")
    return words


def _key(it: Any) -> tuple[Any, ...]:
    return (it.kernel, it.variant, it.size, it.dtype, it.implementation, it.threads,
            it.mode)


def read_record(path: str | Path | None) -> dict[str, Any]:
    """A run's suite record (``suite.json``, :class:`Difference`); empty when there is
    none (a run of an older version) or it cannot be read."""
    from gpubench.inputs import load_json

    if not path:
        return {}
    try:  # bounded: a device, an endless or a deeply nested file is no record either
        data = load_json(path, "suite record")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("suite") in SUITES else {}


def describe(record: Mapping[str, Any]) -> tuple[str, str]:
    """(the sentence the report shows, the command that runs the full suite; '' for a
    full run); ('', '') without a record."""
    name = record.get("suite")
    if name not in SUITES:
        return "", ""
    rows = int(record.get("rows") or 0)
    out = [str(x) for x in record.get("left_out") or [] if isinstance(x, str)]
    lacking = (" Not planned, since each framework's own environment (venv) lacks what "
               "they import: " + "; ".join(out) + "; environments: {mode: system} or "
               "conda measures them.") if out else ""
    if name == "full":
        return (f"Suite full: {rows:,} measurements, every size, dtype, variant and "
                f"implementation of the configuration.{lacking}"), ""
    adds = list(record.get("adds") or [])
    more = int(record.get("full_rows") or 0) - rows
    what = (f"; the full suite adds {more:,} more: " + ", ".join(adds)) if adds else ""
    return (f"Suite {name}: {rows:,} measurements, each taken as the full suite takes it"
            f"{what}.{lacking} The full suite:"), str(record.get("command") or FULL_COMMAND)
