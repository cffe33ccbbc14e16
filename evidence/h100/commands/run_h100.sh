#!/bin/bash
# Issue 3 proof on one H100: the default GPU suite + NumPy baseline, report included.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
nvidia-smi > $OUT/nvidia-smi.txt 2>&1
T0=$(date +%s)
timeout -k 10 ${SUITE_LIMIT:-520} python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml .devcfg/h100.yaml \
  --config results_dir=results/h100 logs_dir=results/h100/logs > $OUT/snakemake.log 2>&1
echo "snakemake rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/snakemake.log
ls -la results/h100 results/h100/raw >> $OUT/snakemake.log 2>&1
tar czf $OUT/h100.tgz results/h100 .snakemake/log 2>/dev/null
ELAPSED=$(( $(date +%s) - T0 ))
if [ $ELAPSED -lt 430 ]; then
  timeout -k 5 $(( 560 - ELAPSED )) python3 workflow/scripts/crosscheck.py --help > /dev/null 2>&1 && \
  timeout -k 5 $(( 560 - ELAPSED )) python3 workflow/scripts/crosscheck.py --out $OUT/crosscheck.csv > $OUT/crosscheck.log 2>&1
  echo "crosscheck rc=$?" >> $OUT/crosscheck.log
fi
echo done
