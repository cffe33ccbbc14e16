#!/bin/bash
# Issue 6 on two H200s, second call: JAX sharding (its 2-GPU step ran out of time in the
# first call) and each framework's distributed reduction (the workshop book, §9.7.1, §9.8.1,
# §9.9.1).
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
{ nvidia-smi topo -m; echo; nvidia-smi -L; } > $R/topo.txt 2>&1
T0=$(date +%s)
run() {
  b=$1; lim=$2; shift 2
  left=$(( ${BUDGET:-160} - ($(date +%s) - T0) ))
  [ $left -lt 20 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml .devcfg/ranks12.yaml \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi_x2b.tgz -C $OUT res
}
run jax-gpu 70 --jobs multi_gpu reduction --force
run numba-gpu 40 --jobs reduction --force
run cuda_python-gpu 40 --jobs reduction --force
cat $R/runs.txt
