#!/bin/bash
# The chain of this run (STEPS=this file): evidence/copy-ceiling-targets/best.yaml, all five
# GPU steps in one call with the probe, after the warp-sliding moving_average kernel and
# elementwise's U = 2: the README's best-implementation table.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
step best $SM --configfile config/config.yaml evidence/copy-ceiling-targets/best.yaml \
  --config results_dir=results/best logs_dir=results/best/logs compile_cache_dir=/tmp/cc34
touch /tmp/chain.done
