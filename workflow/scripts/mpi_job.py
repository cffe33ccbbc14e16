"""Thin entry point for the workflow's mpi_job step (the code lives in src/gpubench/mpi)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["mpi-step", *sys.argv[1:]]))
