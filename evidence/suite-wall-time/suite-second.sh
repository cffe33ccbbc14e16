#!/bin/bash
# The second-run chain (STEPS=this file, from the working tree's root, carry
# .whl .devcfg): the compile caches filled by a priming run of the GPU steps
# (prime.yaml: every item once, nothing read from it), then the default GPU suite plus the
# NumPy baseline (config/config.yaml + tools/device/gpu-suite.yaml), report included, as
# a second run meets it, in Snakemake's own order, on one H100.
source tools/device/step.sh  # ROOT, SM, step, snapshot, suite_run
snapshot /tmp/tree2
CACHE=$ROOT/results/cc41
step w_prime suite_run w_prime "$CACHE" evidence/suite-wall-time/prime.yaml --omit-from collect
step b_warm suite_run b_warm "$CACHE"
touch /tmp/chain.done
