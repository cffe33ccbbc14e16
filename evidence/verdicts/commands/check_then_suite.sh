#!/bin/bash
# Issue 23 on the GPU machine, the second session: the probe's new L2-resident loops and
# JAX's sync clock checked first (bounds_check.py re-judges evidence/matrix/h100 with the
# new ceilings; jax_sync_check.py), then suite.sh's default suite. Carry .whl and .devcfg.
# Usage: bash check_then_suite.sh h100
export PYTHONUNBUFFERED=1
timeout 120 python3 evidence/verdicts/bounds_check.py > $OUT/bounds_check.txt 2>&1
echo "bounds_check rc=$?" >> $OUT/bounds_check.txt
timeout 60 python3 evidence/verdicts/jax_sync_check.py > $OUT/jax_sync_check_before.txt 2>&1
echo "jax_sync_check rc=$?" >> $OUT/jax_sync_check_before.txt
grep -E "l2_copy|L2|rc=" $OUT/bounds_check.txt | head -30
cat $OUT/jax_sync_check_before.txt
WAIT_S=${WAIT_S:-400} bash evidence/verdicts/commands/suite.sh "$@"
