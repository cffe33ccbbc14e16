#!/bin/bash
# The chain of this set (STEPS=this file): the jax-gpu and numba-gpu steps of the default GPU
# suite (tools/device/gpu-suite.yaml) three times, one after the other on one H100,
# report included: the three-run spread with the spread rounds between the items (every
# 5 s) and only memory letting the kept rows go.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
for name in tick1 tick2 tick3; do
  step $name $SM --configfile config/config.yaml tools/device/gpu-suite.yaml \
    --config 'backends=[jax-gpu,numba-gpu]' results_dir=results/$name \
    logs_dir=results/$name/logs compile_cache_dir=/tmp/cc35b
done
touch /tmp/chain.done
