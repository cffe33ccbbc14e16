#!/bin/bash
# The default suite (quick, every framework: tools/device/every-framework.yaml) run once
# per name in RUNS on one GPU machine, one after another, each into results/<name> with
# its report and its stage breakdown (STEPS=this file for tools/device/chain.sh, from the
# working tree's root; carry .whl and .devcfg, whose COMMIT is the commit under test).
# The runs share one compile cache, so the first run meets cold caches and the next warm
# ones: RUNS="a1 a2 a3" on one machine, RUNS="b1" on another.
source tools/device/step.sh  # ROOT, SM, step, snapshot
snapshot /tmp/tree
CACHE=$ROOT/results/cache
one_run() {  # one_run NAME: the default suite into $ROOT/results/NAME, then its breakdown
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile tools/device/every-framework.yaml \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$CACHE")
  local rc=$?
  python3 "$TREE/tools/stage_breakdown.py" "/tmp/$1.log" "$out/logs" "$1" > "$out/breakdown.md" 2>&1
  # the steps' samples are all in samples.csv: keep that one, compressed (files back are
  # at most 16 MiB each)
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  nvidia-smi --query-gpu=name,serial,uuid,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
  return $rc
}
for r in ${RUNS:?RUNS=names}; do step "$r" one_run "$r"; done
touch /tmp/chain.done
