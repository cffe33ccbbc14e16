#!/bin/bash
# Issue 17/18 on a GPU after the last merge: every MPI job for every GPU backend at 1 and
# 2 ranks (2 ranks share the one GPU), smoke sizes, without Snakemake (carry .devcfg).
export PYTHONPATH=$PWD/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) NCCL_NVLS_ENABLE=0
R=$OUT/res; mkdir -p $R
for b in cupy-gpu cuda_python-gpu numba-gpu jax-gpu; do
  S=$(date +%s)
  timeout -k 5 ${PER_S:-110} python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml \
    .test/config/config.yaml .devcfg/verify.yaml --out $R --backends $b --force >> $R/sweep.log 2>&1
  echo "$b rc=$? wall_s=$(( $(date +%s) - S ))" | tee -a $R/runs.txt
done
grep -E "wrote|collect" $R/sweep.log
