"""Thin entry point for the workflow's build_env step (the code lives in src/gpubench)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from gpubench.cli import main

raise SystemExit(main(["build-env", *sys.argv[1:]]))
