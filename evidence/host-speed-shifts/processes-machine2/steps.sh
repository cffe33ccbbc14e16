#!/bin/bash
# The chain of this run (STEPS=this file): does the caller's clock repeat once the
# machine has warmed up? procvar.py's small runs (Numba and JAX, alternating) for about
# 3.5 minutes after the machine starts, then the jax-gpu and numba-gpu steps of the
# default GPU suite three times as ../../caller-clock-repeatability/spread-between-items (same measuring code), then
# procvar.py again: the host's drift before, between and after.
source tools/device/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONUNBUFFERED=1
step pvA python3 tools/procvar.py --runs 4 --backends numba-gpu,jax-gpu --out results/pvA
rm -rf results/pvA/*.samples.csv.gz
for name in warm1 warm2 warm3; do
  step $name $SM --configfile config/config.yaml tools/device/gpu-suite.yaml \
    --config 'backends=[jax-gpu,numba-gpu]' results_dir=results/$name \
    logs_dir=results/$name/logs compile_cache_dir=/tmp/cc36
  rm -rf results/$name/*samples* results/$name/cache results/$name/*/*samples*
done
step pvB python3 tools/procvar.py --runs 3 --backends numba-gpu,jax-gpu --out results/pvB
rm -rf results/pvB/*.samples.csv.gz results/pvA/cache results/pvB/cache
touch /tmp/chain.done
