"""Thin entry point for the workflow's mpi_job step (the code lives in src/gpubench/mpi)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from gpubench.cli import main

raise SystemExit(main(["mpi-step", *sys.argv[1:]]))
