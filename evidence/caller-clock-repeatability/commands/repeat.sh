#!/bin/bash
# On the GPU machine, the call after the suite (and the next if needed): the caller's clock repeated.
# repeat.yaml (the memory-bound kernels every verdict ranks, every GPU backend and NumPy)
# three times, one after the other on the otherwise idle GPU, in a session of its own;
# each call waits up to WAIT_S for it, and the call that sees it done packs the three
# runs and prints repeatability.py's spread. Usage: bash repeat.sh
export PYTHONPATH=/tmp/site:$PWD/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
[ -d /tmp/site/snakemake ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
if [ ! -f /tmp/repeat.started ]; then
  touch /tmp/repeat.started; date +%s > /tmp/repeat.t0
  setsid nohup bash -c 'for i in 1 2 3; do
    python3 -m snakemake --cores 16 --profile profiles/local \
      --configfile config/config.yaml evidence/caller-clock-repeatability/repeat.yaml \
      --config results_dir=results/repeat$i logs_dir=results/repeat$i/logs > /tmp/repeat$i.log 2>&1
    echo "repeat $i rc=$? at $(( $(date +%s) - $(cat /tmp/repeat.t0) )) s" >> /tmp/repeat.txt
  done; touch /tmp/repeat.done' > /dev/null 2>&1 &
fi
for _ in $(seq ${WAIT_S:-560}); do [ -f /tmp/repeat.done ] && break; sleep 1; done
cat /tmp/repeat.txt 2>/dev/null
if [ -f /tmp/repeat.done ]; then
  cp /tmp/repeat.txt $OUT/
  tar czf $OUT/repeat.tgz --exclude="*/cache" --exclude="*/report" results/repeat* /tmp/repeat*.log 2>/dev/null
  python3 tools/repeatability.py results/repeat*/timings.csv > $OUT/repeatability.txt 2>&1
  echo "repeatability rc=$?" >> $OUT/repeatability.txt
  tail -n 40 $OUT/repeatability.txt
fi
