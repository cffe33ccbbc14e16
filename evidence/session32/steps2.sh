#!/bin/bash
# Session 32's second chain (STEPS=this file, evidence/refactor29/commands/chain.sh), one
# step after the other: JAX's sync check with its samples in order (issue 23 item 10);
# the caller's clock three times with the spread rounds (item 7); every GPU backend on
# every kernel at its largest size (issue 28: peak memory, cupyx.scipy.fft), scipy.fft on
# the CPU, the halo job with and without overlap (ranks sharing the GPU); then the default
# GPU suite plus the NumPy baseline (issue 23's new default run, issue 27's wall time).
source evidence/refactor29/commands/step.sh  # ROOT, SM, step NAME CMD...
export PYTHONPATH=/tmp/site:$ROOT/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
step jaxsync2 python3 evidence/verdicts/jax_sync_check.py --trace
for i in 1 2 3; do
  step repeat$i $SM --configfile config/config.yaml evidence/verdicts/repeat.yaml \
    --config results_dir=results/repeat$i logs_dir=results/repeat$i/logs
done
step largest28 $SM --configfile config/config.yaml evidence/issue28/largest.yaml \
  --config results_dir=results/largest28 logs_dir=results/largest28/logs
step fft28 $SM --configfile config/config.yaml evidence/issue28/numpy_fft.yaml \
  --config results_dir=results/fft28 logs_dir=results/fft28/logs
step mpi28 python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml \
  config/mpi_gpu.yaml evidence/issue28/mpi_halo.yaml --out results/mpi28 \
  --jobs halo halo_overlap
step suite $SM --configfile config/config.yaml evidence/verdicts/device.yaml \
  --config results_dir=results/suite logs_dir=results/suite/logs
touch /tmp/chain.done
