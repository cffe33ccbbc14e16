#!/bin/bash
# Issue 3 proof on one H100: the default GPU suite + NumPy baseline, report included,
# in one uninterrupted Snakemake run (the cross-checks: run_explore.sh, run_h100_numba.sh).
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
nvidia-smi > $OUT/nvidia-smi.txt 2>&1
T0=$(date +%s)
timeout -k 10 ${SUITE_LIMIT:-580} python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml .devcfg/h100.yaml \
  --config results_dir=results/h100 logs_dir=results/h100/logs > $OUT/snakemake.log 2>&1
echo "snakemake rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/snakemake.log
tar czf $OUT/h100.tgz --exclude=results/h100/cache results/h100 .snakemake/log 2>/dev/null
echo done
