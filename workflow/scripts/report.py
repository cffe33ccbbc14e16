"""Thin entry point for the workflow's report step (the code lives in src/gpubench)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["report", *sys.argv[1:]]))
