#!/bin/bash
# Issue 3 proof, second call: the GPU steps not finished in the first call, one by one.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
T0=$(date +%s)
for b in ${STEPS:-torch-gpu cuda_python-gpu numba-gpu jax-gpu}; do
  LEFT=$(( 545 - ($(date +%s) - T0) ))
  [ $LEFT -lt 30 ] && { echo "no time left for $b"; break; }
  S=$(date +%s)
  timeout -k 10 $LEFT python3 -m snakemake --cores 16 --profile profiles/local \
    --configfile config/config.yaml .devcfg/h100.yaml \
    --config results_dir=results/h100 logs_dir=results/h100/logs -- results/h100/raw/$b.csv \
    > $OUT/snakemake-$b.log 2>&1
  echo "$b rc=$? step_wall_s=$(( $(date +%s) - S ))" | tee -a $OUT/steps.txt
  tar czf $OUT/h100b.tgz results/h100 2>/dev/null
done
echo done
