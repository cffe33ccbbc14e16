#!/bin/bash
# Session 34's chain (STEPS=this file): the unrolled CUDA C kernels against U = 1
# (issue 27), JAX's sync check with the row's spread rounds (issue 23, item 10), then
# the jax-gpu step alone of the default GPU suite (evidence/verdicts/device.yaml), report
# included, with the device clock before the caller's rounds.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
step unroll python3 evidence/perf27/unroll_check.py
step jaxsync python3 evidence/verdicts/jax_sync_check.py
step jax34 $SM --configfile config/config.yaml evidence/verdicts/device.yaml \
  --config 'backends=[jax-gpu]' results_dir=results/jax34 logs_dir=results/jax34/logs \
  compile_cache_dir=/tmp/cc34
touch /tmp/chain.done
