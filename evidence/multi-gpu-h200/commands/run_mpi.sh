#!/bin/bash
# On one host with several H200s: MPI jobs per backend, time-boxed.
export NCCL_NVLS_ENABLE=0 GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) PYTHONPATH=$PWD/src
R=$OUT/res; mkdir -p $R
{ nvidia-smi topo -m; echo; nvidia-smi -L; echo; nvidia-smi --query-gpu=name,pci.bus_id,memory.total,clocks.max.sm --format=csv; } > $R/topo.txt 2>&1
nvidia-smi nvlink -s > $R/nvlink.txt 2>&1
{ ompi_info --version; ompi_info --parsable --all | grep -i -E "cuda|ucx" | head -20; python3 -c "import mpi4py; print('mpi4py', mpi4py.__version__)"; } > $R/mpi_library.txt 2>&1
T0=$(date +%s)
run() {
  b=$1; lim=$2; shift 2
  left=$(( ${BUDGET:-555} - ($(date +%s) - T0) ))
  [ $left -lt 20 ] && { echo "skip $b $*: no time" >> $R/runs.txt; return; }
  [ $lim -gt $left ] && lim=$left
  S=$(date +%s)
  timeout -k 5 $lim python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml config/mpi_gpu.yaml \
     --out $R --backends $b "$@" >> $R/sweep-$b.log 2>&1
  echo "$b $* rc=$? wall_s=$(( $(date +%s) - S ))" >> $R/runs.txt
  pkill -9 -f gpubench.mpi 2>/dev/null; pkill -9 mpiexec 2>/dev/null; pkill -9 orted 2>/dev/null
  tar czf $OUT/mpi.tgz -C $OUT res
}
run cupy-gpu 210 --jobs device_selection halo p2p allreduce reduction
run jax-gpu 70 --jobs reduction halo multi_gpu
run numba-gpu 60 --jobs reduction halo
run cuda_python-gpu 60 --jobs reduction halo
run cupy-gpu 100 --jobs matmul monte_carlo_pi grad_avg multi_gpu
run numpy-cpu 60
cat $R/runs.txt
