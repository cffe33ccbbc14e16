#!/bin/bash
# On four H200s, sixth call: JAX halo (state donated, edges in one transfer) and
# JAX sharding at 1 and 4 GPUs; Numba Monte Carlo with its RNG states made once.
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
{ nvidia-smi topo -m; echo; nvidia-smi -L; } > $R/topo.txt 2>&1
T0=$(date +%s)
run() {
  b=$1; lim=$2; shift 2
  left=$(( ${BUDGET:-230} - ($(date +%s) - T0) ))
  [ $left -lt 20 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml .devcfg/ranks14.yaml \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi4d.tgz -C $OUT res
}
run jax-gpu 150 --jobs halo multi_gpu --force
run numba-gpu 60 --jobs monte_carlo_pi --force
cat $R/runs.txt
