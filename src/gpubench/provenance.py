"""Where a number came from: host, CPU, Python, git commit, configuration."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.cache
def git_commit() -> str:
    """HEAD of this repository, with ``+dirty`` if tracked files differ; ``unknown`` if no git.

    ``GPUBENCH_GIT_COMMIT`` names the commit of an exported tree (a tarball, a copy
    shipped to a machine without the repository).
    """
    if os.environ.get("GPUBENCH_GIT_COMMIT"):
        return os.environ["GPUBENCH_GIT_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
                               ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def config_hash(config: Any) -> str:
    """Stable hash of a JSON-able configuration (key order does not matter)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def host_info() -> dict[str, Any]:
    """What every row carries about the machine and interpreter."""
    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count() or 1,
        "python_version": platform.python_version(),
        "git_commit": git_commit(),
    }


def interpreter() -> str:
    return sys.executable
