#!/bin/bash
# Issue 3 proof on one H100: the default GPU suite + NumPy baseline, report included,
# in one uninterrupted Snakemake run; then the JAX timer cross-check if time is left.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
nvidia-smi > $OUT/nvidia-smi.txt 2>&1
T0=$(date +%s)
timeout -k 10 ${SUITE_LIMIT:-560} python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml .devcfg/h100.yaml \
  --config results_dir=results/h100 logs_dir=results/h100/logs > $OUT/snakemake.log 2>&1
echo "snakemake rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/snakemake.log
tar czf $OUT/h100.tgz --exclude=results/h100/cache results/h100 .snakemake/log 2>/dev/null
ELAPSED=$(( $(date +%s) - T0 ))
if [ $ELAPSED -lt 440 ]; then
  PYTHONPATH=$PWD/src timeout -k 5 $(( 520 - ELAPSED )) python3 workflow/scripts/crosscheck.py \
    --backends jax-gpu --out $OUT/crosscheck_jax.csv > $OUT/crosscheck_jax.log 2>&1
  echo "crosscheck rc=$?" >> $OUT/crosscheck_jax.log
fi
echo done
