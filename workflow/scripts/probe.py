"""Thin entry point for the workflow's probe step (the code lives in src/gpubench)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["probe", *sys.argv[1:]]))
