#!/bin/bash
# The default suite's GPU steps and NumPy (../gpu-steps.yaml) into results/folders (STEPS
# file for tools/device/chain.sh; carry .whl and .devcfg, whose COMMIT is the commit
# under test; FOLDERS_RUN=<name>: another folder than results/folders).
source tools/device/step.sh
snapshot /tmp/tree
gpu_run() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile tools/device/every-framework.yaml \
    evidence/framework-folders/gpu-steps.yaml \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$ROOT/results/cache")
  local rc=$?
  python3 "$TREE/tools/stage_breakdown.py" "/tmp/$1.log" "$out/logs" "$1" > "$out/breakdown.md" 2>&1
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  nvidia-smi --query-gpu=name,serial,uuid,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
  return $rc
}
step "${FOLDERS_RUN:-folders}" gpu_run "${FOLDERS_RUN:-folders}"
touch /tmp/chain.done
