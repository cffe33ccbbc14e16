"""Command line: the thin scripts under workflow/scripts call these entry points."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def run_main(argv: list[str] | None = None) -> int:
    """Benchmark one backend (one Snakemake step)."""
    from gpubench.runner import run_backend

    p = argparse.ArgumentParser(description="Run one framework-device step.")
    p.add_argument("--backend", required=True)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--config-json", required=True, help="the step's configuration as JSON")
    p.add_argument("--csv", required=True)
    p.add_argument("--samples", required=True)
    args = p.parse_args(argv)
    run_backend(args.backend, json.loads(args.config_json), args.threads, args.csv,
                args.samples)
    return 0


def collect_main(argv: list[str] | None = None) -> int:
    """Concatenate and validate the per-step CSVs into timings.csv and samples.csv."""
    import pandas as pd

    from gpubench import results

    p = argparse.ArgumentParser(description=collect_main.__doc__)
    p.add_argument("--timings", nargs="+", required=True)
    p.add_argument("--samples", nargs="+", required=True)
    p.add_argument("--out-timings", required=True)
    p.add_argument("--out-samples", required=True)
    p.add_argument("--env", help="probe JSON with the measured ceilings")
    args = p.parse_args(argv)
    try:
        frames = [results.read_timings(f) for f in args.timings]
        merged = results.validate(pd.concat(frames, ignore_index=True), "merged timings")
        samples = pd.concat([results.read_samples(f) for f in args.samples],
                            ignore_index=True)
    except results.SchemaError as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 1
    if args.env:
        add_ceilings(merged, args.env)
    results.atomic_write_csv(args.out_samples, samples)
    results.atomic_write_csv(args.out_timings, merged)
    counts = merged["status"].value_counts().to_dict()
    print(f"collect: {len(merged)} rows from {len(frames)} files {counts}")
    return 0


def add_ceilings(frame: pd.DataFrame, env_json: str) -> None:
    """Fill ``ceiling`` and ``pct_of_ceiling`` from the probe's measured ceilings."""
    from gpubench.ceilings import ceiling_for

    try:
        ceilings = json.loads(Path(env_json).read_text()).get("ceilings", {})
    except (OSError, ValueError) as exc:
        print(f"collect: no ceilings from {env_json}: {exc}", file=sys.stderr)
        return
    ok = frame["status"] == "ok"
    pairs = [ceiling_for(row, ceilings) if good else ("", float("nan"))
             for good, (_, row) in zip(ok, frame.iterrows(), strict=True)]
    frame["ceiling"] = [p[0] for p in pairs]
    frame["pct_of_ceiling"] = [p[1] for p in pairs]


def validate_main(argv: list[str] | None = None) -> int:
    """Check a config file; exit 1 with a message naming the key if it is wrong."""
    from gpubench.config import ConfigError, load_config

    p = argparse.ArgumentParser(description=validate_main.__doc__)
    p.add_argument("config", type=Path)
    args = p.parse_args(argv)
    try:
        load_config(args.config)
    except ConfigError as exc:
        print(f"{args.config}: {exc}", file=sys.stderr)
        return 1
    print(f"{args.config}: ok")
    return 0


def probe_main(argv: list[str]) -> int:
    from gpubench import probe

    return probe.main(argv)


def report_main(argv: list[str]) -> int:
    from gpubench import report

    return report.main(argv)


def schema_main(argv: list[str]) -> int:
    """Print the results schema as a Markdown table (the README's column reference)."""
    from gpubench import results

    print(results.schema_markdown(), end="")
    return 0


COMMANDS = {
    "run": run_main,
    "collect": collect_main,
    "validate-config": validate_main,
    "probe": probe_main,
    "report": report_main,
    "schema": schema_main,
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m gpubench {{{','.join(COMMANDS)}}} ...", file=sys.stderr)
        return 2
    return int(COMMANDS[argv[0]](argv[1:]) or 0)
