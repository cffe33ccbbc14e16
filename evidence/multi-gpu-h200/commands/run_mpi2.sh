#!/bin/bash
# Second call: NCCL paths for CuPy, halo for the other GPU frameworks, NumPy.
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
T0=$(date +%s)
run() {
  b=$1; lim=$2; cfg=$3; shift 3
  left=$(( ${BUDGET:-300} - ($(date +%s) - T0) ))
  [ $left -lt 15 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml $cfg \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi2.tgz -C $OUT res
}
run cupy-gpu 100 "" --jobs p2p allreduce
run cuda_python-gpu 50 .devcfg/mpi_small.yaml --jobs halo
run numba-gpu 50 .devcfg/mpi_small.yaml --jobs halo
run jax-gpu 50 .devcfg/mpi_small.yaml --jobs halo
run numpy-cpu 60 .devcfg/mpi_small.yaml --jobs halo p2p allreduce monte_carlo_pi grad_avg
cat $R/runs.txt
