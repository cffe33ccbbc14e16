"""Thin entry point for the workflow's collect_mpi step (the code lives in src/gpubench/mpi)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["mpi-collect", *sys.argv[1:]]))
