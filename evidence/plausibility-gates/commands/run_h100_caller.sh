#!/bin/bash
# On one H100, call 1: the default GPU suite + NumPy baseline, report
# included, in one uninterrupted Snakemake run, with the side-stream mutants loaded
# (GPUBENCH_PLUGINS=gpubench.kernels.vector_add.mutants; gpubench.mutants when it ran).
# The run is started in its own session so that it outlives this call if it must; call 2
# (collect_h100_caller.sh) waits for it.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
export GPUBENCH_PLUGINS=gpubench.kernels.vector_add.mutants
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
nvidia-smi > /tmp/nvidia-smi.txt 2>&1
date +%s > /tmp/t0
setsid nohup bash -c 'python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml .devcfg/h100.yaml \
  --config results_dir=results/h100 logs_dir=results/h100/logs > /tmp/snakemake.log 2>&1;
  echo "snakemake rc=$? wall_s=$(( $(date +%s) - $(cat /tmp/t0) ))" >> /tmp/snakemake.log;
  touch /tmp/suite.done' > /dev/null 2>&1 &
for _ in $(seq ${WAIT_S:-560}); do [ -f /tmp/suite.done ] && break; sleep 1; done
cp /tmp/snakemake.log /tmp/nvidia-smi.txt $OUT/ 2>/dev/null
grep -E "^\[|rule |Finished|rc=" /tmp/snakemake.log | tail -n 30
