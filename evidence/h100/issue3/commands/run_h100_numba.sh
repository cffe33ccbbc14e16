#!/bin/bash
# Issue 3: re-run the numba-gpu step of the full-suite run (call 1) with the 4-per-trip
# float32 sigmoid, collect and report again; then the JAX cross-check.
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
tar xzf .devcfg/h100_prev.tgz
T0=$(date +%s)
timeout -k 10 240 python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml .devcfg/h100.yaml \
  --config results_dir=results/h100 logs_dir=results/h100/logs \
  --forcerun results/h100/raw/numba-gpu.csv --rerun-triggers mtime > $OUT/snakemake_numba.log 2>&1
echo "snakemake rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/snakemake_numba.log
tar czf $OUT/h100_numba.tgz --exclude=results/h100/cache results/h100 2>/dev/null
PYTHONPATH=$PWD/src timeout -k 5 200 python3 workflow/scripts/crosscheck.py --backends jax-gpu \
  --out $OUT/crosscheck_jax-gpu.csv > $OUT/crosscheck_jax-gpu.log 2>&1
echo "crosscheck rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a $OUT/snakemake_numba.log
grep -E "rule|wildcards|Finished" $OUT/snakemake_numba.log | head -20; tail -n 8 $OUT/crosscheck_jax-gpu.log
