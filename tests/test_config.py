"""Bad configuration is rejected before any job starts, with the key named."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gpubench.config import ConfigError, validate_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def default() -> dict:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def test_shipped_configs_are_valid(default):
    validate_config(default)
    validate_config(yaml.safe_load((ROOT / ".test" / "config" / "config.yaml").read_text()))


def _set(cfg: dict, path: str, value) -> dict:
    cfg = copy.deepcopy(cfg)
    parts = path.split(".")
    node = cfg
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    return cfg


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("backends", ["numpy-cpu", "fortran-cpu"], "backends[1]"),
        ("backends", [], "backends"),
        ("kernels.vector_add.sizes", [1024, -5], "kernels.vector_add.sizes[1]"),
        ("kernels.vector_add.sizes", [0], "kernels.vector_add.sizes[0]"),
        ("kernels.vector_add.sizes", [1.5], "kernels.vector_add.sizes[0]"),
        ("kernels.vector_add.sizes", ["big"], "kernels.vector_add.sizes[0]"),
        ("kernels.vector_add.sizes", [], "kernels.vector_add.sizes"),
        ("kernels.vector_add.dtypes", ["float16"], "kernels.vector_add.dtypes[0]"),
        ("kernels.elementwise.variants", ["tanh"], "kernels.elementwise.variants[0]"),
        ("kernels.moving_average.params", {"window": 0}, "kernels.moving_average.params.window"),
        ("kernels.moving_average.params", {"width": 3}, "kernels.moving_average.params.width"),
        ("kernels.vector_add.enabled", "yes", "kernels.vector_add.enabled"),
        ("kernels.vector_add.sise", [1], "kernels.vector_add"),
        ("kernels.stencil", {"sizes": [8]}, "kernels.stencil"),
        ("mpi.jobs.stencil", {"sizes": [8]}, "mpi.jobs.stencil"),
        ("mpi.jobs.halo.sise", [8], "mpi.jobs.halo"),
        ("harness.min_samples", 0, "harness.min_samples"),
        ("harness.max_time_s", -1, "harness.max_time_s"),
        ("harness.target_rel_spread", "5%", "harness.target_rel_spread"),
        ("harness.warmpu", 3, "harness"),
        ("threads", [0], "threads[0]"),
        ("threads", ["all"], "threads[0]"),
        ("step_threads", 0, "step_threads"),
        ("results_dir", "a; rm -rf ~", "results_dir"),
        ("results_dir", "-rf", "results_dir"),
        ("logs_dir", 3, "logs_dir"),
    ],
)
def test_bad_value_names_its_key(default, path, value, expected):
    with pytest.raises(ConfigError) as err:
        validate_config(_set(default, path, value))
    assert f"config key {expected}" in str(err.value)


def test_missing_required_key(default):
    cfg = copy.deepcopy(default)
    del cfg["kernels"]
    with pytest.raises(ConfigError, match="kernels"):
        validate_config(cfg)


def test_min_above_max_samples(default):
    cfg = _set(default, "harness.min_samples", 50)
    cfg = _set(cfg, "harness.max_samples", 10)
    with pytest.raises(ConfigError, match=r"harness\.min_samples"):
        validate_config(cfg)
