#!/bin/bash
# The second chain of this set (STEPS=this file), on a fresh H100 machine: the default GPU
# suite plus the NumPy baseline a third time (tools/device/gpu-suite.yaml;
# three runs of one configuration on one GPU type, the verdicts re-run), then JAX's sync
# check with each size's samples in order.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
step suite3 $SM --configfile config/config.yaml tools/device/gpu-suite.yaml \
  --config results_dir=results/suite3 logs_dir=results/suite3/logs \
  compile_cache_dir=/tmp/compile_cache33
step jaxsync6 python3 tools/jax_sync_check.py --trace --rounds 3
touch /tmp/chain.done
