"""Shared fixtures: the repository root, and the fault-injection plugin on the path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


@pytest.fixture
def fault_plugin(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the fault plugin importable here and in worker processes."""
    monkeypatch.syspath_prepend(str(TESTS))
    paths = [str(TESTS), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    monkeypatch.setenv("GPUBENCH_PLUGINS", "fault_plugin")
    import gpubench.backends

    gpubench.backends.load_plugins()
    return "fault_plugin"


def pytest_configure(config: pytest.Config) -> None:
    sys.path.insert(0, str(ROOT / "src"))
