#!/usr/bin/env bash
# Build Open MPI with CUDA support (if not built yet), check that device buffers pass
# through it, then run p2p, allreduce and halo with path direct beside staged, host
# and NCCL (CuPy ranks, 2 ranks: one GPU each where there are two; sharing one GPU, with
# mpi.oversubscribe, where there is one). Results: $OUT/cuda_aware.tgz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
export GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT 2>/dev/null || echo unknown)
P=/tmp/ompi-cuda
R=$OUT/res; mkdir -p "$R"
T0=$(date +%s)
save() { tar czf "$OUT/cuda_aware.tgz" -C "$OUT" res; }
if [[ ! -x $P/bin/ompi_info ]]; then
    bash tools/openmpi-cuda/build_openmpi_cuda.sh "$P" > "$R/build.log" 2>&1
    echo "build rc=$? wall_s=$(( $(date +%s) - T0 ))" | tee -a "$R/runs.txt"
    cp /tmp/ompi-build/openmpi-4.1.4/config.log "$R/config.log" 2>/dev/null
    save
fi
[[ -x $P/bin/ompi_info ]] || { tail -50 "$R/build.log"; exit 1; }
[[ ${BUILD_ONLY:-0} == 1 ]] && { cat "$R/build.log"; exit 0; }
export PATH=$P/bin:$PATH LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_MCA_opal_cuda_support=true
{ ompi_info --version; ompi_info --parsable --all | grep -E "cuda|smcuda" | head -30
  python3 -c "import mpi4py; from mpi4py import MPI; print('mpi4py', mpi4py.__version__); print(MPI.Get_library_version())"
  nvidia-smi topo -m; nvidia-smi -L; } > "$R/mpi_library.txt" 2>&1
N_GPUS=$(nvidia-smi -L | wc -l)
OVER=false; [[ $N_GPUS -lt 2 ]] && OVER=true
printf 'mpi:\n  ranks: [2]\n  oversubscribe: %s\n' "$OVER" > "$R/ranks2.yaml"
timeout -k 5 120 mpiexec --allow-run-as-root -n 2 python3 \
    tools/openmpi-cuda/sanity_direct.py > "$R/sanity.txt" 2>&1
echo "sanity rc=$? gpus=$N_GPUS" | tee -a "$R/runs.txt"; cat "$R/sanity.txt"
S=$(date +%s)
LEFT=$(( ${BUDGET_S:-570} - ($(date +%s) - T0) )); [[ $LEFT -gt ${SWEEP_S:-400} ]] && LEFT=${SWEEP_S:-400}
timeout -k 5 "$LEFT" python3 workflow/scripts/mpi_sweep.py --configfile \
    config/config.yaml config/mpi_gpu.yaml "$R/ranks2.yaml" --out "$R" \
    --backends cupy-gpu --jobs p2p allreduce halo --force > "$R/sweep.log" 2>&1
echo "sweep rc=$? wall_s=$(( $(date +%s) - S ))" | tee -a "$R/runs.txt"
save; tail -5 "$R/sweep.log"
