#!/bin/bash
# The quick suite on one H100, cold then warm compile caches, each with its stage
# breakdown (STEPS=this file for tools/device/chain.sh, run from the
# working tree's root; carry .whl and .devcfg, whose COMMIT is the commit under test):
#   q_cold: the default configuration plus tools/device/gpu-suite.yaml, with suite=quick
#           given last (that file names the full suite, for the evidence runs that use it)
#           (the GPU steps and the NumPy baseline in the interpreter running Snakemake,
#           as the full suite's 13.6/17.2 min were taken: evidence/suite-wall-time), report
#           included, with empty compile caches (a first run);
#   q_warm: the same with the caches q_cold left (a second run).
# Then, per run, breakdown.md (each step's wall time, each worker's time by stage) and
# agreement.txt: the quick runs' medians against the full suite's two H100 runs of
# evidence/suite-wall-time (the run-to-run spread) on the rows they share.
# No network is needed: Snakemake comes from .whl (chain.sh installs it in /tmp/site).
# config/config.yaml is not given as a --configfile: the workflow reads it, and given
# again it would go over the quick overlay (the workflow refuses that).
source tools/device/step.sh  # ROOT, SM, step, snapshot
snapshot /tmp/treeq
CACHE=$ROOT/results/ccq
HERE=evidence/quick-suite-timing
R=evidence/suite-wall-time/runs.csv.xz
quick_run() {  # quick_run NAME: the quick suite into $ROOT/results/NAME, then its breakdown
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile tools/device/gpu-suite.yaml \
    --config suite=quick results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$CACHE")
  local rc=$?
  python3 "$TREE/tools/stage_breakdown.py" "/tmp/$1.log" "$out/logs" "$1" > "$out/breakdown.md" 2>&1
  if [ "$1" = q_warm ]; then
    python3 "$TREE/tools/run_agreement.py" "full_a_cold=$TREE/$R#a_cold" \
      "full_b_warm=$TREE/$R#b_warm" "quick_cold=$ROOT/results/q_cold/timings.csv" \
      "quick_warm=$out/timings.csv" > "$out/agreement.txt" 2>&1
  fi
  return $rc
}
step q_cold quick_run q_cold
step q_warm quick_run q_warm
touch /tmp/chain.done
