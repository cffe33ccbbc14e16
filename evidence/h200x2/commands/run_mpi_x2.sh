#!/bin/bash
# Issue 6 proof on a host with two H200s: link, halo and each framework's pairing in the
# workshop book at 1 and 2 ranks (CuPy: every job), time-boxed to one device call.
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
{ nvidia-smi topo -m; echo; nvidia-smi -L; echo; nvidia-smi --query-gpu=name,pci.bus_id,memory.total,clocks.max.sm --format=csv; } > $R/topo.txt 2>&1
nvidia-smi nvlink -s > $R/nvlink.txt 2>&1
{ ompi_info --version; ompi_info --parsable --all | grep -i -E "cuda|ucx" | head -20; python3 -c "import mpi4py; print('mpi4py', mpi4py.__version__)"; } > $R/mpi_library.txt 2>&1
T0=$(date +%s)
run() {
  b=$1; lim=$2; shift 2
  left=$(( ${BUDGET:-575} - ($(date +%s) - T0) ))
  [ $left -lt 20 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml .devcfg/ranks12.yaml \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi_x2.tgz -C $OUT res
}
run cupy-gpu 275 --jobs device_selection p2p allreduce halo reduction matmul monte_carlo_pi grad_avg multi_gpu --force
run numba-gpu 80 --jobs monte_carlo_pi halo --force
run jax-gpu 110 --jobs grad_avg halo multi_gpu --force
run cuda_python-gpu 110 --jobs p2p halo --force
cat $R/runs.txt
