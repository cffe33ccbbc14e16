#!/bin/bash
# Call 2 of 2 per machine: wait for run_suite.sh's suite, then pack the results.
# Usage: bash collect_suite.sh h100|h200
NAME=${1:?name}
for _ in $(seq ${WAIT_S:-500}); do [ -f /tmp/suite.done ] && break; sleep 1; done
tail -n 3 /tmp/snakemake.log
cp /tmp/snakemake.log /tmp/nvidia-smi*.txt $OUT/
tar czf $OUT/$NAME.tgz --exclude=results/$NAME/cache results/$NAME .snakemake/log 2>/dev/null
ls -la $OUT
