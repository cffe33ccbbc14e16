"""Shared fixtures: the repository root, and the fault-injection plugin on the path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def _plugin(monkeypatch: pytest.MonkeyPatch, name: str) -> str:
    """Make a plugin of tests/ importable here and in worker processes, and load it."""
    monkeypatch.syspath_prepend(str(TESTS))
    paths = [str(TESTS), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    monkeypatch.setenv("GPUBENCH_PLUGINS", name)
    import gpubench.backends

    gpubench.backends.load_plugins()
    return name


@pytest.fixture
def fault_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    """The fault-injection plugin (tests/fault_plugin.py)."""
    return _plugin(monkeypatch, "fault_plugin")


@pytest.fixture
def escape_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    """The stand-in GPU with a side stream (tests/escape_plugin.py)."""
    return _plugin(monkeypatch, "escape_plugin")


def pytest_configure(config: pytest.Config) -> None:
    sys.path.insert(0, str(ROOT / "src"))

