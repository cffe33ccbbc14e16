#!/bin/bash
# The first chain of this set (STEPS=this file): the default GPU suite plus the NumPy
# baseline (tools/device/gpu-suite.yaml), report included, twice, one after the other
# on one H100: first with empty compile caches, then again into a new results folder with
# the caches the first run left (the suite's wall time cold and warm;
# a new default run).
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
CC=/tmp/compile_cache33
for name in suite_cold suite_warm; do
  step $name $SM --configfile config/config.yaml tools/device/gpu-suite.yaml \
    --config results_dir=results/$name logs_dir=results/$name/logs compile_cache_dir=$CC
done
touch /tmp/chain.done
