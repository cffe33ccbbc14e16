#!/bin/bash
# Session 37's first chain (STEPS=this file): the default GPU suite plus the NumPy
# baseline (evidence/verdicts/device.yaml), report included, twice on one H100, each
# step's log ending with its time by stage (gpubench.ledger):
#   a_cold: code 8d3df7c (today's measuring, the ledger added; .devcfg/a = git archive
#           8d3df7c src workflow config profiles pyproject.toml), empty compile caches;
#   b_warm: code 43ca987 (the spread window after the items sized by the rounds its rows
#           lack on average), with the caches a_cold left.
# The samples (over 100 MB) stay behind.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONUNBUFFERED=1
CC=/tmp/cc37
suite() {  # suite NAME SRC COMMIT
  local name=$1 src=$2
  (cd "$src" && PYTHONPATH=/tmp/site:$src/src GPUBENCH_GIT_COMMIT=$3 $SM \
    --configfile config/config.yaml $ROOT/evidence/verdicts/device.yaml --config \
    results_dir=$ROOT/results/$name logs_dir=$ROOT/results/$name/logs compile_cache_dir=$CC)
  local rc=$?
  rm -f results/$name/samples.csv results/$name/raw/*.samples.csv
  return $rc
}
step a_cold suite a_cold $ROOT/.devcfg/a 8d3df7c
step b_warm suite b_warm $ROOT 43ca987
touch /tmp/chain.done
