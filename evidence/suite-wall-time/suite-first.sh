#!/bin/bash
# The first-run chain (STEPS=this file, from the working tree's root, carry .whl
# .devcfg): the default GPU suite plus the NumPy baseline (config/config.yaml +
# tools/device/gpu-suite.yaml), report included, on one H100, from a copy of the tree
# made when it starts (/tmp/tree1):
#   a_cold: empty compile caches (a first run);
#   b_warm: the caches a_cold left (a second run), its GPU steps first (--prioritize), so
#           that a machine taken back at its 30 minutes cuts the NumPy step, whose time
#           does not depend on the caches, rather than a GPU step.
source tools/device/step.sh  # ROOT, SM, step, snapshot, suite_run
snapshot /tmp/tree1
CACHE=$ROOT/results/cc40
step a_cold suite_run a_cold "$CACHE"
G=$(for b in cupy jax torch numba cuda_python; do echo "$ROOT/results/b_warm/raw/$b-gpu.csv"; done)
step b_warm suite_run b_warm "$CACHE" --prioritize $G
touch /tmp/chain.done
