#!/bin/bash
# Issue 17 on a GPU, call 1 of 2: the smoke configuration with every GPU backend and every
# MPI backend (2 ranks share the one GPU: mpi.oversubscribe), through Snakemake, report
# included. start_build.sh (a call before, carrying .ompi) builds CUDA-aware Open MPI in
# the background meanwhile, for call 2. Carry .whl and .devcfg.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT) NCCL_NVLS_ENABLE=0
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
S=$(date +%s)
timeout -k 5 ${SMOKE_S:-420} python3 -m snakemake --cores 12 --profile profiles/local \
  --configfile .test/config/config.yaml .devcfg/verify.yaml \
  --config results_dir=results/verify logs_dir=results/verify/logs > $OUT/snakemake.log 2>&1
echo "snakemake rc=$? wall_s=$(( $(date +%s) - S ))" | tee -a $OUT/snakemake.log
tar czf $OUT/verify.tgz --exclude="*samples*" results/verify
grep -E "^\[|Finished|rc=|Error|error" $OUT/snakemake.log | tail -n 40
