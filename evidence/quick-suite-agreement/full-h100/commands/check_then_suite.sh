#!/bin/bash
# On the GPU machine, before run 2: the probe's new L2-resident loops and
# JAX's sync clock checked first (bounds_check.py re-judges evidence/energy-per-call/h100 with the
# new ceilings; jax_sync_check.py), then suite.sh's default suite. Carry .whl and .devcfg.
# Usage: bash check_then_suite.sh h100
export PYTHONUNBUFFERED=1
timeout 120 python3 tools/bounds_check.py > $OUT/bounds_check.txt 2>&1
echo "bounds_check rc=$?" >> $OUT/bounds_check.txt
timeout 60 python3 tools/jax_sync_check.py > $OUT/jax_sync_check_before.txt 2>&1
echo "jax_sync_check rc=$?" >> $OUT/jax_sync_check_before.txt
grep -E "l2_copy|L2|rc=" $OUT/bounds_check.txt | head -30
cat $OUT/jax_sync_check_before.txt
WAIT_S=${WAIT_S:-400} bash evidence/quick-suite-agreement/full-h100/commands/suite.sh "$@"
