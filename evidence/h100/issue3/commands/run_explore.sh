#!/bin/bash
# Issue 3: Numba elementwise launch shapes, then the harness against independent timers.
export PYTHONPATH=$PWD/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
T0=$(date +%s)
timeout -k 5 150 python3 evidence/h100/commands/numba_explore.py > $OUT/numba_explore.txt 2>&1
echo "numba_explore rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/runs.txt
for b in jax-gpu cupy-gpu torch-gpu; do
  left=$(( 420 - ($(date +%s) - T0) )); [ $left -lt 20 ] && break
  timeout -k 5 $left python3 workflow/scripts/crosscheck.py --backends $b --out $OUT/crosscheck_$b.csv > $OUT/crosscheck_$b.log 2>&1
  echo "$b rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/runs.txt
done
cat $OUT/numba_explore.txt; tail -n 3 $OUT/crosscheck_*.log
