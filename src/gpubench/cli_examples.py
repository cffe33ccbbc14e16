"""The commands' help examples, apart from :mod:`gpubench.cli` so that the modules
whose ``main`` shows one (probe, report, compare) need not import the CLI that imports
them."""

from __future__ import annotations

#: one working example per user command, shown by ``gpubench CMD --help`` (run from the
#: clone's root; tests/test_cli.py checks that each parses with its command's flags)
EXAMPLES = {
    "run": """examples (from the clone's root):
  gpubench run                                  # the quick suite: a first answer in minutes
  gpubench run --suite full                     # every size, dtype, variant, implementation
  gpubench run --configfile .test/config/config.yaml    # tiny sizes, about 4 minutes on 2 cores
  gpubench run --backends numpy-cpu torch-cpu   # two frameworks only
  gpubench run -- --forcerun results/raw/jax-cpu.csv    # re-run one framework's step
  gpubench run --profile slurm                  # on a SLURM cluster (profiles/slurm)
  gpubench run --dry-run                        # show the plan, run nothing

An interrupted run resumes: run the same command again (finished steps are kept, the
profile re-runs incomplete ones, a killed run's lock is removed). Arguments gpubench
does not know go to Snakemake; put them after `--` when one could be read as
gpubench's.""",
    "report": """example (after `gpubench run`, from the clone's root):
  gpubench report --timings results/timings.csv --env results/env/host.json \\
      --samples results/samples.csv --locks results/raw/*.lock.txt \\
      --html results/report/index.html --md results/report/summary.md""",
    "compare": """example (two results folders, e.g. two machines or two dates; the page goes
to results/compare/compare.html unless --html names another file):
  gpubench compare --base results-h100/ --new results-h200/ \\
      --md results/compare/compare.md --base-label H100 --new-label H200""",
    "probe": """example:
  gpubench probe --out host.json""",
    "validate-config": """example:
  gpubench validate-config config/config.yaml""",
    "schema": """example:
  gpubench schema > columns.md""",
    "catalog": """examples:
  gpubench catalog --markdown > catalog.md
  gpubench catalog --markdown --paste README.md docs/kernels.md""",
    "step": "the workflow's run_backend rule calls it (workflow/scripts/run.py)",
}
