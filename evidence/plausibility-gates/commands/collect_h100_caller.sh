#!/bin/bash
# On one H100, call 2: wait for the suite of call 1, then the independent
# perf_counter check of the vector_add crossover (independent_crossover.py, no gpubench),
# and pack the results.
for _ in $(seq ${WAIT_S:-400}); do [ -f /tmp/suite.done ] && break; sleep 1; done
tail -n 3 /tmp/snakemake.log
timeout -k 5 ${CHECK_S:-150} python3 tools/independent_crossover.py \
  > $OUT/independent_crossover.csv 2> $OUT/independent_crossover.log
tail -n 6 $OUT/independent_crossover.csv
cp /tmp/snakemake.log /tmp/nvidia-smi.txt $OUT/
tar czf $OUT/h100.tgz --exclude=results/h100/cache results/h100 .snakemake/log 2>/dev/null
ls -la $OUT
