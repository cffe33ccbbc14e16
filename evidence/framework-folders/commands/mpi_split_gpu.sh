#!/usr/bin/env bash
# On a host with several GPUs, as one device call: the MPI jobs whose local computations
# moved into kernels/ (halo, halo_overlap, grad_avg), for every GPU backend that had them,
# at 1, 2, 4, ... ranks up to the GPUs, once with the tree before the move ($BEFORE, a
# `git archive` of it) and once with this tree, backend by backend in turn so both meet the
# GPUs in the same state; then the two mpi.csv compared row by row. Carry .ompi/ompi-cuda
# and the before tree:
#   git archive f10fa99 src workflow config tools | (mkdir -p .mgpu-before && tar -x -C .mgpu-before)
#   BEFORE=.mgpu-before bash evidence/framework-folders/commands/mpi_split_gpu.sh
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
BEFORE="$(cd "${BEFORE:?the tree before the move}" && pwd)"
rm -rf /tmp/ompi-cuda && cp -a "$ROOT/.ompi/ompi-cuda" /tmp/ompi-cuda
export OPAL_PREFIX=/tmp/ompi-cuda
export PATH=$OPAL_PREFIX/bin:$PATH LD_LIBRARY_PATH=$OPAL_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_MCA_opal_cuda_support=true OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
R=${R:-/tmp/mgpu}
mkdir -p "$R/before" "$R/after"
N=$(nvidia-smi -L | wc -l)
all="1"; for ((n = 2; n <= N; n *= 2)); do all="$all, $n"; done
printf 'mpi:\n  ranks: [%s]\n' "$all" > "$R/ranks_all.yaml"
{ date -u +%FT%TZ; nvidia-smi -L; nproc; } > "$R/host.txt"
for b in ${BACKENDS:-cupy-gpu numba-gpu jax-gpu cuda_python-gpu numpy-cpu}; do
    for side in before after; do
        tree=$ROOT; [[ $side == before ]] && tree=$BEFORE
        t0=$(date +%s)
        (cd "$tree" && PYTHONPATH=$tree/src python3 workflow/scripts/mpi_sweep.py \
            --configfile config/config.yaml config/mpi_gpu.yaml \
            "$ROOT/evidence/mpi-across-gpus/commands/local_rank.yaml" \
            "$HERE/mpi_split_small.yaml" "$R/ranks_all.yaml" --out "$R/$side" \
            --backends "$b" --jobs halo halo_overlap grad_avg) >> "$R/$side.log" 2>&1
        echo "[$b $side] rc=$? wall_s=$(( $(date +%s) - t0 ))" >> "$R/phases.txt"
    done
done
echo "[done] $(date -u +%FT%TZ)" >> "$R/phases.txt"
