#!/bin/bash
# Issue 17 on a GPU, call 2 of 2: with the CUDA-aware Open MPI of call 1, p2p and halo
# with path direct for every direct-capable GPU backend (2 ranks on the one GPU).
export PYTHONPATH=$PWD/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) NCCL_NVLS_ENABLE=0
for _ in $(seq 300); do [ -f /tmp/ompi.done ] && break; sleep 1; done
tail -3 /tmp/ompi-build.log; cp /tmp/ompi-build.log $OUT/
P=/tmp/ompi-cuda
export PATH=$P/bin:$PATH LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_MCA_opal_cuda_support=true
R=$OUT/res; mkdir -p $R
printf 'mpi:\n  ranks: [2]\n  oversubscribe: true\n  jobs:\n    p2p: {min_bytes: 1, max_bytes: 16777216}\n    allreduce: {min_bytes: 4, max_bytes: 16777216, nccl: false}\n' > $R/ranks2.yaml
for b in cupy-gpu cuda_python-gpu numba-gpu jax-gpu; do
  S=$(date +%s)
  timeout -k 5 80 python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml \
    config/mpi_gpu.yaml $R/ranks2.yaml --out $R --backends $b \
    --jobs p2p allreduce halo --force >> $R/sweep.log 2>&1
  echo "$b rc=$? wall_s=$(( $(date +%s) - S ))" | tee -a $R/runs.txt
done
tar czf $OUT/direct.tgz -C $OUT res
grep -E "wrote|collect" $R/sweep.log
