#!/bin/bash
# On the GPU machine, call 2 (right after suite.sh): wait for the suite and pack
# it; then, the GPU idle otherwise, JAX's sync-clock check and the independent crossover
# check of vector_add float32 (repeat.sh, the call after, repeats the caller's clock). Usage: bash finish.sh h100
NAME=${1:?name}
export PYTHONPATH=/tmp/site:$PWD/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
[ -d /tmp/site/snakemake ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
for _ in $(seq ${WAIT_S:-400}); do [ -f /tmp/suite.done ] && break; sleep 1; done
tail -n 2 /tmp/snakemake.log
cp /tmp/snakemake.log $OUT/suite.log
tar czf $OUT/$NAME.tgz --exclude=results/$NAME/cache results/$NAME /tmp/nvidia-smi.txt 2>/dev/null
T=$(date +%s)
timeout 60 python3 tools/jax_sync_check.py > $OUT/jax_sync_check.txt 2>&1
echo "jax_sync_check rc=$? ($(( $(date +%s) - T )) s)" >> $OUT/jax_sync_check.txt
timeout 240 python3 tools/crossover_check.py --out $OUT/crossover_check.json \
  > $OUT/crossover_check.txt 2>&1
echo "crossover_check rc=$? ($(( $(date +%s) - T )) s)" >> $OUT/crossover_check.txt
cat $OUT/jax_sync_check.txt $OUT/crossover_check.txt | tail -n 60
