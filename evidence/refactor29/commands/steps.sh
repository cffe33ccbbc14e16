#!/bin/bash
# The GPU machine's work of one session, one step after the other (no CPU step overlaps a
# GPU step): issue 29's smoke run after, before and again after the change; issue 26's
# CPU suite at the default sizes; issue 27's best implementations at 2^26; issue 23's JAX
# sync check. Started by chain.sh in a session of its own. Each step's line goes to
# /tmp/chain.txt with its exit code and wall time.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
smoke() {  # smoke <name> <tree> <commit>
  (cd "$2" && PYTHONPATH=/tmp/site:$PWD/src GPUBENCH_GIT_COMMIT=$3 $SM \
    --configfile .test/config/config.yaml "$ROOT/evidence/refactor29/device.yaml" \
    --config results_dir=$ROOT/results/$1 logs_dir=$ROOT/results/$1/logs)
}
NEW=$(cat .devcfg/COMMIT)
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$NEW

step smoke_before smoke smoke_before "$ROOT/.devcfg/old" 6493c13
step smoke_after smoke smoke_after "$ROOT" "$NEW"
step cpu26 $SM --configfile config/config.yaml evidence/cpu26/cpu.yaml \
  --config results_dir=results/cpu26 logs_dir=results/cpu26/logs
step perf27 $SM --configfile config/config.yaml evidence/perf27/best.yaml \
  --config results_dir=results/perf27 logs_dir=results/perf27/logs
step jaxsync python3 evidence/verdicts/jax_sync_check.py
touch /tmp/chain.done
