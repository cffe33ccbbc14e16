#!/bin/bash
# Nsight Compute profiles of the cells under 95 % of the copy ceiling in a default
# suite run on an H100 (each framework's best at 2^26), with PyTorch's Triton
# moving_average (under 95 % in earlier runs) and JAX's vector_add
# (at the ceiling) beside them; from the working tree's root on the GPU machine:
#   bash tools/ncu.sh   ->  $OUT/profiles.csv, $OUT/ncu_raw/, $OUT/ncu.log
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
C=()
while read -r cell; do [ -n "$cell" ] && C+=(--cell $cell); done <<'CELLS'
cuda_python nvrtc elementwise sigmoid float32
numba cuda_jit elementwise sigmoid float32
cupy raw_kernel elementwise sigmoid float32
cuda_python nvrtc_sliding moving_average default float32
numba cuda_jit_sliding moving_average default float32
numba cuda_jit_sliding moving_average default float64
cuda_python nvrtc_sliding moving_average default float64
cupy raw_kernel_sliding moving_average default float32
cupy raw_kernel_sliding moving_average default float64
torch triton moving_average default float32
numba cuda_jit reduction sumsq float32
numba cuda_jit vector_add default float32
numba cuda_jit vector_add default float64
cuda_python nvrtc vector_add default float32
numba cuda_jit elementwise hypot float32
numba cuda_jit elementwise rational float32
numba cuda_jit elementwise sigmoid float64
cuda_python nvrtc elementwise sigmoid float64
cuda_python nvrtc elementwise hypot float32
cuda_python nvrtc elementwise rational float32
jax jit vector_add default float32
CELLS
timeout "${NCU_LIMIT_S:-500}" python3 -m gpubench.ncu "${C[@]}" --out "$OUT/profiles.csv" \
  --raw "$OUT/ncu_raw" --commit "$(cat .devcfg/COMMIT)" > "$OUT/ncu.log" 2>&1
echo "rc=$?"; tail -n 25 "$OUT/ncu.log"
