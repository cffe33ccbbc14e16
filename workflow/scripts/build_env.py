"""Thin entry point for the workflow's build_env step (the code lives in src/gpubench)."""

import sys

from gpubench.cli import main

raise SystemExit(main(["build-env", *sys.argv[1:]]))
