#!/bin/bash
# The block-size sweep (block-sizes.yaml over config/config.yaml) into
# results/block-sizes (STEPS file for tools/device/chain.sh; carry .whl and .devcfg,
# whose COMMIT is the commit under test): the rows, the report, the GPU's name and clocks.
source tools/device/step.sh
snapshot /tmp/tree
sweep() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile config/config.yaml tools/device/block-sizes.yaml \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$ROOT/results/cache")
  local rc=$?
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  nvidia-smi --query-gpu=name,serial,uuid,clocks.max.sm,power.limit --format=csv \
    > "$out/gpu.txt" 2>&1
  return $rc
}
step block-sizes sweep block-sizes
touch /tmp/chain.done
