#!/bin/bash
# The thread sweep of ../threads.yaml on the GPU host's CPU into results/<name> (STEPS
# file for tools/device/chain.sh; carry .whl and .devcfg, whose COMMIT is the commit
# under test): RUN=<name>; THREADS_EXTRA=<config file> over threads.yaml.
source tools/device/step.sh
snapshot /tmp/tree
cpu_run() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile config/config.yaml evidence/cpu-thread-counts/threads.yaml \
    ${THREADS_EXTRA:-} \
    --config results_dir="$out" logs_dir="$out/logs")
  local rc=$?
  lscpu > "$out/lscpu.txt" 2>&1
  python3 "$TREE/tools/stage_breakdown.py" "/tmp/$1.log" "$out/logs" "$1" > "$out/breakdown.md" 2>&1
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  return $rc
}
step "${RUN:-h200-host}" cpu_run "${RUN:-h200-host}"
touch /tmp/chain.done
