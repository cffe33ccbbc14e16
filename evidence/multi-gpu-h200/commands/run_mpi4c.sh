#!/bin/bash
# On four H200s, fifth call: the halo at 1 and 4 ranks for every framework with a
# time-based warm-up (halo warmup_s 0.3), and the workshop book's own pairings not yet run on GPUs:
# Numba's Monte Carlo (9.7.2), JAX's gradient averaging (9.8.2).
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
{ nvidia-smi topo -m; echo; nvidia-smi -L; } > $R/topo.txt 2>&1
T0=$(date +%s)
run() {
  b=$1; lim=$2; shift 2
  left=$(( ${BUDGET:-330} - ($(date +%s) - T0) ))
  [ $left -lt 20 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml .devcfg/ranks14.yaml \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi4c.tgz -C $OUT res
}
run numba-gpu 90 --jobs halo monte_carlo_pi --force
run cuda_python-gpu 60 --jobs halo --force
run jax-gpu 100 --jobs halo grad_avg --force
run cupy-gpu 80 --jobs halo --force
cat $R/runs.txt
