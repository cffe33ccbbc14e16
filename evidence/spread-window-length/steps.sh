#!/bin/bash
# The chain of this run (STEPS=this file, from the working tree's root, carry .whl .devcfg),
# run from a copy of the tree made when it starts (/tmp/tree); outputs go to
# $ROOT/results/<step>, where chain.sh packs them.
#   ncu: tools/ncu.sh, Nsight Compute profiles of the current code's cells
#     under 95 % of the copy ceiling (-> results/ncu/profiles.csv, shipped as
#     src/gpubench/report/profiles.csv).
#   ab_*: the spread window's A/B on one machine (tools/ab_decide.py):
#     CUDA Python's GPU step alternately with the default 20 s window (A) and a 5 s one
#     (B), three times each, warm compile caches after a first untimed run.
source tools/device/step.sh  # ROOT, SM, step, snapshot, suite_run
snapshot /tmp/tree
{ id; env | grep -E '^(CC|CXX|CFLAGS)=' || echo "no CC/CXX in the environment"; } > /tmp/where.log
printf 'backends: [cuda_python-gpu]\n' > /tmp/ab_A.yaml
printf 'backends: [cuda_python-gpu]\ngpu_harness: {caller_spread_s: 5}\n' > /tmp/ab_B.yaml
mkdir -p "$ROOT/results/ncu"
step ncu bash -c "cd $TREE && OUT=$ROOT/results/ncu bash tools/ncu.sh"
cp /tmp/where.log "$ROOT/results/ncu/" 2>/dev/null
step ab_warmup suite_run ab_warmup "$ROOT/results/ccab" /tmp/ab_A.yaml
for i in 1 2 3; do
  step ab_A$i suite_run ab_A$i "$ROOT/results/ccab" /tmp/ab_A.yaml
  step ab_B$i suite_run ab_B$i "$ROOT/results/ccab" /tmp/ab_B.yaml
done
touch /tmp/chain.done
