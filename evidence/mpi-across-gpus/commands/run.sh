#!/usr/bin/env bash
# On a GPU host with several GPUs and no network, as one device call (then wait.sh in
# the next ones): the carried CUDA-aware Open MPI (.ompi/ompi-cuda, built by
# tools/openmpi-cuda/build_openmpi_cuda.sh and relocated with OPAL_PREFIX),
# a check that device buffers pass through it between two GPUs, the host's topology,
# then sweep.sh in its own session. Results: $OUT/now.tgz (the results folder when the
# call ends).
#   GPUBENCH_GIT_COMMIT=<commit> bash evidence/mpi-across-gpus/commands/run.sh
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
cd "$ROOT"
# a copy outside the tree: a later device call's sync of the tree must not take it away
# from the ranks still running
rm -rf /tmp/ompi-cuda && cp -a "$ROOT/.ompi/ompi-cuda" /tmp/ompi-cuda
export OPAL_PREFIX=/tmp/ompi-cuda
export PATH=$OPAL_PREFIX/bin:$PATH LD_LIBRARY_PATH=$OPAL_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_MCA_opal_cuda_support=true OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast stays off in every process the ranks start (NCCL, PyTorch, NVSHMEM)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 PYTHONPATH=$ROOT/src
export R=${R:-/tmp/mgpu/res}
mkdir -p "$R"
{ date -u +%FT%TZ; echo "commit ${GPUBENCH_GIT_COMMIT:-unknown}"; nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi topo -m; nvidia-smi nvlink -s 2>&1 | head -40; nproc; } > "$R/host.txt" 2>&1
{ ompi_info --version; ompi_info --parsable --all | grep -E "mpi_built_with_cuda_support|btl:smcuda|coll:cuda"
  python3 -c "import mpi4py; from mpi4py import MPI; print('mpi4py', mpi4py.__version__); print(MPI.Get_library_version())"
} > "$R/mpi_library.txt" 2>&1
timeout -k 5 120 mpiexec -n 2 python3 tools/openmpi-cuda/sanity_direct.py \
    > "$R/sanity.txt" 2>&1
echo "sanity rc=$?" >> "$R/sanity.txt"
cat "$R/host.txt" "$R/mpi_library.txt" "$R/sanity.txt" | head -60
setsid nohup bash "$HERE/sweep.sh" > "$R/sweep.out" 2>&1 < /dev/null &
bash "$HERE/wait.sh" "${WAIT_S:-520}"
