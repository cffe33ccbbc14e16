#!/bin/bash
# The chain of this run (STEPS=this file): tools/procvar.py, the Numba and JAX steps' host-
# bound rows in nine fresh processes each, alternating, one after the other on one H100.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
step procvar python3 tools/procvar.py --runs 9 --backends numba-gpu,jax-gpu --out results/procvar
python3 tools/procvar.py --analyse results/procvar > results/procvar/analysis.txt 2>&1
rm -rf results/procvar/cache results/procvar/*.samples.csv.gz
touch /tmp/chain.done
