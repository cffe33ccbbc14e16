"""Thin entry point for the workflow's run step (the code lives in src/gpubench)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["step", *sys.argv[1:]]))
