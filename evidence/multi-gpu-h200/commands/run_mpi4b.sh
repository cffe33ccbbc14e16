#!/bin/bash
# On four H200s, fourth call: allreduce at 1/2/4 ranks (MPI host, staged,
# NCCL), the halo exchange at 2**26 cells per rank for Numba, CUDA Python and JAX.
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
{ nvidia-smi topo -m; echo; nvidia-smi -L; } > $R/topo.txt 2>&1
T0=$(date +%s)
run() {
  b=$1; lim=$2; shift 2
  left=$(( ${BUDGET:-190} - ($(date +%s) - T0) ))
  [ $left -lt 20 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml .devcfg/ranks14.yaml \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi4b.tgz -C $OUT res
}
run numba-gpu 65 --jobs halo --force
run cuda_python-gpu 60 --jobs halo --force
run jax-gpu 70 --jobs halo --force
cat $R/runs.txt
