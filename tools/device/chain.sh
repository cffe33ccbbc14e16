#!/bin/bash
# One device call of a chain of steps on a GPU machine (STEPS=<steps file>, from the
# repository root): the first call installs Snakemake's carried wheels (carry .whl, and
# .devcfg with COMMIT) and starts the steps file in a process session of its own (setsid)
# so that it outlives the call; every call waits up to WAIT_S seconds, then packs each
# step finished since the last call into $OUT/<step>.tgz (UNTIL=<step>: return once that
# step is done). Usage: STEPS=evidence/<folder>/steps.sh bash tools/device/chain.sh
# (STEPS="a.sh b.sh": both, one after the other, in the same machine session)
[ -d /tmp/site/snakemake ] || python3 -m pip install -q --no-index --no-deps --no-compile \
  --target /tmp/site .whl/*.whl
if [ ! -f /tmp/chain.started ]; then
  touch /tmp/chain.started
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1; nvidia-smi topo -m >> "$OUT/nvidia-smi.txt" 2>&1
  lscpu > "$OUT/lscpu.txt" 2>&1
  # several steps files run one after the other (each ends with chain.done: only the
  # last one's stays)
  setsid nohup bash -c 'for s; do rm -f /tmp/chain.done; bash "$s"; done; touch /tmp/chain.done' \
    _ ${STEPS:?STEPS=<steps file> ...} > /tmp/chain.log 2>&1 &
fi
for _ in $(seq "${WAIT_S:-560}"); do [ -f "/tmp/${UNTIL:-chain}.done" ] && break; sleep 1; done
shopt -s nullglob
for d in /tmp/*.done; do
  n=$(basename "$d" .done); [ "$n" = chain ] && continue; [ -f "/tmp/$n.packed" ] && continue
  tar czf "$OUT/$n.tgz" --exclude="*/cache" --exclude="*.html" "/tmp/$n.log" \
    $( [ -d "results/$n" ] && echo "results/$n" ) 2>/dev/null
  touch "/tmp/$n.packed"
done
cat /tmp/chain.txt 2>/dev/null; cp /tmp/chain.txt /tmp/chain.log "$OUT/" 2>/dev/null
ls /tmp/*.log | tail -3; tail -n 5 "$(ls -t /tmp/*.log | head -1)"
