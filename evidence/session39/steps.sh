#!/bin/bash
# Session 39's chain (STEPS=this file, from the working tree's root, carry .whl .devcfg).
# It runs from a copy of the tree made when it starts (/tmp/tree39), so that later
# calls' copies of the working tree do not change the code under measurement; outputs
# go to $ROOT/results/<step>, where chain.sh packs them.
#   a_jt, b_jt: JAX's and PyTorch's GPU steps (the default configuration plus
#     evidence/verdicts/device.yaml) with empty, then warm compile caches: JAX's chunked
#     memory pad and staged copy-back, and PyTorch's compiled rows in a suite run.
#     Sessions 33, 37 and 38 kept the cache folder in a shell variable named CC, which
#     the GPU machine's environment exports: Triton took the folder for its C compiler
#     ("PermissionError: [Errno 13] Permission denied: '<folder>'"). Here it is CACHE.
#   ab_*: the spread window's A/B on one machine, CUDA Python's GPU step alternately
#     with the default 20 s window (A) and a 5 s one (B), three times each, warm caches.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step, snapshot, suite_run
snapshot /tmp/tree39
CACHE=$ROOT/results/cc39
{ id; env | grep -E '^(CC|CXX|CFLAGS)=' || echo "no CC/CXX in the environment"; } > /tmp/where.log
printf 'backends: [jax-gpu, torch-gpu]\n' > /tmp/jt.yaml
printf 'backends: [cuda_python-gpu]\n' > /tmp/ab_A.yaml
printf 'backends: [cuda_python-gpu]\ngpu_harness: {caller_spread_s: 5}\n' > /tmp/ab_B.yaml
step a_jt suite_run a_jt "$CACHE" /tmp/jt.yaml
step b_jt suite_run b_jt "$CACHE" /tmp/jt.yaml
step ab_warmup suite_run ab_warmup "$ROOT/results/ccab" /tmp/ab_A.yaml
for i in 1 2 3; do
  step ab_A$i suite_run ab_A$i "$ROOT/results/ccab" /tmp/ab_A.yaml
  step ab_B$i suite_run ab_B$i "$ROOT/results/ccab" /tmp/ab_B.yaml
done
cp /tmp/where.log "$ROOT/results/ab_B3/" 2>/dev/null
touch /tmp/chain.done
