#!/bin/bash
# The spread window's A/B on one machine (STEPS=this file, from the working tree's root,
# carry .whl .devcfg): CUDA Python's and Numba's GPU steps (the default configuration
# plus ../verdicts/device.yaml), alternately with the default 20 s window (A) and a 5 s
# one (B), three times each, warm compile caches after a first untimed run. Then
#   python evidence/session38/agreement.py A1=results/ab_A1/raw A2=results/ab_A2/raw \
#     A3=results/ab_A3/raw B1=results/ab_B1/raw B2=results/ab_B2/raw B3=results/ab_B3/raw
# says whether A-B pairs agree as often as A-A and B-B pairs (issue 27: a cut's medians
# within run-to-run noise). About 3 minutes a run on an H100.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
printf 'backends: [cuda_python-gpu, numba-gpu]\n' > /tmp/ab_A.yaml
printf 'backends: [cuda_python-gpu, numba-gpu]\ngpu_harness: {caller_spread_s: 5}\n' > /tmp/ab_B.yaml
ab() {  # ab NAME A|B
  $SM --configfile config/config.yaml evidence/verdicts/device.yaml /tmp/ab_$2.yaml --config \
    results_dir=results/ab_$1 logs_dir=results/ab_$1/logs compile_cache_dir=$ROOT/results/ccab
  local rc=$?
  rm -f results/ab_$1/samples.csv results/ab_$1/raw/*.samples.csv
  return $rc
}
step ab_warmup ab warmup A
for i in 1 2 3; do step ab_A$i ab A$i A; step ab_B$i ab B$i B; done
touch /tmp/chain.done
