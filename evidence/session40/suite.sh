#!/bin/bash
# Session 40's suite chain (STEPS=this file, from the working tree's root, carry .whl
# .devcfg): the default GPU suite plus the NumPy baseline (config/config.yaml +
# evidence/verdicts/device.yaml), report included, on one H100, from a copy of the tree
# made when it starts (/tmp/tree40s):
#   a_cold: empty compile caches (a first run);
#   b_warm: the caches a_cold left (a second run), its GPU steps first (--prioritize), so
#           that a machine taken back at its 30 minutes cuts the NumPy step, whose time
#           does not depend on the caches, rather than a GPU step.
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
TREE=/tmp/tree40s
mkdir -p "$TREE"
tar cf - --exclude=./results --exclude=./.whl --exclude=./.snakemake . | tar xf - -C "$TREE"
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$TREE/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
CACHE=$ROOT/results/cc40
suite() {  # suite NAME [snakemake args]
  local name=$1; shift
  (cd "$TREE" && $SM --configfile config/config.yaml evidence/verdicts/device.yaml \
    --config results_dir="$ROOT/results/$name" logs_dir="$ROOT/results/$name/logs" \
    compile_cache_dir="$CACHE" "$@")
  local rc=$?
  rm -f "$ROOT/results/$name/samples.csv" "$ROOT"/results/$name/raw/*.samples.csv
  return $rc
}
step a_cold suite a_cold
G=$(for b in cupy jax torch numba cuda_python; do echo "$ROOT/results/b_warm/raw/$b-gpu.csv"; done)
step b_warm suite b_warm --prioritize $G
touch /tmp/chain.done
