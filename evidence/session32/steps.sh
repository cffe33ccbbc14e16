#!/bin/bash
# The GPU machine's work of session 32, one step after the other (no CPU step overlaps a
# GPU step), started by evidence/refactor29/commands/chain.sh (STEPS=this file):
# where the caller's clock's spread comes from (issue 23 item 7), JAX's sync check (item
# 10), the other four frameworks' best implementations at 2^26 (issue 27), the CPU suite
# at its default sizes (issue 26 item 3, python-cpu for issue 28) and the allocation
# kernel on every GPU backend (issue 28). Each step's line goes to /tmp/chain.txt.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
step regimes python3 evidence/verdicts/host_regimes.py --children 16 --seconds 30
step jaxsync python3 evidence/verdicts/jax_sync_check.py
step perf27 $SM --configfile config/config.yaml evidence/perf27/best.yaml \
  --config results_dir=results/perf27 logs_dir=results/perf27/logs \
  "backends=[cupy-gpu,numba-gpu,jax-gpu,cuda_python-gpu]"
step cpu26 $SM --configfile config/config.yaml evidence/cpu26/cpu.yaml \
  --config results_dir=results/cpu26 logs_dir=results/cpu26/logs
step alloc28 $SM --configfile config/config.yaml evidence/issue28/alloc.yaml \
  --config results_dir=results/alloc28 logs_dir=results/alloc28/logs
touch /tmp/chain.done
