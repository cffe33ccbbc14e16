#!/bin/bash
# Issue 17 on a GPU, call 1 of 2: the smoke configuration with every GPU backend and every
# MPI backend (2 ranks share the one GPU: mpi.oversubscribe), through Snakemake, report
# included; meanwhile CUDA-aware Open MPI builds in the background for call 2.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) NCCL_NVLS_ENABLE=0
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
setsid nohup bash -c "bash evidence/cuda_aware_mpi/commands/build_openmpi_cuda.sh /tmp/ompi-cuda \
  > /tmp/ompi-build.log 2>&1; touch /tmp/ompi.done" > /dev/null 2>&1 &
S=$(date +%s)
timeout -k 5 ${SMOKE_S:-420} python3 -m snakemake --cores 12 --profile profiles/local \
  --configfile .test/config/config.yaml .devcfg/verify.yaml \
  --config results_dir=results/verify logs_dir=results/verify/logs > $OUT/snakemake.log 2>&1
echo "snakemake rc=$? wall_s=$(( $(date +%s) - S ))" | tee -a $OUT/snakemake.log
tar czf $OUT/verify.tgz results/verify
grep -E "^\[|Finished|rc=|Error|error" $OUT/snakemake.log | tail -n 40
