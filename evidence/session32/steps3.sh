#!/bin/bash
# Session 32's third chain (STEPS=this file): JAX's sync check with and without CUPTI for
# the device clock (does CUPTI, once attached, slow the same executable's sync calls?),
# then the halo job with and without overlap for the GPU backends, 1 and 2 ranks sharing
# the GPU (the NumPy ranks' rows came in the second chain's halo part and on the CPU).
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
step jaxsync3 python3 evidence/verdicts/jax_sync_check.py --trace --rounds 3
step jaxsync3_nocupti python3 evidence/verdicts/jax_sync_check.py --trace --rounds 3 --no-cupti
step mpi28b python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml \
  config/mpi_gpu.yaml evidence/issue28/mpi_halo.yaml --out results/mpi28b \
  --jobs halo halo_overlap --backends cupy-gpu numba-gpu jax-gpu cuda_python-gpu
touch /tmp/chain.done
