#!/bin/bash
# The chain of this set (STEPS=this file): the jax-gpu and numba-gpu steps of the default GPU
# suite (tools/device/gpu-suite.yaml) three times, one after the other on one H100,
# report included, as ../jax-numba-three-runs/steps.sh did: the three-run spread with the spread rows'
# memory cap a quarter of the free memory (was 1 GiB).
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
for name in rep1 rep2 rep3; do
  step $name $SM --configfile config/config.yaml tools/device/gpu-suite.yaml \
    --config 'backends=[jax-gpu,numba-gpu]' results_dir=results/$name \
    logs_dir=results/$name/logs compile_cache_dir=/tmp/cc35
done
touch /tmp/chain.done
