#!/bin/bash
# The reduced-precision GEMMs and the float32 matmul rows beside them, every GPU framework
# at n = 1024-8192 (config/config.yaml + tools/device/reduced-precision.yaml) into
# results/reduced-precision: a STEPS file for tools/device/chain.sh (carry .whl and
# .devcfg, whose COMMIT is the commit under test).
source tools/device/step.sh
snapshot /tmp/tree
reduced_run() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile config/config.yaml tools/device/reduced-precision.yaml \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$ROOT/results/cache")
  local rc=$?
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  nvidia-smi --query-gpu=name,serial,uuid,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
  grep -h -A40 "traceback of the error" "$out"/logs/*/*.log > "$out/tracebacks.txt" 2>/dev/null
  return $rc
}
step reduced-precision reduced_run reduced-precision
touch /tmp/chain.done
