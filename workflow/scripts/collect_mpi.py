"""Thin entry point for the workflow's collect_mpi step (the code lives in src/gpubench/mpi)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from gpubench.cli import main

raise SystemExit(main(["mpi-collect", *sys.argv[1:]]))
