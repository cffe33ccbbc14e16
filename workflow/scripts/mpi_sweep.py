"""Run the MPI steps of a config without Snakemake, then collect mpi.csv.

For machines without Snakemake (the GPU hosts): the same steps as rule mpi_job, one
after another, skipping steps whose CSV exists (so a sweep cut off by a time limit
resumes), optionally limited to some backends or jobs. Needs the gpubench package:
installed (`make run`, `pip install -e .`) or, on a host without the install,
``PYTHONPATH=src``.

    PYTHONPATH=src python workflow/scripts/mpi_sweep.py --configfile config/mpi_gpu.yaml \
        --out results_gpu [--backends cupy-gpu jax-gpu] [--jobs halo p2p] [--force]
"""

import argparse
import json
import sys
from pathlib import Path

import yaml

from gpubench.config import validate_config
from gpubench.mpi import planned_steps
from gpubench.mpi.step import collect_main, run_step


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configfile", nargs="+", required=True, help="merged left to right")
    p.add_argument("--out", required=True, help="results folder (mpi/raw/, mpi.csv)")
    p.add_argument("--backends", nargs="*")
    p.add_argument("--jobs", nargs="*")
    p.add_argument("--force", action="store_true", help="re-run steps whose CSV exists")
    args = p.parse_args()
    config: dict = {}
    for path in args.configfile:
        update(config, yaml.safe_load(Path(path).read_text()) or {})
    try:
        config = validate_config(config)
    except ModuleNotFoundError as exc:  # a GPU host without jsonschema
        print(f"mpi_sweep: config not validated ({exc})", file=sys.stderr)
    mpi = config.get("mpi") or {}
    out = Path(args.out)
    step_cfg = json.loads(json.dumps({"mpi": mpi, "harness": {
        "seed": config["harness"].get("seed", 0)}}))
    # every MPI step of the config (the sweep runs them all, whatever the single-device
    # backends are), then the command line's choice of backends and jobs
    for job, backend, ranks in planned_steps({**config, "backends": mpi.get("backends", [])}):
        if (args.backends and backend not in args.backends) or \
                (args.jobs and job not in args.jobs):
            continue
        csv = out / "mpi" / "raw" / f"{job}.{backend}.n{ranks}.csv"
        if csv.exists() and not args.force:
            continue
        run_step(job, backend, ranks, step_cfg, str(csv), str(csv.with_suffix(".samples.csv")))
    rows = sorted(str(f) for f in (out / "mpi" / "raw").glob("*.csv")
                  if not f.name.endswith(".samples.csv"))
    samples = [r[:-4] + ".samples.csv" for r in rows]
    return collect_main(["--inputs", *rows, "--samples", *samples, "--out",
                         str(out / "mpi.csv"), "--out-samples", str(out / "mpi_samples.csv")])


def update(base: dict, new: dict) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            update(base[key], value)
        else:
            base[key] = value


if __name__ == "__main__":
    raise SystemExit(main())
