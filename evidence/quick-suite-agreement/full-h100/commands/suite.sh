#!/bin/bash
# On the GPU machine, call 1: the default GPU suite plus the NumPy baseline
# (config/config.yaml + tools/device/gpu-suite.yaml), report included, in one Snakemake
# run started in its own session so that it outlives this call; finish.sh collects it.
# Carry .whl (Snakemake's wheels) and .devcfg (COMMIT). Usage: bash suite.sh h100
NAME=${1:?name}
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
nvidia-smi > /tmp/nvidia-smi.txt 2>&1
date +%s > /tmp/t0
setsid nohup bash -c "python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml tools/device/gpu-suite.yaml \
  --config results_dir=results/$NAME logs_dir=results/$NAME/logs > /tmp/snakemake.log 2>&1;
  echo \"snakemake rc=\$? wall_s=\$(( \$(date +%s) - \$(cat /tmp/t0) ))\" >> /tmp/snakemake.log;
  touch /tmp/suite.done" > /dev/null 2>&1 &
for _ in $(seq ${WAIT_S:-560}); do [ -f /tmp/suite.done ] && break; sleep 1; done
cp /tmp/snakemake.log $OUT/ 2>/dev/null
grep -E "rule |Finished|rc=|rror" /tmp/snakemake.log | tail -n 30
