#!/usr/bin/env bash
# The MPI steps across the GPUs of one host (1, 2, 4, ... ranks up to its GPUs) with a CUDA-aware Open MPI, in the order of
# what they answer: the link (peer copy), point-to-point and allreduce beside it, the
# halo exchange blocking and overlapped, scaling to 4 GPUs, device selection, one process
# driving several GPUs. Each phase is one mpi_sweep call over the same results folder
# (a step whose CSV exists is not re-run, so a cut-off sweep resumes), and the folder is
# packed beside it after each phase (<results>.tgz: wait.sh hands it back).
#   R=<results> bash sweep.sh        (started by run.sh, in its own session)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
cd "$ROOT"
SELECT=${SELECT:-local_rank.yaml}
# rank counts from the GPUs here: all = 1, 2, 4, ... up to them; pairs = 2 and the most
N=$(nvidia-smi -L | wc -l)
all="1"; for ((n = 2; n <= N; n *= 2)); do all="$all, $n"; done
printf 'mpi:\n  ranks: [%s]\n' "$all" > "$R/ranks_all.yaml"
printf 'mpi:\n  ranks: [%s]\n' "$(echo "$all" | sed 's/^1, //')" > "$R/ranks_multi.yaml"
printf 'mpi:\n  ranks: [2]\n' > "$R/ranks_pair.yaml"
printf 'mpi:\n  ranks: [%s]\n' "$N" > "$R/ranks_most.yaml"
phase() {  # phase <name> <ranks yaml> <backends> -- <jobs...>; SKIP="<name> ..." skips
    local name=$1 ranks=$2 backends=$3; shift 4
    [[ " ${SKIP:-} " == *" $name "* ]] && { echo "[phase $name] skipped" >> "$R/phases.txt"; return; }
    local t0=$(date +%s)
    echo "[phase $name] start $(date -u +%FT%TZ)" >> "$R/phases.txt"
    python3 workflow/scripts/mpi_sweep.py --configfile config/config.yaml \
        config/mpi_gpu.yaml "$HERE/$SELECT" "$RANKS/$ranks" --out "$R" \
        --backends $backends --jobs "$@" >> "$R/sweep.log" 2>&1
    echo "[phase $name] rc=$? wall_s=$(( $(date +%s) - t0 ))" >> "$R/phases.txt"
    pack
}
pack() { tar czf "$R.tgz.part" -C "$(dirname "$R")" "$(basename "$R")" && mv "$R.tgz.part" "$R.tgz"; }
RANKS=$R
phase link ranks_multi.yaml cupy-gpu -- peer_copy
phase p2p ranks_pair.yaml "cupy-gpu numba-gpu cuda_python-gpu" -- p2p
phase allreduce ranks_multi.yaml "cupy-gpu numba-gpu" -- allreduce
phase halo ranks_all.yaml cupy-gpu -- halo halo_overlap
phase selection ranks_most.yaml cupy-gpu -- device_selection
phase scaling ranks_all.yaml cupy-gpu -- reduction matmul monte_carlo_pi grad_avg
phase one_process ranks_all.yaml "cupy-gpu torch-gpu numba-gpu jax-gpu" -- multi_gpu
phase halo_numba ranks_all.yaml numba-gpu -- halo halo_overlap
# the direct path again with one GPU visible per rank, in a folder of its own (same keys)
R=$R/visible_one SELECT=visible_one.yaml
mkdir -p "$R"
phase visible_one ranks_pair.yaml cupy-gpu -- p2p
R=$(dirname "$R")
echo "[done] $(date -u +%FT%TZ)" >> "$R/phases.txt"
pack
