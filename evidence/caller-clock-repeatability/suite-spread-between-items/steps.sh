#!/bin/bash
# The chain of this run (STEPS=this file): the whole default GPU suite plus the NumPy
# baseline (tools/device/gpu-suite.yaml) once on a fresh H100 machine (cold compile
# caches), report included: every GPU step with the spread rounds between the items.
# The samples (over 100 MB) stay behind: what comes back is at most 16 MiB a file.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
suite() {
  $SM --configfile config/config.yaml tools/device/gpu-suite.yaml --config \
    results_dir=results/suite logs_dir=results/suite/logs compile_cache_dir=/tmp/cc35c
  local rc=$?
  rm -f results/suite/samples.csv results/suite/raw/*.samples.csv
  return $rc
}
step suite suite
touch /tmp/chain.done
