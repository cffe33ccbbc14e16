#!/bin/bash
# Session 38's chain (STEPS=this file, from the working tree's root, carry .whl .devcfg):
# the default GPU suite plus the NumPy baseline (config/config.yaml +
# evidence/verdicts/device.yaml), report included, on one H100:
#   a_cold: empty compile caches (a first run);
#   b_warm: the caches a_cold left (a second run);
#   c_old:  CUDA Python and Numba again with the spread window of sessions 33-37
#           (old_spread.yaml: 20 s), warm caches: the same machine's medians with the
#           old window beside b_warm's with the new one.
# The compile caches live under results/ (not /tmp, where sessions 33 and 37 saw
# PyTorch's compiled rows fail with a PermissionError on the cache folder's root).
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
CC=$ROOT/results/cc38
{ id; ls -ld /tmp "$ROOT" "$ROOT/results" 2>&1; df -h /tmp "$ROOT" | tail -2; } > /tmp/where.log
suite() {  # suite NAME [extra configfile]
  local name=$1; shift
  $SM --configfile config/config.yaml evidence/verdicts/device.yaml "$@" --config \
    results_dir=results/$name logs_dir=results/$name/logs compile_cache_dir=$CC
  local rc=$?
  rm -f results/$name/samples.csv results/$name/raw/*.samples.csv
  return $rc
}
step a_cold suite a_cold
step b_warm suite b_warm
step c_old suite c_old evidence/session38/old_spread.yaml
touch /tmp/chain.done
