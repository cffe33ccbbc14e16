"""Thin entry point for the workflow's collect step (the code lives in src/gpubench)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["collect", *sys.argv[1:]]))
