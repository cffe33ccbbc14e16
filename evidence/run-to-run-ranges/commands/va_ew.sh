#!/bin/bash
# One run of va_ew.yaml over the default suite (every-framework.yaml), into
# results/$RUN (default a3), with the compile caches runs.sh left on this machine, if any
# (STEPS file for tools/device/chain.sh; RUN=b1 on a second machine).
source tools/device/step.sh
snapshot /tmp/tree3
CACHE=$ROOT/results/cache
va_run() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile tools/device/every-framework.yaml \
    evidence/run-to-run-ranges/va_ew.yaml \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$CACHE")
  local rc=$?
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  return $rc
}
step "${RUN:-a3}" va_run "${RUN:-a3}"
touch /tmp/chain.done
