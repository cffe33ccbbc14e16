#!/bin/bash
# The chain of this run (STEPS=this file): tools/hostidx.py, nine Numba and nine JAX fresh
# processes alternating, each with a host-speed index beside its launch timing.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
mkdir -p results/hostidx
step hostidx bash -c "python3 tools/hostidx.py --procs 9 --seconds 12 > results/hostidx/hostidx.jsonl"
python3 tools/hostidx.py --analyse results/hostidx/hostidx.jsonl > results/hostidx/analysis.txt 2>&1
cat results/hostidx/analysis.txt >> /tmp/chain.txt
touch /tmp/chain.done
