#!/bin/bash
# The power-capped cases with energy on (../reread.yaml) into results/reread (STEPS file
# for tools/device/chain.sh; carry .whl and .devcfg, whose COMMIT is the commit under test).
source tools/device/step.sh
snapshot /tmp/tree
reread() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile tools/device/every-framework.yaml \
    evidence/energy-per-call/reread.yaml \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$ROOT/results/cache")
  local rc=$?
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  nvidia-smi --query-gpu=name,serial,uuid,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
  return $rc
}
step reread reread reread
touch /tmp/chain.done
